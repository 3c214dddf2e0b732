/**
 * @module pool-lender
 * Adapts the querier's memory pool to the compactor's {@link MemoryLender}: a merge borrows its worker's heap cap
 * (at most half the pool, so a small pool still admits queries while a merge runs) as one pool consumer named
 * `compaction-<n>`, which shows up in the top-consumers log of any query it crowds out.
 */
import type { MemoryLender } from '@sluice/compactor';
import type { MemoryPool } from '@sluice/limits';

/** The consumer-id prefix of a compaction loan on the query pool. */
export const LOAN_ID_PREFIX = 'compaction-';

/** Bytes of `pool` lent to compaction now (`sluice.query.pool.lent`). */
export function lentBytes(pool: MemoryPool): number {
  return pool
    .consumers()
    .filter((c) => c.queryId.startsWith(LOAN_ID_PREFIX))
    .reduce((sum, c) => sum + c.heldBytes, 0);
}

/** A lender over `pool`. */
export function createPoolLender(pool: MemoryPool): MemoryLender {
  let next = 0;
  return {
    loanBytes: (heapCapBytes) => Math.min(heapCapBytes, Math.floor(pool.size / 2)),
    tryBorrow(bytes) {
      const reservation = pool.createQuery(`${LOAN_ID_PREFIX}${next++}`);
      if (reservation.tryGrow(bytes).status !== 'ok') {
        reservation.releaseAll();
        return null;
      }
      return { release: () => void reservation.releaseAll() };
    },
  };
}
