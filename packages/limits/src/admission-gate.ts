/**
 * @module admission-gate
 * The concurrency limit (docs/design/query-governance.md): `maxConcurrent` permits, a bounded FIFO of `maxQueued`
 * waiters, and a queue timeout. Every decision is taken synchronously inside `acquire` — check and enqueue are one
 * step with no `await` between them — so a burst of arrivals can never overfill the queue, and the order is
 * strict arrival order (a stronger guarantee than "FIFO among waiters"). A released permit goes
 * straight to the oldest waiter, so a later arrival cannot overtake the queue.
 *
 * Per-tenant share: each tenant's running plus queued queries are counted, and an arrival whose tenant already has
 * `maxPerTenant` of them is refused before the queue is considered, so one tenant cannot fill the queue that every
 * tenant shares.
 */

/** Why admission refused a query (all answer 503 without Retry-After). */
export type AdmitRejectionKind = 'query_queue_full' | 'query_queue_timeout' | 'query_tenant_busy' | 'cancelled';

/** An admission refusal, with the figures its message reports. */
export type AdmitRejected =
  | { readonly status: 'rejected'; readonly kind: 'query_queue_full'; readonly maxQueued: number }
  | {
      readonly status: 'rejected';
      readonly kind: 'query_queue_timeout';
      readonly waitedMs: number;
      /** `queue_timeout_ms`. */
      readonly queueTimeoutMs: number;
    }
  | { readonly status: 'rejected'; readonly kind: 'query_tenant_busy'; readonly maxPerTenant: number }
  | { readonly status: 'rejected'; readonly kind: 'cancelled' };

/** The outcome of {@link AdmissionGate.acquire}. */
export type AdmitOutcome = { readonly status: 'admitted'; readonly permit: Permit } | AdmitRejected;

/** The right to run one query. Hold it until the response has been sent or the client disconnects. */
export interface Permit {
  /** Returns the permit (to the oldest waiter, if any). Idempotent. */
  release(): void;
  /** True once released. */
  readonly released: boolean;
}

/** Timer functions (injectable so tests run on paused time). */
export interface GateTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of {@link createAdmissionGate}; the keys mirror `querier.limits.*`. */
export interface AdmissionGateOptions {
  /** `max_concurrent_queries`: integer ≥ 1. */
  readonly maxConcurrent: number;
  /** `max_queued_queries`: integer ≥ 0 (0: at capacity, reject at once). */
  readonly maxQueued: number;
  /** `queue_timeout_ms`: integer ≥ 1. */
  readonly queueTimeoutMs: number;
  /**
   * `max_concurrent_queries_per_tenant`: integer ≥ 1, the most queries one tenant may have running and queued
   * together. Absent: no per-tenant cap (loads are still counted for {@link AdmissionGate.tenantLoad}).
   */
  readonly maxPerTenant?: number;
  /** Millisecond clock for `waitedMs`. Default `performance.now`. */
  readonly now?: () => number;
  /** Default the global `setTimeout`/`clearTimeout`. */
  readonly timers?: GateTimers;
}

/** One process-wide gate, shared by every query entry point. */
export interface AdmissionGate {
  /**
   * Asks for a permit on behalf of `tenant`: `query_tenant_busy` at once when that tenant already has
   * `maxPerTenant` queries running or queued; else admitted at once when a permit is free; otherwise waits in the
   * FIFO if a slot is free, until a permit is handed over (`admitted`), the timeout passes (`query_queue_timeout`)
   * or `signal` aborts (`cancelled`); otherwise `query_queue_full` at once. Without `tenant` the query counts
   * against no tenant. Never rejects the promise.
   */
  acquire(signal?: AbortSignal, tenant?: string): Promise<AdmitOutcome>;
  /** Queries waiting now. */
  queueDepth(): number;
  /** Permits held now. */
  inFlight(): number;
  /** Queries `tenant` has running or queued now (0 for a tenant never seen). */
  tenantLoad(tenant: string): number;
  /**
   * Whether {@link AdmissionGate.acquire} for `tenant` would admit at once now: a permit is free, nobody is
   * queued, and the tenant is under its share. A caller with another way in (the querier's light lane) uses it
   * to avoid waiting here, or being refused here, when it need not.
   */
  admitsAtOnce(tenant?: string): boolean;
}

