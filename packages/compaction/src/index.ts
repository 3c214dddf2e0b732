/**
 * @module @sluice/compaction
 * Compaction of one sealed hour partition: the bounded-memory sorted merge into one Parquet file, the
 * `manifest.json` generation committed by compare-and-swap, deletion of provably redundant files, and the
 * compaction audit record. No scheduling and no threads: the compactor role (`apps/compactor`) composes this.
 */
export type { CleanupReport, CompactPartitionOptions, PartitionOutcome } from './compact-partition.js';
export { CompactionError, compactPartition, partitionOf } from './compact-partition.js';
export type { CompactionAuditEvent } from './compaction-audit.js';
export { COMPACTION_EVENT_KIND, compactionAuditKey, encodeCompactionAudit } from './compaction-audit.js';
export type { Provenance } from './provenance.js';
export { PROVENANCE_KEY, provenanceOf } from './provenance.js';
export { RUN_BUDGET_ROWS } from './sorted-merge.js';
