/**
 * @module memory-pool
 * The process-wide greedy memory pool (docs/design/query-governance.md). Its counters live in a
 * `SharedArrayBuffer` (layout: `pool-layout.ts`), so `createMemoryPool` in the main thread and
 * `attachMemoryPool(pool.shared)` in any worker address one pool. Invariants: the pool total equals the sum of
 * the per-query held bytes whenever no call is in flight, and never exceeds the size at any instant.
 */
import { threadId } from 'node:worker_threads';
import { SlotReservation } from './query-reservation.js';
import type { PoolReservation, QueryGroup } from './query-reservation.js';
import {
  H_MAGIC,
  H_PEAK,
  H_RESERVED,
  H_SIZE,
  H_SLOTS,
  H_TICKET,
  ID_BYTES,
  GUARD_BUSY,
  GUARD_PAUSED,
  OWNER_BUSY,
  POOL_MAGIC,
  S_GROUP,
  S_GROUP_PEAK,
  S_GUARD,
  S_HELD,
  S_OWNER,
  S_PEAK,
  S_THREAD,
  checkBytes,
  fenceMark,
  poolBufferBytes,
  readSlotId,
  releaseSlot,
  slotWord,
  viewCells,
  writeSlotId,
} from './pool-layout.js';
import type { PoolCells } from './pool-layout.js';

/** Default number of query slots: comfortably above the default `max_concurrent_queries` (4). */
export const DEFAULT_QUERY_SLOTS = 64;

/** Options of {@link createMemoryPool}. */
export interface MemoryPoolOptions {
  /** Pool size in bytes (a positive safe integer), usually `derivePoolSize(...).sizeBytes`. */
  readonly sizeBytes: number;
  /** Query slots; at least `max_concurrent_queries` (each running query holds one). Default 64. */
  readonly maxQueries?: number;
}

/**
 * A structured-clone-able handle to a pool: post it to a worker (`workerData` or `postMessage`) and call
 * {@link attachMemoryPool} there. The buffer is shared, not copied.
 */
export interface SharedMemoryPoolHandle {
  readonly kind: 'sluice.memory_pool';
  readonly buffer: SharedArrayBuffer;
}

/** Options of {@link MemoryPool.createQuery}. */
export interface CreateQueryOptions {
  /**
   * The query's own ceiling (`querier.limits.max_query_memory_bytes`): a positive safe integer ≤ the pool size.
   * A grow that would take the query's held bytes past it is refused as `query_memory_limit` (ceiling `query`)
   * without touching the pool total. Absent: the query is bounded by the pool alone.
   */
  readonly maxBytes?: number;
  /**
   * Pool bytes this query must leave free for others: a grow that would take the pool total past
   * `size - leaveFreeBytes` is refused (503 `query_memory_contended`, unless the query could not fit the pool even
   * alone). The querier's general lane leaves the light lane's share free this way
   * (docs/design/query-governance.md, "Fair shares"). Absent or 0: the whole pool.
   */
  readonly leaveFreeBytes?: number;
  /**
   * Join a query group (a helper worker scanning a share of the query's row groups): the slot counts with the
   * group's other slots for the ceiling and the 422/503 rule (docs/design/query-governance.md, "Parallel scans").
   */
  readonly group?: QueryGroup;
}

/** One query's figures in the slot table, for the server log and for audits. */
export interface PoolConsumer {
  readonly queryId: string;
  /** Bytes held now. */
  readonly heldBytes: number;
  /** The most this reservation has held. */
  readonly peakBytes: number;
  /** `worker_threads` id of the thread that created the reservation (0 = main thread). */
  readonly threadId: number;
}

