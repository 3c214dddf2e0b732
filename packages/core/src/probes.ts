/**
 * @module probes
 * What `/healthz`, `/readyz` and `/metrics` report. Served on every HTTP listener the process opens, so each role
 * of a split deployment can be probed and scraped; each listener implements the endpoints for its framework.
 */

/** The process-wide probe view. */
export interface Probes {
  /** `null` when ready; otherwise why not (e.g. "WAL replay in progress"). */
  notReadyReason(): string | null;
  /** Prometheus exposition text; `null` when Prometheus is disabled. */
  metricsText(): Promise<string | null>;
}
