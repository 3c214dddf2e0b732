/**
 * @module testing/harness
 * Test plumbing: run a DSL statement through {@link executeQuery} on a fresh reservation, check that nothing is
 * left reserved afterwards, and wrap stores to count listings and reads.
 */
import type { ListEntry, ListOptions, ObjectStore } from '@sluice/storage';
import { StorageUnavailableError } from '@sluice/storage';
import type { MemoryPool, PoolReservation } from '@sluice/limits';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import type { Query } from '@sluice/query';
import type { ExecuteHooks, ExecuteLimits, ExecuteOutcome } from '../execute.js';
import { executeQuery } from '../execute.js';
import type { HeapReclaimer } from '../tracker.js';
import type { CorruptObjectPolicy } from '../corrupt-objects.js';
import type { ColumnDecoderChoice } from '../scan.js';
import type { ScanHelpers } from '../scan-share.js';

/** Default caps for tests. */
export const LIMITS: ExecuteLimits = {
  defaultRows: 1000,
  maxRows: 10_000,
  maxListedObjects: 100_000,
  maxFiles: 10_000,
  maxResultBytes: 64 << 20,
};

/** Parses DSL text or throws. */
export function q(text: string): Query {
  const r = parseQuery(text);
  if (!r.ok) throw new Error(`bad test query ${text}: ${r.error.message}`);
  return r.value;
}

/** Result of {@link run}. */
export interface RunResult {
  readonly outcome: ExecuteOutcome;
  readonly text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
  /** `reservation.held` after the engine returned (before the body's release). */
  readonly heldAfter: number;
}

/** Options of {@link run}. */
export interface RunOptions {
  readonly tenant?: string;
  readonly nowNs: bigint;
  readonly limits?: Partial<ExecuteLimits>;
  readonly pool?: MemoryPool;
  readonly rowCap?: number;
  readonly signal?: AbortSignal;
  readonly hooks?: ExecuteHooks;
  readonly reclaim?: HeapReclaimer;
  readonly onCorruptObject?: CorruptObjectPolicy;
  readonly defaultWindowSecs?: number;
  /** Which decoder reads data files (default: the engine's default, `columnar`). */
  readonly decoder?: ColumnDecoderChoice;
  /** Helper workers for the query, given its reservation (to open the query's group on). */
  readonly helpers?: (reservation: PoolReservation) => ScanHelpers;
}

const bigPool = createMemoryPool({ sizeBytes: 1 << 30 });

/** Runs a statement; asserts the reservation is empty once the body is released. */
export async function run(store: ObjectStore, text: string | Query, o: RunOptions): Promise<RunResult> {
  const pool = o.pool ?? bigPool;
  const reservation = pool.createQuery(`t-${Math.random()}`);
  try {
    const outcome = await executeQuery({
      store,
      tenant: o.tenant ?? 'acme',
      query: typeof text === 'string' ? q(text) : text,
      nowNs: o.nowNs,
      defaultWindowSecs: o.defaultWindowSecs ?? 3600,
      limits: { ...LIMITS, ...o.limits },
      reservation,
      ...(o.rowCap !== undefined ? { rowCap: o.rowCap } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.hooks ? { hooks: o.hooks } : {}),
      ...(o.reclaim ? { reclaim: o.reclaim } : {}),
      ...(o.onCorruptObject ? { onCorruptObject: o.onCorruptObject } : {}),
      ...(o.decoder ? { decoder: o.decoder } : {}),
      ...(o.helpers ? { helpers: o.helpers(reservation) } : {}),
    });
    const heldAfter = reservation.held;
    if (outcome.status === 'ok') {
      const bodyText = outcome.body.toString('utf8');
      if (heldAfter !== outcome.body.byteLength)
        throw new Error(`held ${heldAfter} != body ${outcome.body.byteLength}`);
      outcome.budget.release();
      if (reservation.held !== 0) throw new Error(`held ${reservation.held} after release`);
      return { outcome, text: bodyText, json: JSON.parse(bodyText), heldAfter };
    }
    return { outcome, text: '', json: undefined, heldAfter };
  } finally {
    reservation.releaseAll();
  }
}

/** Counters of a {@link countingStore}. */
export interface StoreCounters {
  listCalls: number;
  listedEntries: number;
  listPrefixes: string[];
  /** Every key or common prefix the listings yielded. */
  listedKeys: string[];
  getRange: number;
  get: string[];
}

/**
 * Wraps a store, counting list calls/entries and reads; `failRange` makes every range read throw an I/O error,
 * `unavailableRange` a {@link StorageUnavailableError} (what the bounded store throws when it runs out of attempts).
 */
export function countingStore(
  inner: ObjectStore,
  opts?: { failRange?: boolean; unavailableRange?: boolean },
): { store: ObjectStore; counters: StoreCounters } {
  const counters: StoreCounters = {
    listCalls: 0,
    listedEntries: 0,
    listPrefixes: [],
    listedKeys: [],
    getRange: 0,
    get: [],
  };
  const store: ObjectStore = {
    put: (k, b, o) => inner.put(k, b, o),
    putConditional: (k, b, c, o) => inner.putConditional(k, b, c, o),
    get: (k, o) => {
      counters.get.push(k);
      return inner.get(k, o);
    },
    getVersioned: (k, o) => inner.getVersioned(k, o),
    getRange: (k, s, e, o) => {
      counters.getRange++;
      if (opts?.failRange === true) return Promise.reject(new Error('EIO: hyparquet internal detail /secret/path'));
      if (opts?.unavailableRange === true)
        return Promise.reject(
          new StorageUnavailableError('get_range', k, 3, 'server_error', { cause: new Error('x') }),
        );
      return inner.getRange(k, s, e, o);
    },
    head: (k, o) => inner.head(k, o),
    delete: (k, o) => inner.delete(k, o),
    list(o: ListOptions): AsyncIterable<ListEntry> {
      counters.listCalls++;
      counters.listPrefixes.push(o.prefix);
      const it = inner.list(o);
      return {
        async *[Symbol.asyncIterator]() {
          for await (const e of it) {
            counters.listedEntries++;
            counters.listedKeys.push(e.kind === 'object' ? e.key : e.prefix);
            yield e;
          }
        },
      };
    },
  };
  return { store, counters };
}