/** The shared pool. Every method is safe to call from any thread holding the pool. */
export interface MemoryPool {
  /** Pool size in bytes. */
  readonly size: number;
  /** Number of query slots. */
  readonly maxQueries: number;
  /** The handle to pass to workers. */
  readonly shared: SharedMemoryPoolHandle;
  /** Bytes reserved by all queries now. */
  reserved(): number;
  /** The most bytes reserved at once since the pool was created (its high-water mark, never reset). */
  peakReserved(): number;
  /** `size - reserved()`. */
  available(): number;
  /**
   * Starts a query's accounting: claims a slot labelled `queryId`, with an optional per-query ceiling.
   * @throws RangeError when `options.maxBytes` is not a positive safe integer ≤ `size` (a wiring bug: configuration
   * validation happens earlier). Error when every slot is taken (more running queries than `maxQueries`: a wiring
   * bug, since the admission gate bounds concurrency).
   */
  createQuery(queryId: string, options?: CreateQueryOptions): PoolReservation;
  /** Every live reservation, in slot order. */
  consumers(): PoolConsumer[];
  /** The `n` largest holders, largest first (for the server log of a refusal, never the response). */
  topConsumers(n: number): PoolConsumer[];
  /**
   * Releases every reservation labelled `queryId` (e.g. a query whose worker died or was abandoned).
   * Precondition: the thread that created it no longer uses it. @returns the bytes released.
   */
  releaseQuery(queryId: string): number;
  /**
   * Releases every reservation created by thread `threadId` — call it from a worker's `exit` handler.
   * @returns the bytes released.
   */
  releaseThread(threadId: number): number;
  /**
   * Fences every reservation of thread `threadId` before the thread is terminated: from then on the thread cannot
   * start a pool update, so terminating it cannot leave the pool total and its slots disagreeing. Never waits.
   * @returns false when one of its reservations is inside an update right now (fence the rest; call again soon).
   */
  fenceThread(threadId: number): boolean;
  /**
   * Sets the pool total back to the sum of the live reservations, after a thread died on its own (heap exhausted)
   * possibly inside an update of both. Pauses every reservation for the few microseconds it takes; never waits.
   * Main thread only.
   * @returns the bytes the total was off by (positive: it read too high), or `null` when a reservation was inside
   * an update (nothing changed; call again soon).
   */
  repairTotal(): number | null;
}

/**
 * Creates a pool in this thread.
 * @throws RangeError when `sizeBytes` is not a positive safe integer or `maxQueries` not a positive integer.
 * @example
 * const pool = createMemoryPool({ sizeBytes: 805_306_368 });
 * new Worker(url, { workerData: { pool: pool.shared } });
 */
export function createMemoryPool(options: MemoryPoolOptions): MemoryPool {
  const { sizeBytes, maxQueries = DEFAULT_QUERY_SLOTS } = options;
  checkBytes(sizeBytes, 'sizeBytes');
  if (sizeBytes === 0) throw new RangeError('sizeBytes must be positive');
  if (!Number.isInteger(maxQueries) || maxQueries < 1 || maxQueries > 65536) {
    throw new RangeError(`maxQueries must be an integer in [1, 65536], got ${String(maxQueries)}`);
  }
  const buffer = new SharedArrayBuffer(poolBufferBytes(maxQueries));
  const header = new BigInt64Array(buffer, 0, 8);
  Atomics.store(header, H_SIZE, BigInt(sizeBytes));
  Atomics.store(header, H_SLOTS, BigInt(maxQueries));
  Atomics.store(header, H_MAGIC, POOL_MAGIC);
  return new SharedPool(viewCells(buffer));
}

/**
 * Opens the pool behind `handle` (typically in a worker).
 * @throws TypeError when `handle` is not a pool handle of this layout version.
 */
export function attachMemoryPool(handle: SharedMemoryPoolHandle): MemoryPool {
  const buffer: unknown = (handle as { buffer?: unknown } | null)?.buffer;
  if (handle?.kind !== 'sluice.memory_pool' || !(buffer instanceof SharedArrayBuffer) || buffer.byteLength < 64) {
    throw new TypeError('not a Sluice memory pool handle');
  }
  const header = new BigInt64Array(buffer, 0, 8);
  const slots = Number(Atomics.load(header, H_SLOTS));
  if (Atomics.load(header, H_MAGIC) !== POOL_MAGIC || buffer.byteLength !== poolBufferBytes(slots)) {
    throw new TypeError('memory pool handle has an unknown layout');
  }
  return new SharedPool(viewCells(buffer));
}