interface Waiter {
  readonly resolve: (outcome: AdmitOutcome) => void;
  readonly since: number;
  readonly tenant: string | undefined;
  timer: unknown;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

const defaultTimers: GateTimers = {
  setTimeout: (cb, ms) => setTimeout(cb, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/**
 * Creates a gate.
 * @throws RangeError on an option outside its documented range (configuration validation happens earlier; this is
 * a wiring bug).
 * @example
 * const gate = createAdmissionGate({ maxConcurrent: 4, maxQueued: 16, queueTimeoutMs: 10_000 });
 * const a = await gate.acquire(request.signal);
 * if (a.status === 'rejected') return reject(a.kind);
 * try { await run(); } finally { a.permit.release(); }
 */
export function createAdmissionGate(options: AdmissionGateOptions): AdmissionGate {
  const { maxConcurrent, maxQueued, queueTimeoutMs } = options;
  checkInt('maxConcurrent', maxConcurrent, 1);
  checkInt('maxQueued', maxQueued, 0);
  checkInt('queueTimeoutMs', queueTimeoutMs, 1);
  const { maxPerTenant } = options;
  if (maxPerTenant !== undefined) checkInt('maxPerTenant', maxPerTenant, 1);
  const now = options.now ?? (() => performance.now());
  const timers = options.timers ?? defaultTimers;
  const waiters: Waiter[] = [];
  let running = 0;
  // Running + queued per tenant; a tenant at 0 is deleted so the map holds only tenants with live queries.
  const loads = new Map<string, number>();

  const count = (tenant: string | undefined, delta: 1 | -1): void => {
    if (tenant === undefined) return;
    const load = (loads.get(tenant) ?? 0) + delta;
    if (load > 0) loads.set(tenant, load);
    else loads.delete(tenant);
  };

  // Leaves the queue; the caller settles the tenant count (a handover keeps it, a timeout or cancel drops it).
  const remove = (w: Waiter): boolean => {
    const i = waiters.indexOf(w);
    if (i < 0) return false;
    waiters.splice(i, 1);
    timers.clearTimeout(w.timer);
    if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
    return true;
  };

  const makePermit = (tenant: string | undefined): Permit => {
    let released = false;
    return {
      get released() {
        return released;
      },
      release() {
        if (released) return;
        released = true;
        count(tenant, -1);
        const next = waiters[0];
        if (next) {
          // The permit passes on; `running` is unchanged and the waiter's tenant already counts it.
          remove(next);
          next.resolve({ status: 'admitted', permit: makePermit(next.tenant) });
        } else {
          running--;
        }
      },
    };
  };

  return {
    acquire(signal?: AbortSignal, tenant?: string): Promise<AdmitOutcome> {
      if (signal?.aborted) return Promise.resolve({ status: 'rejected', kind: 'cancelled' });
      if (tenant !== undefined && maxPerTenant !== undefined && (loads.get(tenant) ?? 0) >= maxPerTenant) {
        return Promise.resolve({ status: 'rejected', kind: 'query_tenant_busy', maxPerTenant });
      }
      if (running < maxConcurrent && waiters.length === 0) {
        running++;
        count(tenant, 1);
        return Promise.resolve({ status: 'admitted', permit: makePermit(tenant) });
      }
      if (waiters.length >= maxQueued) {
        return Promise.resolve({ status: 'rejected', kind: 'query_queue_full', maxQueued });
      }
      count(tenant, 1);
      return new Promise<AdmitOutcome>((resolve) => {
        const w: Waiter = { resolve, since: now(), tenant, timer: undefined, signal, onAbort: undefined };
        waiters.push(w);
        w.timer = timers.setTimeout(() => {
          if (!remove(w)) return;
          count(tenant, -1);
          resolve({
            status: 'rejected',
            kind: 'query_queue_timeout',
            waitedMs: Math.max(0, now() - w.since),
            queueTimeoutMs,
          });
        }, queueTimeoutMs);
        if (signal) {
          w.onAbort = () => {
            if (!remove(w)) return;
            count(tenant, -1);
            resolve({ status: 'rejected', kind: 'cancelled' });
          };
          signal.addEventListener('abort', w.onAbort, { once: true });
        }
      });
    },
    queueDepth: () => waiters.length,
    inFlight: () => running,
    tenantLoad: (tenant) => loads.get(tenant) ?? 0,
    admitsAtOnce: (tenant) =>
      running < maxConcurrent &&
      waiters.length === 0 &&
      (tenant === undefined || maxPerTenant === undefined || (loads.get(tenant) ?? 0) < maxPerTenant),
  };
}

function checkInt(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer ≥ ${min}, got ${String(value)}`);
}
