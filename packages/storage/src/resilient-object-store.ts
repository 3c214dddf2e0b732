/**
 * @module resilient-object-store
 * Bounds every call of an {@link ObjectStore}: each attempt has a request timeout, transient failures (see
 * `transient-failure.ts`) are retried a bounded number of times after a jittered exponential back-off, and running
 * out of attempts is a {@link StorageUnavailableError}. No call can hang: an attempt is raced against its timeout,
 * so even a backend that ignores abort signals lets go of its caller.
 *
 * Two operations need more than "try again":
 * - `putConditional`: an attempt that timed out or lost its connection may still have landed. A retry then sees
 *   its own write as a `conflict`; the wrapper reads the object back and answers `ok` if it holds our bytes.
 * - `list` is a stream of pages: each page fetch is bounded, and after a transient failure the listing restarts
 *   after the last entry already handed out, so nothing is lost or repeated.
 */
import { onAbort } from './abort-fanout.js';
import type {
  CallOptions,
  ConditionalPutResult,
  ListEntry,
  ListOptions,
  ObjectHead,
  ObjectStore,
  PutCondition,
  PutOptions,
  VersionedObject,
} from './object-store.js';
import { compareKeys } from './object-store.js';
import type { StorageOperation, UnavailableReason } from './storage-errors.js';
import { StorageUnavailableError } from './storage-errors.js';
import { transientReason } from './transient-failure.js';

/** The timer functions the wrapper waits with (tests pass paused ones). */
export interface RetryTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** A transient failure that is about to be retried (a query uses it to tell a storage outage from a slow query at its deadline). */
export interface StorageRetryEvent {
  readonly operation: StorageOperation;
  /** The object key, or the listed prefix. */
  readonly key: string | null;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly reason: UnavailableReason;
  /** The back-off before the next attempt, in ms. */
  readonly delayMs: number;
}

/** How {@link createResilientObjectStore} bounds calls. */
export interface ResiliencePolicy {
  /** Longest one attempt may take, from the call to its last byte, in ms; 0 = no bound. */
  readonly requestTimeoutMs: number;
  /** Attempts per call (at least 1; 1 = never retry). */
  readonly maxAttempts: number;
  /** Back-off cap before the second attempt, in ms; it doubles per attempt. */
  readonly retryBaseMs: number;
  /** Largest back-off cap, in ms. The wait is a uniform draw below the cap ("full jitter"). */
  readonly retryMaxMs: number;
  /** Uniform in [0, 1) (default `Math.random`). */
  readonly random?: () => number;
  /** Default: the global `setTimeout`/`clearTimeout`. */
  readonly timers?: RetryTimers;
  /** Called before each back-off. It must not throw; if it does, the error is ignored. */
  readonly onRetry?: (event: StorageRetryEvent) => void;
}

/** A bounded store. It has `close()` exactly when the store it wraps has one (the S3 store's socket release). */
export interface ResilientObjectStore extends ObjectStore {
  close?(): void;
}

