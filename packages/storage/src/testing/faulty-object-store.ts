/**
 * @module testing/faulty-object-store
 * An {@link ObjectStore} wrapper that fails on command, for testing what callers do when storage is slow, down or
 * flaky: programmed faults apply per operation (optionally per key, optionally to the next N calls), and every
 * call is logged. Faults imitate what the S3 store really throws, so the resilient wrapper classifies them as it
 * would in production. For `list`, each `next()` of a listing's iterator (one entry, or one page fetch) is a call.
 */
import type {
  CallOptions,
  ConditionalPutResult,
  ListEntry,
  ListOptions,
  ObjectStore,
  PutOptions,
} from '../object-store.js';
import { TruncatedBodyError } from '../object-store.js';
import type { StorageOperation } from '../storage-errors.js';

/**
 * What a faulty call does:
 * - `'hang'`: never settles, unless the call's signal aborts (then it rejects with the signal's reason);
 * - `{ delayMs }`: waits (abortable by the call's signal), then calls the inner store;
 * - `'server_error'`: rejects like an S3 503 (`InternalError`, `$metadata.httpStatusCode` 503);
 * - `'reset'`: rejects like a reset connection (`ECONNRESET`, "socket hang up") without calling the inner store;
 * - `'lost_reply'`: calls the inner store, then rejects like `'reset'`: the request landed, its answer did not;
 * - `'truncated'`: rejects with a {@link TruncatedBodyError}.
 */
export type Fault = 'hang' | { readonly delayMs: number } | 'server_error' | 'reset' | 'lost_reply' | 'truncated';

/** Which calls a programmed fault applies to. */
export interface FaultScope {
  /** Only calls whose key (for `list`: prefix) satisfies this. */
  readonly key?: (key: string) => boolean;
  /** Let this many matching calls through before the fault starts (default 0). */
  readonly skip?: number;
  /** Only this many matching calls (default: all of them). */
  readonly times?: number;
}

/** One call the faulty store received. */
export interface FaultyCall {
  readonly operation: StorageOperation;
  /** The object key, or the listed prefix. */
  readonly key: string;
}

/** Programs faults and reads the call log. */
export interface FaultController {
  /** Makes matching calls of `operation` fail with `fault`. Earlier programmed faults take precedence. */
  inject(operation: StorageOperation, fault: Fault, scope?: FaultScope): void;
  /** Removes every programmed fault. */
  clear(): void;
  /** Every call so far, in order (faulty or not). */
  readonly calls: readonly FaultyCall[];
  /** The calls of one operation. */
  callsOf(operation: StorageOperation): FaultyCall[];
}

interface Rule {
  readonly operation: StorageOperation;
  readonly fault: Fault;
  readonly key: ((key: string) => boolean) | undefined;
  skip: number;
  remaining: number;
}

/** The error the S3 SDK throws for a 503 answer (as far as callers can see it). */
function serverError(): Error {
  return Object.assign(new Error('We encountered an internal error. Please try again.'), {
    name: 'InternalError',
    $metadata: { httpStatusCode: 503 },
  });
}

/** The error Node throws when the server resets the connection mid-request. */
function resetError(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

function abortable(signal: AbortSignal | undefined, ms: number | null): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const timer = ms === null ? undefined : setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }
    function onAbort(): void {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Wraps `inner`; programme faults through the returned `faults`.
 *
 * @example
 * const { store, faults } = createFaultyObjectStore(createLocalObjectStore({ root }));
 * faults.inject('get_range', 'hang', { times: 2 });      // the next two range reads hang
 * faults.inject('put', 'server_error', { key: (k) => k.startsWith('data/') });
 */
export function createFaultyObjectStore(inner: ObjectStore): { store: ObjectStore; faults: FaultController } {
  let rules: Rule[] = [];
  const calls: FaultyCall[] = [];

  /** Logs the call and runs it through its fault, if one is programmed. */
  async function run<T>(
    operation: StorageOperation,
    key: string,
    signal: AbortSignal | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    calls.push({ operation, key });
    // Every rule counts the matching calls it lets through, so `skip` means the same whatever else is programmed.
    let rule: Rule | undefined;
    for (const r of rules) {
      if (r.operation !== operation || r.remaining <= 0 || !(r.key?.(key) ?? true)) continue;
      if (r.skip > 0) r.skip--;
      else rule ??= r;
    }
    if (rule === undefined) return call();
    rule.remaining--;
    const fault = rule.fault;
    if (typeof fault === 'object') {
      await abortable(signal, fault.delayMs);
      return call();
    }
    switch (fault) {
      case 'hang':
        await abortable(signal, null);
        throw new Error('unreachable: a hung call only ends by abort');
      case 'server_error':
        throw serverError();
      case 'reset':
        throw resetError();
      case 'lost_reply':
        await call();
        throw resetError();
      case 'truncated':
        throw new TruncatedBodyError(key, 100, 10);
    }
  }

  const signalOf = (opts: CallOptions | PutOptions | undefined): AbortSignal | undefined => opts?.signal;

  const store: ObjectStore = {
    put: (key, bytes, opts) => run('put', key, signalOf(opts), () => inner.put(key, bytes, opts)),
    putConditional: (key, bytes, condition, opts): Promise<ConditionalPutResult> =>
      run('put_conditional', key, signalOf(opts), () => inner.putConditional(key, bytes, condition, opts)),
    get: (key, opts) => run('get', key, signalOf(opts), () => inner.get(key, opts)),
    getVersioned: (key, opts) => run('get', key, signalOf(opts), () => inner.getVersioned(key, opts)),
    getRange: (key, start, endExclusive, opts) =>
      run('get_range', key, signalOf(opts), () => inner.getRange(key, start, endExclusive, opts)),
    head: (key, opts) => run('head', key, signalOf(opts), () => inner.head(key, opts)),
    delete: (key, opts) => run('delete', key, signalOf(opts), () => inner.delete(key, opts)),
    list: (options: ListOptions): AsyncIterable<ListEntry> => ({
      [Symbol.asyncIterator]: () => {
        const it = inner.list(options)[Symbol.asyncIterator]();
        return {
          next: () => run('list', options.prefix, options.signal, () => it.next()),
          return: async (): Promise<IteratorResult<ListEntry>> =>
            (await it.return?.()) ?? { done: true, value: undefined },
        };
      },
    }),
  };

  const faults: FaultController = {
    inject(operation, fault, scope) {
      rules.push({ operation, fault, key: scope?.key, skip: scope?.skip ?? 0, remaining: scope?.times ?? Infinity });
    },
    clear() {
      rules = [];
    },
    calls,
    callsOf: (operation) => calls.filter((c) => c.operation === operation),
  };
  return { store, faults };
}
