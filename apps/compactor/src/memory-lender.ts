/**
 * @module memory-lender
 * When the compactor shares a process with the querier, a merge borrows its worker's heap cap from the query
 * memory pool for as long as it runs, so the pool's size stays the bound on what queries *and* merges hold
 * together (measured in the 1.5 GiB soak: a merge on top of a full pool took the process to 1.43 GiB RSS, with the
 * kernel reclaiming page cache to stay under the limit). Queries that would not fit meanwhile are refused as
 * `query_memory_contended` (503, retry), which is what that status means.
 */

/** Memory held for one merge; give it back when the merge ends. */
export interface MemoryLease {
  release(): void;
}

/** A pool a merge can borrow from (the querier's, adapted by the server). */
export interface MemoryLender {
  /** Bytes a merge borrows, given the worker's heap cap (a lender may lend less, e.g. at most half a small pool). */
  loanBytes(heapCapBytes: number): number;
  /** Borrows `bytes` now, or returns `null` when the pool cannot lend them at this moment. */
  tryBorrow(bytes: number): MemoryLease | null;
}