const GLOBAL_TIMERS: RetryTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** The rejection of an attempt that outlived `requestTimeoutMs` (the `cause` of the resulting unavailable error). */
class AttemptTimeoutError extends Error {
  override readonly name = 'AttemptTimeoutError';
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

function entryKey(e: ListEntry): string {
  return e.kind === 'object' ? e.key : e.prefix;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

function hasClose(store: ObjectStore): store is ObjectStore & { close(): void } {
  return 'close' in store && typeof store.close === 'function';
}

class ResilientStore implements ResilientObjectStore {
  declare readonly close?: () => void;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly random: () => number;
  private readonly timers: RetryTimers;
  private readonly onRetry: ((event: StorageRetryEvent) => void) | undefined;

  constructor(
    private readonly inner: ObjectStore,
    policy: ResiliencePolicy,
  ) {
    const { requestTimeoutMs, maxAttempts, retryBaseMs, retryMaxMs } = policy;
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
      throw new RangeError(`maxAttempts must be an integer of at least 1, got ${maxAttempts}`);
    for (const [name, v] of [
      ['requestTimeoutMs', requestTimeoutMs],
      ['retryBaseMs', retryBaseMs],
      ['retryMaxMs', retryMaxMs],
    ] as const)
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be a non-negative number, got ${v}`);
    this.timeoutMs = requestTimeoutMs;
    this.maxAttempts = maxAttempts;
    this.baseMs = retryBaseMs;
    this.maxMs = retryMaxMs;
    this.random = policy.random ?? Math.random;
    this.timers = policy.timers ?? GLOBAL_TIMERS;
    this.onRetry = policy.onRetry;
    if (hasClose(inner)) Object.defineProperty(this, 'close', { value: () => inner.close(), enumerable: true });
  }

  put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<void> {
    return this.call('put', key, opts?.signal, (signal) => this.inner.put(key, bytes, { signal }));
  }

  async putConditional(
    key: string,
    bytes: Uint8Array,
    condition: PutCondition,
    opts?: PutOptions,
  ): Promise<ConditionalPutResult> {
    let ambiguous = false;
    const result = await this.call(
      'put_conditional',
      key,
      opts?.signal,
      (signal) => this.inner.putConditional(key, bytes, condition, { signal }),
      () => {
        // Any transient failure may hide a write that landed (a timeout or reset after the server committed; S3
        // documents a 500 as indeterminate), so each one makes a later conflict worth checking.
        ambiguous = true;
      },
    );
    if (result.status === 'ok' || !ambiguous) return result;
    // The conflict may be our own earlier attempt. Our bytes being the current version means it landed (or an
    // identical version did, which is the same state); anything else is a real conflict. This does not tell
    // "never landed" from "landed and already replaced": both are answered `conflict`.
    const current = await this.call('put_conditional', key, opts?.signal, (signal) =>
      this.inner.getVersioned(key, { signal }),
    );
    return current !== null && sameBytes(current.bytes, bytes) ? { status: 'ok', etag: current.etag } : result;
  }

  get(key: string, opts?: CallOptions): Promise<Uint8Array | null> {
    return this.call('get', key, opts?.signal, (signal) => this.inner.get(key, { signal }));
  }

  getVersioned(key: string, opts?: CallOptions): Promise<VersionedObject | null> {
    return this.call('get', key, opts?.signal, (signal) => this.inner.getVersioned(key, { signal }));
  }

  getRange(key: string, start: number, endExclusive: number, opts?: CallOptions): Promise<Uint8Array> {
    return this.call('get_range', key, opts?.signal, (signal) =>
      this.inner.getRange(key, start, endExclusive, { signal }),
    );
  }

  head(key: string, opts?: CallOptions): Promise<ObjectHead | null> {
    return this.call('head', key, opts?.signal, (signal) => this.inner.head(key, { signal }));
  }

  delete(key: string, opts?: CallOptions): Promise<void> {
    return this.call('delete', key, opts?.signal, (signal) => this.inner.delete(key, { signal }));
  }

  list(options: ListOptions): AsyncIterable<ListEntry> {
    return { [Symbol.asyncIterator]: () => this.listEntries(options) };
  }

  /**
   * Runs `run` until it succeeds, fails for good, or has failed transiently `maxAttempts` times. `onTransient`
   * hears of every transient failure (including the last).
   */
  private async call<T>(
    operation: StorageOperation,
    key: string | null,
    caller: AbortSignal | undefined,
    run: (signal: AbortSignal) => Promise<T>,
    onTransient?: (reason: UnavailableReason) => void,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      caller?.throwIfAborted();
      try {
        return await this.bounded(run, caller, new AbortController());
      } catch (e) {
        const reason = this.failureReason(e, caller);
        onTransient?.(reason);
        if (attempt >= this.maxAttempts)
          throw new StorageUnavailableError(operation, key, attempt, reason, { cause: e });
        await this.backOff(operation, key, attempt, reason, caller);
      }
    }
  }

  /**
   * Classifies a failed attempt: rethrows the caller's abort and every non-transient error as they are, and
   * returns the reason of a transient one.
   */
  private failureReason(e: unknown, caller: AbortSignal | undefined): UnavailableReason {
    // The caller gave up: that is their answer, not an unavailable store, and not worth another attempt.
    caller?.throwIfAborted();
    const reason = e instanceof AttemptTimeoutError ? 'timeout' : transientReason(e);
    if (reason === null) throw e;
    return reason;
  }

  /**
   * One attempt: `work` gets `controller`'s signal, which aborts when the caller's does or the attempt times out.
   * The returned promise settles at the first of: `work` settling, the timeout, the caller's abort. So it settles
   * in bounded time even when `work` ignores its signal; a late outcome of `work` is dropped.
   */
  private bounded<T>(
    work: (signal: AbortSignal) => Promise<T>,
    caller: AbortSignal | undefined,
    controller: AbortController,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let timer: unknown;
      let unsubscribe = (): void => undefined;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        if (timer !== undefined) this.timers.clearTimeout(timer);
        unsubscribe();
        return true;
      };
      const onCallerAbort = (): void => {
        if (!finish()) return;
        reject(caller?.reason);
        controller.abort(caller?.reason);
      };
      if (caller?.aborted === true) {
        onCallerAbort();
        return;
      }
      if (caller !== undefined) unsubscribe = onAbort(caller, onCallerAbort);
      if (this.timeoutMs > 0) {
        timer = this.timers.setTimeout(() => {
          if (!finish()) return;
          const timeout = new AttemptTimeoutError(this.timeoutMs);
          reject(timeout);
          controller.abort(timeout);
        }, this.timeoutMs);
      }
      let pending: Promise<T>;
      try {
        pending = work(controller.signal);
      } catch (e) {
        pending = Promise.reject(e);
      }
      pending.then(
        (value) => {
          if (finish()) resolve(value);
        },
        (e: unknown) => {
          if (finish()) reject(e);
        },
      );
    });
  }

  /** Reports the retry, then waits `random() × min(retryMaxMs, retryBaseMs × 2^(attempt−1))`, abortable by the caller. */
  private backOff(
    operation: StorageOperation,
    key: string | null,
    attempt: number,
    reason: UnavailableReason,
    caller: AbortSignal | undefined,
  ): Promise<void> {
    const cap = Math.min(this.maxMs, this.baseMs * 2 ** (attempt - 1));
    const delayMs = Math.min(cap, Math.max(0, Math.floor(this.random() * cap)));
    try {
      this.onRetry?.({ operation, key, attempt, reason, delayMs });
    } catch {
      // A failing metrics hook must not turn a recoverable storage call into a failed one.
    }
    return new Promise<void>((resolve, reject) => {
      if (caller?.aborted === true) {
        reject(caller.reason);
        return;
      }
      const timer = this.timers.setTimeout(() => {
        unsubscribe();
        resolve();
      }, delayMs);
      const unsubscribe =
        caller !== undefined
          ? onAbort(caller, () => {
              this.timers.clearTimeout(timer);
              reject(caller.reason);
            })
          : () => undefined;
    });
  }

  /**
   * The listing, one bounded page fetch (inner `next()`) at a time. After a transient failure the inner listing
   * is abandoned and restarted after the last entry already yielded; entries at or before it (a rolled-up prefix
   * comes back when the restart point lies inside it) are skipped, so nothing is lost or repeated.
   */
  private async *listEntries(options: ListOptions): AsyncGenerator<ListEntry> {
    const caller = options.signal;
    let last: string | undefined;
    let failures = 0;
    for (;;) {
      caller?.throwIfAborted();
      const listing = new AbortController();
      const startAfter = last ?? options.startAfter;
      const restarted = this.inner.list({
        ...options,
        ...(startAfter !== undefined ? { startAfter } : {}),
        signal: listing.signal,
      });
      const it = restarted[Symbol.asyncIterator]();
      // Whether the inner listing is idle between entries (so `return()` stops it at once) rather than finished,
      // failed, or still stuck in a fetch we gave up on (whose `return()` would wait for that fetch).
      let idle = true;
      try {
        for (;;) {
          idle = false;
          let step: IteratorResult<ListEntry>;
          try {
            step = await this.bounded(() => it.next(), caller, listing);
          } catch (e) {
            const reason = this.failureReason(e, caller);
            failures++;
            if (failures >= this.maxAttempts)
              throw new StorageUnavailableError('list', options.prefix, failures, reason, { cause: e });
            // A timed-out fetch was aborted through `listing`; a failed one ended its listing.
            await this.backOff('list', options.prefix, failures, reason, caller);
            break;
          }
          failures = 0;
          if (step.done === true) return;
          idle = true;
          const k = entryKey(step.value);
          if (last !== undefined && compareKeys(k, last) <= 0) continue;
          last = k;
          yield step.value;
        }
      } finally {
        // The consumer stopped early: let the inner listing stop fetching further pages.
        if (idle) await it.return?.(undefined);
      }
    }
  }
}

/**
 * Wraps `inner` so every call is bounded by `policy` (see the module doc). Non-transient errors pass through
 * unchanged, a caller's abort rejects at once with the caller's reason, and running out of attempts rejects with
 * a {@link StorageUnavailableError}.
 *
 * @example
 * const store = createResilientObjectStore(createS3ObjectStore(s3Options), {
 *   requestTimeoutMs: 10_000, maxAttempts: 3, retryBaseMs: 100, retryMaxMs: 2_000,
 *   onRetry: (e) => retries.add(1, { operation: e.operation, reason: e.reason }),
 * });
 */
export function createResilientObjectStore(inner: ObjectStore, policy: ResiliencePolicy): ResilientObjectStore {
  return new ResilientStore(inner, policy);
}