class SharedPool implements MemoryPool {
  readonly size: number;
  readonly maxQueries: number;
  readonly shared: SharedMemoryPoolHandle;
  #cells: PoolCells;

  constructor(cells: PoolCells) {
    this.#cells = cells;
    this.size = Number(cells.size);
    this.maxQueries = cells.slots;
    this.shared = Object.freeze({ kind: 'sluice.memory_pool', buffer: cells.buffer });
  }

  reserved(): number {
    return Number(Atomics.load(this.#cells.words, H_RESERVED));
  }

  peakReserved(): number {
    return Number(Atomics.load(this.#cells.words, H_PEAK));
  }

  available(): number {
    return this.size - this.reserved();
  }

  createQuery(queryId: string, options?: CreateQueryOptions): PoolReservation {
    const maxBytes = options?.maxBytes;
    if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > this.size)) {
      throw new RangeError(
        `maxBytes must be a positive integer no larger than the pool size ${this.size}, got ${String(maxBytes)}`,
      );
    }
    const leaveFree = options?.leaveFreeBytes ?? 0;
    if (!Number.isSafeInteger(leaveFree) || leaveFree < 0 || leaveFree >= this.size) {
      throw new RangeError(
        `leaveFreeBytes must be a non-negative integer below the pool size ${this.size}, got ${String(leaveFree)}`,
      );
    }
    const cells = this.#cells;
    const { words } = cells;
    for (let slot = 0; slot < cells.slots; slot++) {
      const owner = slotWord(slot, S_OWNER);
      if (Atomics.load(words, owner) !== 0n) continue;
      if (Atomics.compareExchange(words, owner, 0n, OWNER_BUSY) !== 0n) continue;
      const ticket = Atomics.add(words, H_TICKET, 1n) + 1n;
      Atomics.store(words, slotWord(slot, S_HELD), 0n);
      Atomics.store(words, slotWord(slot, S_PEAK), 0n);
      Atomics.store(words, slotWord(slot, S_THREAD), BigInt(threadId));
      const group = options?.group?.ticket ?? 0n;
      Atomics.store(words, slotWord(slot, S_GROUP), group);
      Atomics.store(words, slotWord(slot, S_GROUP_PEAK), 0n);
      // GUARD is left as it is: 0 from the last release, or paused by a repair running now (the new owner then
      // waits for it before its first update).
      writeSlotId(cells, slot, queryId);
      Atomics.store(words, owner, ticket); // publishes the id and figures above
      return new SlotReservation(cells, slot, ticket, queryId, maxBytes, leaveFree, group);
    }
    throw new Error(
      `memory pool has no free query slot (${cells.slots} slots); raise maxQueries above max_concurrent_queries`,
    );
  }

  consumers(): PoolConsumer[] {
    return this.#scan().map((s) => s.consumer);
  }

  topConsumers(n: number): PoolConsumer[] {
    return this.consumers()
      .sort((a, b) => b.heldBytes - a.heldBytes || a.queryId.localeCompare(b.queryId))
      .slice(0, Math.max(0, Math.floor(n)));
  }

  releaseQuery(queryId: string): number {
    return this.#releaseWhere(
      (c) => c.queryId === queryId || (queryId.length > 0 && truncatedMatch(c.queryId, queryId)),
    );
  }

  releaseThread(id: number): number {
    const bytes = this.#releaseWhere((c) => c.threadId === id);
    // A thread that died while claiming or releasing a slot left it marked busy; only it could finish that, so the
    // slot is freed here (its bytes, if any were still counted, are mended by repairTotal).
    const { words, slots } = this.#cells;
    for (let slot = 0; slot < slots; slot++) {
      if (Atomics.load(words, slotWord(slot, S_OWNER)) !== OWNER_BUSY) continue;
      if (Number(Atomics.load(words, slotWord(slot, S_THREAD))) !== id) continue;
      Atomics.store(words, slotWord(slot, S_HELD), 0n);
      Atomics.store(words, slotWord(slot, S_PEAK), 0n);
      Atomics.store(words, slotWord(slot, S_THREAD), 0n);
      Atomics.store(words, slotWord(slot, S_GUARD), 0n);
      Atomics.store(words, slotWord(slot, S_GROUP), 0n);
      Atomics.store(words, slotWord(slot, S_OWNER), 0n);
    }
    return bytes;
  }

  fenceThread(id: number): boolean {
    let all = true;
    for (const { slot, ticket, consumer } of this.#scan()) {
      if (consumer.threadId !== id) continue;
      const guard = slotWord(slot, S_GUARD);
      const seen = Atomics.compareExchange(this.#cells.words, guard, 0n, fenceMark(ticket));
      if (seen === GUARD_BUSY) all = false;
    }
    return all;
  }

  repairTotal(): number | null {
    const { words, slots } = this.#cells;
    const paused: number[] = [];
    const unpause = (): void => {
      for (const guard of paused) {
        Atomics.store(words, guard, 0n);
        Atomics.notify(words, guard);
      }
    };
    for (let slot = 0; slot < slots; slot++) {
      const guard = slotWord(slot, S_GUARD);
      const seen = Atomics.compareExchange(words, guard, 0n, GUARD_PAUSED);
      if (seen === 0n) paused.push(guard);
      else if (seen === GUARD_BUSY) {
        unpause();
        return null;
      }
      // A fence mark (negative): that thread starts no update; its bytes still count below.
    }
    let sum = 0n;
    for (let slot = 0; slot < slots; slot++) {
      const owner = Atomics.load(words, slotWord(slot, S_OWNER));
      if (owner !== 0n) sum += Atomics.load(words, slotWord(slot, S_HELD));
    }
    const drift = Atomics.exchange(words, H_RESERVED, sum) - sum;
    unpause();
    return Number(drift);
  }

  #releaseWhere(match: (c: PoolConsumer) => boolean): number {
    let bytes = 0;
    for (const { slot, ticket, consumer } of this.#scan()) {
      if (match(consumer)) bytes += releaseSlot(this.#cells, slot, ticket) ?? 0;
    }
    return bytes;
  }

  #scan(): Array<{ slot: number; ticket: bigint; consumer: PoolConsumer }> {
    const cells = this.#cells;
    const { words } = cells;
    const out: Array<{ slot: number; ticket: bigint; consumer: PoolConsumer }> = [];
    for (let slot = 0; slot < cells.slots; slot++) {
      const ticket = Atomics.load(words, slotWord(slot, S_OWNER));
      if (ticket <= 0n) continue;
      const queryId = readSlotId(cells, slot);
      const heldBytes = Number(Atomics.load(words, slotWord(slot, S_HELD)));
      const peakBytes = Number(Atomics.load(words, slotWord(slot, S_PEAK)));
      const thread = Number(Atomics.load(words, slotWord(slot, S_THREAD)));
      // Seqlock-style re-check: a slot released and reused while we read it is skipped, not misreported.
      if (Atomics.load(words, slotWord(slot, S_OWNER)) !== ticket) continue;
      out.push({ slot, ticket, consumer: { queryId, heldBytes, peakBytes, threadId: thread } });
    }
    return out;
  }
}

/** A stored id is `queryId` truncated to the slot's id area. */
function truncatedMatch(stored: string, queryId: string): boolean {
  return new TextEncoder().encode(queryId).length > ID_BYTES && queryId.startsWith(stored) && stored.length > 0;
}
