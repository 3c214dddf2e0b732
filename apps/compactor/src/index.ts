/**
 * @module @sluice/compactor
 * The compactor role: merges sealed hour partitions into one sorted Parquet file each and commits
 * `manifest.json` generations by compare-and-swap (ourios-surface §4.4).
 */
export type { Compactor, CompactorDeps, PartitionFailure, SweepReport } from './start-compactor.js';
export { startCompactor } from './start-compactor.js';
export type { MemoryLease, MemoryLender } from './memory-lender.js';
export type { CleanupReport, CompactPartitionOptions, PartitionOutcome } from './compact-partition.js';
export { CompactionError, compactPartition, partitionOf } from './compact-partition.js';
export type { CompactorMeter } from './compaction-metrics.js';
export type { CompactionAuditEvent } from './compaction-audit.js';
export { COMPACTION_EVENT_KIND, compactionAuditKey, encodeCompactionAudit } from './compaction-audit.js';
export type { Provenance } from './provenance.js';
export { PROVENANCE_KEY, provenanceOf } from './provenance.js';
export { RUN_BUDGET_ROWS } from './sorted-merge.js';
