/**
 * @module create-telemetry
 * Builds the process's MeterProvider: a pull reader for Prometheus text (served by the gateway on its own HTTP
 * listeners) and, when an OTLP endpoint is configured, a periodic OTLP/HTTP push of the same metrics.
 * Config keys: `telemetry.prometheus`, `telemetry.otlp_endpoint` (docs/configuration.md).
 */
import type { Meter } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { IMetricReader } from '@opentelemetry/sdk-metrics';
import { installDiagBridge } from './diag-bridge.js';
import type { Logger } from './logger.js';
import { PullMetricReader } from './pull-metric-reader.js';

/** Name (instrumentation scope) of the meter every Sluice instrument is created on. */
export const SLUICE_METER_NAME = 'sluice';

/** Push interval when `otlpIntervalMs` is not given: the OTel SDK default, 60 s. */
export const DEFAULT_OTLP_INTERVAL_MS = 60_000;

/** Upper bound of one OTLP export attempt (the SDK default), shortened to the interval when that is smaller. */
const MAX_OTLP_EXPORT_TIMEOUT_MS = 30_000;

/** `Content-Type` of {@link Telemetry.metricsText}'s output: Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Options of {@link createTelemetry}. */
export interface TelemetryOptions {
  /** `service.name` on the resource (and Prometheus `target_info`). */
  readonly serviceName: string;
  /** `service.version` on the resource, when known. */
  readonly serviceVersion?: string;
  /**
   * Base URL of an OTLP/HTTP receiver (`telemetry.otlp_endpoint`), e.g. `http://collector:4318`; metrics are
   * POSTed as OTLP/JSON to `<endpoint>/v1/metrics`. Null or absent: no push.
   */
  readonly otlpEndpoint?: string | null;
  /** Push interval in milliseconds. Default {@link DEFAULT_OTLP_INTERVAL_MS}. */
  readonly otlpIntervalMs?: number;
  /** Whether {@link Telemetry.metricsText} is available (`telemetry.prometheus`). */
  readonly prometheus: boolean;
  /**
   * Receives the OpenTelemetry SDK's warnings and errors (e.g. a failed OTLP push) until shutdown. Installs a
   * process-global `diag` logger, so pass it for the process's one Telemetry only. Absent: the SDK stays silent.
   */
  readonly logger?: Logger;
}

/** The process's metrics pipeline. */
export interface Telemetry {
  /** The meter every instrument is created on; pass it to `createIngestMetrics` and friends. */
  readonly meter: Meter;
  /** True when {@link Telemetry.metricsText} may be called (the gateway then serves `/metrics`). */
  readonly prometheusEnabled: boolean;
  /** Where metrics are pushed (`<endpoint>/v1/metrics`), or null when push is off. */
  readonly otlpMetricsUrl: string | null;
  /**
   * Collects every instrument now and renders Prometheus text (content type {@link PROMETHEUS_CONTENT_TYPE}).
   * Names are the registry names with `.` → `_`, and counters get `_total`.
   * @throws Error (rejects) when Prometheus is disabled or after {@link Telemetry.shutdown}.
   */
  metricsText(): Promise<string>;
  /** Pushes pending metrics over OTLP now (no-op without an endpoint). */
  forceFlush(): Promise<void>;
  /**
   * Pushes a final OTLP export and stops all readers. Idempotent: later calls return the first call's promise.
   * A failed final export does not reject; it is reported to {@link TelemetryOptions.logger} when one is given.
   */
  shutdown(): Promise<void>;
}

/**
 * Creates the metrics pipeline. It opens no socket of its own: Prometheus text is rendered on demand for the
 * gateway's `/metrics` routes, and OTLP push is an outbound client.
 * @throws TypeError when `otlpEndpoint` is not an http(s) URL; RangeError when `otlpIntervalMs` is not a
 *   positive integer. Both are configuration bugs that `@sluice/config` should have caught.
 * @example
 * const telemetry = createTelemetry({ serviceName: 'sluice', otlpEndpoint: null, prometheus: true });
 * const ingest = createIngestMetrics(telemetry.meter);
 * const body = await telemetry.metricsText();
 */
export function createTelemetry(options: TelemetryOptions): Telemetry {
  const readers: IMetricReader[] = [];
  // Validate everything before installing the global diag bridge, so a throw leaves no global state behind.
  const pull = options.prometheus ? new PullMetricReader() : null;
  if (pull !== null) readers.push(pull);

  const otlpMetricsUrl = options.otlpEndpoint ? otlpMetricsUrlOf(options.otlpEndpoint) : null;
  if (otlpMetricsUrl !== null) {
    const interval = options.otlpIntervalMs ?? DEFAULT_OTLP_INTERVAL_MS;
    if (!Number.isSafeInteger(interval) || interval <= 0) {
      throw new RangeError(`otlpIntervalMs must be a positive integer of milliseconds, got ${interval}`);
    }
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: otlpMetricsUrl }),
        exportIntervalMillis: interval,
        exportTimeoutMillis: Math.min(interval, MAX_OTLP_EXPORT_TIMEOUT_MS),
      }),
    );
  }

  const serviceAttributes: Record<string, string> = { 'service.name': options.serviceName };
  if (options.serviceVersion !== undefined) serviceAttributes['service.version'] = options.serviceVersion;
  const provider = new MeterProvider({
    resource: defaultResource().merge(resourceFromAttributes(serviceAttributes)),
    readers,
  });
  const serializer = new PrometheusSerializer();
  const removeDiagBridge = options.logger !== undefined ? installDiagBridge(options.logger) : () => undefined;
  let shutdownPromise: Promise<void> | null = null;

  return {
    meter: provider.getMeter(SLUICE_METER_NAME),
    prometheusEnabled: pull !== null,
    otlpMetricsUrl,
    async metricsText(): Promise<string> {
      if (pull === null) throw new Error('Prometheus metrics are disabled (telemetry.prometheus: false)');
      if (shutdownPromise !== null) throw new Error('telemetry is shut down');
      // Collection errors are per-producer and partial; render what was collected rather than fail the scrape.
      const { resourceMetrics } = await pull.collect();
      return serializer.serialize(resourceMetrics);
    },
    forceFlush: () => provider.forceFlush(),
    shutdown(): Promise<void> {
      shutdownPromise ??= provider.shutdown().finally(removeDiagBridge);
      return shutdownPromise;
    },
  };
}

/** `<endpoint>/v1/metrics`, per the OTLP/HTTP spec's signal path on a base endpoint. */
function otlpMetricsUrlOf(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TypeError(`otlpEndpoint is not a URL: ${JSON.stringify(endpoint)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`otlpEndpoint must be an http(s) URL, got ${JSON.stringify(endpoint)}`);
  }
  return `${endpoint.replace(/\/+$/, '')}/v1/metrics`;
}
