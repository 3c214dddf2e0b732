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

/** The compactor-loan budget (`sluice.budget.*` with pool `compactor_loan`), in bytes. */
export interface LoanFigures {
  /** Lent now. */
  readonly used: number;
  /** The most lent at once since the lender was created. */
  readonly peak: number;
  /** The most one loan may take: half the pool. */
  readonly limit: number;
}

/** A {@link MemoryLender} that also reports its budget figures. */
export interface PoolLender extends MemoryLender {
  figures(): LoanFigures;
}

/** A lender over `pool`. */
export function createPoolLender(pool: MemoryPool): PoolLender {
  let next = 0;
  let lent = 0;
  let peak = 0;
  const limit = Math.floor(pool.size / 2);
  return {
    loanBytes: (heapCapBytes) => Math.min(heapCapBytes, limit),
    tryBorrow(bytes) {
      const reservation = pool.createQuery(`${LOAN_ID_PREFIX}${next++}`);
      if (reservation.tryGrow(bytes).status !== 'ok') {
        reservation.releaseAll();
        return null;
      }
      lent += bytes;
      peak = Math.max(peak, lent);
      // releaseAll answers 0 after the first call, so a second release subtracts nothing.
      return { release: () => void (lent -= reservation.releaseAll()) };
    },
    figures: () => ({ used: lent, peak, limit }),
  };
}
