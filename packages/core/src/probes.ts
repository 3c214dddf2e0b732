/**
 * @module probes
 * `/healthz`, `/readyz` and `/metrics`: what they answer, decided once for every HTTP listener the process opens
 * (the OTLP/HTTP listener and the query listener), so each role of a split deployment is probed and scraped the
 * same way. Each listener only writes the {@link ProbeResponse} out in its framework.
 *
 * A probe that cannot be answered fails towards "do not route here": a readiness check that throws answers 503
 * (not ready) and a metrics collection that fails answers 500, both as plain text without the error's own text.
 * `/healthz` and `/readyz` never need a token (kubelet probes carry none); `/metrics` asks the caller's
 * `authorizeMetrics` (the access gate's admin surface, docs/security.md) before anything is collected.
 */

/** The process-wide probe view. */
export interface Probes {
  /** `null` when ready; otherwise why not (e.g. "WAL replay in progress"). */
  notReadyReason(): string | null;
  /** Prometheus exposition text; `null` when Prometheus is disabled. */
  metricsText(): Promise<string | null>;
}

/** A refused `/metrics` request: answered 401 with the message and a `WWW-Authenticate` challenge. */
export interface ProbeRefusal {
  readonly message: string;
  readonly challenge: string;
}

/** Options of {@link answerProbe}. */
export interface ProbeOptions {
  /** `null` to serve `/metrics`, else why not (default: always served). */
  readonly authorizeMetrics?: () => ProbeRefusal | null;
}

/** One probe answer: always plain text. */
export interface ProbeResponse {
  readonly status: 200 | 401 | 404 | 405 | 500 | 503;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The paths {@link answerProbe} serves. */
export const PROBE_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

const TEXT = 'text/plain; charset=utf-8';
/** The content type Prometheus expects for its text exposition format. */
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

const text = (status: ProbeResponse['status'], body: string, extra: Record<string, string> = {}): ProbeResponse => ({
  status,
  headers: { 'content-type': TEXT, ...extra },
  body,
});

/**
 * Answers a probe request, or returns `null` when `path` (without the query string) is not a probe path.
 * Only GET and HEAD are served (405 with `Allow` otherwise); for HEAD the listener sends the headers only.
 * Never rejects.
 *
 * - `/healthz`: 200 `ok` while the process serves HTTP at all.
 * - `/readyz`: 200 `ready`, or 503 `not ready: <reason>`; 503 as well when the readiness check throws.
 * - `/metrics`: 401 when `authorizeMetrics` refuses, else 200 with the Prometheus text, 404 when Prometheus is
 *   disabled (`telemetry.prometheus: false`), 500 `metrics unavailable` when collecting them fails.
 */
export function answerProbe(
  method: string,
  path: string,
  probes: Probes,
  options: ProbeOptions = {},
): Promise<ProbeResponse> | null {
  if (!PROBE_PATHS.includes(path)) return null;
  if (method !== 'GET' && method !== 'HEAD') {
    return Promise.resolve(text(405, 'method not allowed: use GET\n', { allow: 'GET, HEAD' }));
  }
  if (path === '/healthz') return Promise.resolve(text(200, 'ok\n'));
  if (path === '/readyz') {
    let reason: string | null;
    try {
      reason = probes.notReadyReason();
    } catch {
      reason = 'the readiness check failed';
    }
    return Promise.resolve(reason === null ? text(200, 'ready\n') : text(503, `not ready: ${reason}\n`));
  }
  const refusal = options.authorizeMetrics?.() ?? null;
  if (refusal !== null)
    return Promise.resolve(text(401, `${refusal.message}\n`, { 'www-authenticate': refusal.challenge }));
  return Promise.resolve()
    .then(() => probes.metricsText())
    .then(
      (metrics): ProbeResponse =>
        metrics === null
          ? text(404, 'prometheus metrics are disabled\n')
          : { status: 200, headers: { 'content-type': PROMETHEUS_TEXT }, body: metrics },
      () => text(500, 'metrics unavailable\n'),
    );
}
