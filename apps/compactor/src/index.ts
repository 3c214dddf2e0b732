/**
 * @module @sluice/compactor
 * The compactor role: sweeps the store on a timer and compacts each sealed hour partition (`@sluice/compaction`)
 * in a compaction worker thread under a heap cap, borrowing that memory from the query pool when the querier
 * shares the process.
 */
export type { Compactor, CompactorDeps, PartitionFailure, SweepReport } from './start-compactor.js';
export { startCompactor } from './start-compactor.js';
export type { MemoryLease, MemoryLender } from './memory-lender.js';
export type { CompactorMeter } from './compaction-metrics.js';
