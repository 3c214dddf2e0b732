/**
 * @module otel-sdk
 * Real OpenTelemetry JS SDK clients for the end-to-end tests: log records built by the SDK itself and sent by
 * the three official OTLP log exporters (HTTP/JSON, HTTP/protobuf, gRPC), with or without gzip.
 */
import { Metadata } from '@grpc/grpc-js';
import { context, trace, TraceFlags, type HrTime } from '@opentelemetry/api';
import type { AnyValue, SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as HttpJsonExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as HttpProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as GrpcExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
  type LogRecordExporter,
  type ReadableLogRecord,
} from '@opentelemetry/sdk-logs';

/** The three official exporters. */
export type ExporterKind = 'http-json' | 'http-proto' | 'grpc';

/** One log record a test emits (and later expects to find in Parquet). */
export interface TestLog {
  readonly body: AnyValue;
  readonly severityNumber: number;
  readonly severityText: string;
  readonly attributes: Readonly<Record<string, AnyValue>>;
  /** ns since the epoch */
  readonly timeNs: bigint;
  readonly observedNs: bigint;
  /** 32 hex chars, or null for no trace context */
  readonly traceId: string | null;
  readonly spanId: string | null;
  readonly eventName?: string;
}

/** Resource and scope for a batch of test logs. */
export interface TestSource {
  readonly resource: Readonly<Record<string, string | number | boolean>>;
  readonly scopeName: string;
  readonly scopeVersion: string;
}

function hrTime(ns: bigint): HrTime {
  return [Number(ns / 1_000_000_000n), Number(ns % 1_000_000_000n)];
}

/** Builds SDK `ReadableLogRecord`s by emitting through a real LoggerProvider into an in-memory exporter. */
export async function buildSdkRecords(source: TestSource, logs: readonly TestLog[]): Promise<ReadableLogRecord[]> {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes(source.resource),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  });
  const logger = provider.getLogger(source.scopeName, source.scopeVersion);
  for (const log of logs) {
    const ctx =
      log.traceId !== null && log.spanId !== null
        ? trace.setSpanContext(context.active(), {
            traceId: log.traceId,
            spanId: log.spanId,
            traceFlags: TraceFlags.SAMPLED,
          })
        : context.active();
    logger.emit({
      body: log.body,
      severityNumber: log.severityNumber as SeverityNumber,
      severityText: log.severityText,
      attributes: log.attributes,
      timestamp: hrTime(log.timeNs),
      observedTimestamp: hrTime(log.observedNs),
      context: ctx,
      ...(log.eventName !== undefined ? { eventName: log.eventName } : {}),
    });
  }
  await provider.forceFlush();
  const records = memory.getFinishedLogRecords().slice();
  await provider.shutdown();
  return records;
}

/** Creates a real exporter pointed at a running gateway. */
export function createExporter(
  kind: ExporterKind,
  target: { httpUrl: string; grpcAddress: string },
  options: {
    tenant?: string;
    gzip: boolean;
    tenantHeader?: string;
    /** Further headers (gRPC: metadata, keys lowercased), e.g. `Authorization: Bearer …`. */
    headers?: Readonly<Record<string, string>>;
  },
): LogRecordExporter {
  const header = options.tenantHeader ?? 'X-Sluice-Tenant';
  const compression = options.gzip ? ('gzip' as never) : ('none' as never);
  if (kind === 'grpc') {
    const metadata = new Metadata();
    if (options.tenant !== undefined) metadata.set(header.toLowerCase(), options.tenant);
    for (const [k, v] of Object.entries(options.headers ?? {})) metadata.set(k.toLowerCase(), v);
    return new GrpcExporter({ url: `http://${target.grpcAddress}`, metadata, compression, timeoutMillis: 20_000 });
  }
  const config = {
    url: `${target.httpUrl}/v1/logs`,
    headers: { ...(options.tenant !== undefined ? { [header]: options.tenant } : {}), ...options.headers },
    compression,
    timeoutMillis: 20_000,
  };
  return kind === 'http-json' ? new HttpJsonExporter(config) : new HttpProtoExporter(config);
}

/** Exports one batch and resolves only when the gateway acknowledged it (rejects with the exporter's error otherwise). */
export function exportBatch(exporter: LogRecordExporter, records: ReadableLogRecord[]): Promise<void> {
  return new Promise((resolve, reject) => {
    exporter.export(records, (result) => {
      if (result.code === 0) resolve();
      else reject(result.error ?? new Error('export failed'));
    });
  });
}
