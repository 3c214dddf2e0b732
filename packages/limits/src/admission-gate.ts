/**
 * @module admission-gate
 * The concurrency limit (docs/design/query-governance.md): `maxConcurrent` permits, a bounded FIFO of `maxQueued`
 * waiters, and a queue timeout. Every decision is taken synchronously inside `acquire` — check and enqueue are one
 * step with no `await` between them — so a burst of arrivals can never overfill the queue, and the order is
 * strict arrival order (a stronger guarantee than "FIFO among waiters"). A released permit goes
 * straight to the oldest waiter, so a later arrival cannot overtake the queue.
 */

/** Why admission refused a query (all answer 503 without Retry-After). */
export type AdmitRejectionKind = 'query_queue_full' | 'query_queue_timeout' | 'cancelled';

/** An admission refusal, with the figure its message reports. */
export type AdmitRejected =
  | { readonly status: 'rejected'; readonly kind: 'query_queue_full'; readonly maxQueued: number }
  | { readonly status: 'rejected'; readonly kind: 'query_queue_timeout'; readonly waitedMs: number }
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
  /** Millisecond clock for `waitedMs`. Default `performance.now`. */
  readonly now?: () => number;
  /** Default the global `setTimeout`/`clearTimeout`. */
  readonly timers?: GateTimers;
}

/** One process-wide gate, shared by every query entry point. */
export interface AdmissionGate {
  /**
   * Asks for a permit: admitted at once when one is free; otherwise waits in the FIFO if a slot is free, until a
   * permit is handed over (`admitted`), the timeout passes (`query_queue_timeout`) or `signal` aborts
   * (`cancelled`); otherwise `query_queue_full` at once. Never rejects the promise.
   */
  acquire(signal?: AbortSignal): Promise<AdmitOutcome>;
  /** Queries waiting now. */
  queueDepth(): number;
  /** Permits held now. */
  inFlight(): number;
}

interface Waiter {
  readonly resolve: (outcome: AdmitOutcome) => void;
  readonly since: number;
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
  const now = options.now ?? (() => performance.now());
  const timers = options.timers ?? defaultTimers;
  const waiters: Waiter[] = [];
  let running = 0;

  const remove = (w: Waiter): boolean => {
    const i = waiters.indexOf(w);
    if (i < 0) return false;
    waiters.splice(i, 1);
    timers.clearTimeout(w.timer);
    if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
    return true;
  };

  const makePermit = (): Permit => {
    let released = false;
    return {
      get released() {
        return released;
      },
      release() {
        if (released) return;
        released = true;
        const next = waiters[0];
        if (next) {
          remove(next);
          next.resolve({ status: 'admitted', permit: makePermit() }); // the permit passes on; `running` is unchanged
        } else {
          running--;
        }
      },
    };
  };

  return {
    acquire(signal?: AbortSignal): Promise<AdmitOutcome> {
      if (signal?.aborted) return Promise.resolve({ status: 'rejected', kind: 'cancelled' });
      if (running < maxConcurrent && waiters.length === 0) {
        running++;
        return Promise.resolve({ status: 'admitted', permit: makePermit() });
      }
      if (waiters.length >= maxQueued) {
        return Promise.resolve({ status: 'rejected', kind: 'query_queue_full', maxQueued });
      }
      return new Promise<AdmitOutcome>((resolve) => {
        const w: Waiter = { resolve, since: now(), timer: undefined, signal, onAbort: undefined };
        waiters.push(w);
        w.timer = timers.setTimeout(() => {
          if (remove(w))
            resolve({ status: 'rejected', kind: 'query_queue_timeout', waitedMs: Math.max(0, now() - w.since) });
        }, queueTimeoutMs);
        if (signal) {
          w.onAbort = () => {
            if (remove(w)) resolve({ status: 'rejected', kind: 'cancelled' });
          };
          signal.addEventListener('abort', w.onAbort, { once: true });
        }
      });
    },
    queueDepth: () => waiters.length,
    inFlight: () => running,
  };
}

function checkInt(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be an integer ≥ ${min}, got ${String(value)}`);
}
