/**
 * @module pull-metric-reader
 * A MetricReader that only collects on demand, for the `/metrics` handler. The SDK's PrometheusExporter is also a
 * pull reader but opens its own HTTP server; Sluice serves `/metrics` on its own listeners instead.
 */
import { MetricReader } from '@opentelemetry/sdk-metrics';

/** Collects when asked (`collect()`); nothing to flush or close. Temporality is the default, cumulative. */
export class PullMetricReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}

  protected override async onShutdown(): Promise<void> {}
}
