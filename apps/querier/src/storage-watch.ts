/**
 * @module storage-watch
 * What a query worker knows about its query's storage calls, and what that means at a deadline
 * (docs/design/query-governance.md, "Storage and the deadline"). The worker's store reports every retry
 * (`createObjectStore`'s `onRetry`) and its calls are wrapped so the pending ones are known. When the worker is
 * asked to stop a query it sends this report at once, before the query unwinds (and before a worker that does not
 * yield is terminated), so the main thread can tell "the query was too slow" from "storage was not answering".
 */
import type {
  ListEntry,
  ListOptions,
  ObjectStore,
  StorageOperation,
  StorageRetryEvent,
  UnavailableReason,
} from '@sluice/storage';

/** The worker's account of its query's storage when the query was asked to stop (worker → main thread). */
export interface StorageWaitReport {
  /** Retries the store reported during this query: transient failures (timeouts, resets, 5xx) tried again. */
  readonly retries: number;
  /** The most recent of them. */
  readonly lastRetry: {
    readonly operation: StorageOperation;
    readonly key: string | null;
    /** The attempt that failed, from 1. */
    readonly attempt: number;
    readonly reason: UnavailableReason;
  } | null;
  /** The longest-waiting storage call still pending when the stop came. */
  readonly pending: {
    readonly operation: StorageOperation;
    readonly key: string | null;
    readonly waitedMs: number;
  } | null;
}

/**
 * A storage call pending at the deadline counts as storage not answering once it has waited this long (or half
 * the deadline, when that is shorter). A healthy range read takes milliseconds to a few hundred; without a floor,
 * every I/O-bound query stopped at its deadline mid-read would be blamed on storage.
 */
export const STORAGE_STALL_MS = 1000;

/** The call a query stopped at its deadline was stuck on, or `null` when the deadline was the query's own. */
export interface StorageStall {
  readonly operation: StorageOperation;
  readonly key: string | null;
  /** The attempt under way (a pending call) or the last one that failed (a retried call). */
  readonly attempts: number;
}

/**
 * Decides whether a query stopped at its `deadlineMs` was waiting on failing storage: its store reported a retry
 * during the query, or a call had been pending for {@link STORAGE_STALL_MS} (or half the deadline) when the stop
 * came. Like the time rule's overlap test it errs toward "retry": one retry is enough.
 */
export function storageStall(report: StorageWaitReport | undefined, deadlineMs: number): StorageStall | null {
  if (report === undefined) return null;
  const { pending, lastRetry } = report;
  if (pending !== null && pending.waitedMs >= Math.min(STORAGE_STALL_MS, deadlineMs / 2)) {
    const retried = lastRetry !== null && lastRetry.operation === pending.operation && lastRetry.key === pending.key;
    return { operation: pending.operation, key: pending.key, attempts: retried ? lastRetry.attempt + 1 : 1 };
  }
  if (report.retries > 0 && lastRetry !== null)
    return { operation: lastRetry.operation, key: lastRetry.key, attempts: lastRetry.attempt };
  return null;
}

/** The worker side: hears the store's retries and tracks its pending calls. */
export interface StorageWatch {
  /** The `onRetry` hook of `createObjectStore`. */
  readonly onRetry: (event: StorageRetryEvent) => void;
  /** Wraps the worker's store so its pending calls are known. */
  wrap(store: ObjectStore): ObjectStore;
  /** Starts a fresh account for the next query (a worker runs one query at a time). */
  reset(): void;
  /** The account now. */
  report(): StorageWaitReport;
}

/** Creates the watch; `now` is a millisecond clock (default `performance.now`). */
export function createStorageWatch(now: () => number = () => performance.now()): StorageWatch {
  let retries = 0;
  let lastRetry: StorageWaitReport['lastRetry'] = null;
  let nextCall = 0;
  const pending = new Map<number, { operation: StorageOperation; key: string; since: number }>();

  async function track<T>(operation: StorageOperation, key: string, call: () => Promise<T>): Promise<T> {
    const id = nextCall++;
    pending.set(id, { operation, key, since: now() });
    try {
      return await call();
    } finally {
      pending.delete(id);
    }
  }

  return {
    onRetry(event) {
      retries++;
      lastRetry = { operation: event.operation, key: event.key, attempt: event.attempt, reason: event.reason };
    },
    wrap(store) {
      return {
        put: (key, bytes, opts) => store.put(key, bytes, opts),
        putConditional: (key, bytes, condition, opts) => store.putConditional(key, bytes, condition, opts),
        delete: (key, opts) => store.delete(key, opts),
        get: (key, opts) => track('get', key, () => store.get(key, opts)),
        getVersioned: (key, opts) => track('get', key, () => store.getVersioned(key, opts)),
        getRange: (key, start, end, opts) => track('get_range', key, () => store.getRange(key, start, end, opts)),
        head: (key, opts) => track('head', key, () => store.head(key, opts)),
        list: (options: ListOptions): AsyncIterable<ListEntry> => ({
          [Symbol.asyncIterator]: () => {
            const it = store.list(options)[Symbol.asyncIterator]();
            return {
              next: () => track('list', options.prefix, () => it.next()),
              return: async (): Promise<IteratorResult<ListEntry>> =>
                (await it.return?.()) ?? { done: true, value: undefined },
            };
          },
        }),
      };
    },
    reset() {
      retries = 0;
      lastRetry = null;
    },
    report() {
      let oldest: { operation: StorageOperation; key: string; since: number } | undefined;
      for (const call of pending.values()) if (oldest === undefined || call.since < oldest.since) oldest = call;
      const at = now();
      return {
        retries,
        lastRetry,
        pending:
          oldest === undefined
            ? null
            : { operation: oldest.operation, key: oldest.key, waitedMs: Math.max(0, at - oldest.since) },
      };
    },
  };
}
