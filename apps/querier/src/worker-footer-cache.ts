/**
 * @module worker-footer-cache
 * A query worker's footer cache on the shared pool (docs/design/query-governance.md, "Footer cache"). The cache is
 * a long-lived pool consumer of its own, `footer-cache-<thread>`, separate from any query: its bytes are reserved
 * there before an entry is retained and released when the entry goes, so "no query holds anything" between
 * queries stays true while the pool total includes what the caches hold.
 */
import type { GrowRefused, MemoryPool, QueryReservation } from '@sluice/limits';
import type { FooterCache } from '@sluice/storage';
import { createFooterCache } from '@sluice/storage';

/** The pool consumer id prefix of the footer caches (`footer-cache-<threadId>`). */
export const FOOTER_CACHE_CONSUMER_PREFIX = 'footer-cache-';

/**
 * A worker's footer cache capacity: `footer_cache_bytes`, at most pool / (8 x max_concurrent_queries), so every
 * worker's cache together holds at most an eighth of the pool (docs/design/query-governance.md, "Footer cache").
 */
export function footerCacheBytesPerWorker(configured: number, poolBytes: number, maxConcurrentQueries: number): number {
  return Math.max(0, Math.min(configured, Math.floor(poolBytes / (8 * maxConcurrentQueries))));
}

/** Options of {@link createWorkerFooterCache}. */
export interface WorkerFooterCacheOptions {
  readonly pool: MemoryPool;
  /** This worker's capacity in bytes (0: off, nothing is reserved or kept). */
  readonly capacityBytes: number;
  /** The worker's thread id, for the consumer id. */
  readonly threadId: number;
}

/** The cache, and how the worker gives its bytes back. */
export interface WorkerFooterCache {
  readonly cache: FooterCache;
  /**
   * Clears this worker's cache, then, while other workers' caches still hold bytes on the pool, asks every worker
   * to clear its own (a broadcast) and waits for their bytes to go, up to {@link FOOTER_RELIEF_WAIT_MS}.
   * @returns the bytes given back to the pool by all caches together.
   */
  relieve(): number;
  /** Stops hearing the other workers' requests (tests; a worker's channel ends with its thread). */
  close(): void;
}

/**
 * Longest a refused grow waits for the other workers' caches to clear before its refusal stands. A worker answers
 * the broadcast at its next event-loop turn: at once when idle, between row groups when busy.
 */
export const FOOTER_RELIEF_WAIT_MS = 100;

/** The channel every query worker's cache listens on (one process: Node's BroadcastChannel spans its threads). */
const RELIEF_CHANNEL = 'sluice.querier.footer-cache-relief';

/** Creates the cache; its pool consumer is taken on the first entry, so a cache that is off holds no slot. */
export function createWorkerFooterCache(options: WorkerFooterCacheOptions): WorkerFooterCache {
  let consumer: QueryReservation | undefined;
  const channel = new BroadcastChannel(RELIEF_CHANNEL);
  // A request from another worker whose query the pool refused: give everything back (docs/design/query-governance.md).
  channel.onmessage = () => cache.clear();
  (channel as { unref?: () => void }).unref?.();
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const cache = createFooterCache({
    capacityBytes: options.capacityBytes,
    reserve(bytes) {
      try {
        consumer ??= options.pool.createQuery(`${FOOTER_CACHE_CONSUMER_PREFIX}${options.threadId}`, {
          maxBytes: options.capacityBytes,
        });
        return !consumer.released && consumer.tryGrow(bytes).status === 'ok';
      } catch {
        // No free pool slot, or the slot was released from outside: the footer is simply not kept.
        return false;
      }
    },
    release(bytes) {
      if (consumer !== undefined && !consumer.released) consumer.shrink(Math.min(bytes, consumer.held));
    },
  });
  return {
    cache,
    relieve() {
      const own = cache.clear();
      const others = footerCacheHeldBytes(options.pool);
      if (others === 0) return own;
      channel.postMessage('clear');
      const until = performance.now() + FOOTER_RELIEF_WAIT_MS;
      // A synchronous wait: the refused grow is synchronous, and the other workers clear on their own threads.
      let left = others;
      while (left > 0 && performance.now() < until) {
        Atomics.wait(sleeper, 0, 0, 1);
        left = footerCacheHeldBytes(options.pool);
      }
      return own + Math.max(0, others - left);
    },
    close: () => channel.close(),
  };
}

/**
 * A query's reservation that clears the footer caches before it lets a pool refusal stand: a grow the pool refuses
 * is retried once after `relieve` (this worker's cache, then the others', see {@link WorkerFooterCache.relieve})
 * gave bytes back, so a query is never refused because of cached footers. A refusal by the query's own ceiling is
 * final (the caches are no part of it).
 */
export function relievingReservation(inner: QueryReservation, relieve: () => number): QueryReservation {
  // Only a refusal this wrapper let stand: one that a retry after clearing the cache overcame is no refusal.
  let lastRefusal: GrowRefused | undefined;
  return {
    get queryId() {
      return inner.queryId;
    },
    get held() {
      return inner.held;
    },
    get lastRefusal() {
      return lastRefusal;
    },
    get released() {
      return inner.released;
    },
    tryGrow(bytes) {
      let out = inner.tryGrow(bytes);
      if (out.status !== 'ok' && out.ceiling === 'pool' && relieve() > 0) out = inner.tryGrow(bytes);
      if (out.status !== 'ok') lastRefusal = out;
      return out;
    },
    shrink: (bytes) => inner.shrink(bytes),
    releaseAll: () => inner.releaseAll(),
  };
}

/** Bytes every query worker's footer cache holds on `pool` now (`sluice.query.pool.footer_cache`). */
export function footerCacheHeldBytes(pool: MemoryPool): number {
  return pool
    .consumers()
    .filter((c) => c.queryId.startsWith(FOOTER_CACHE_CONSUMER_PREFIX))
    .reduce((sum, c) => sum + c.heldBytes, 0);
}

/**
 * Bytes held on `pool` by anything but the footer caches: queries (and their bodies being sent), compaction loans.
 * "No query holds anything" between queries means this reads 0 while the caches may hold their entries.
 */
export function nonCacheHeldBytes(pool: MemoryPool): number {
  return pool.reserved() - footerCacheHeldBytes(pool);
}
