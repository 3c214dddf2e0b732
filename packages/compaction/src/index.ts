/**
 * @module @sluice/compaction
 * Compaction of one sealed hour partition: the bounded-memory sorted merge into one Parquet file, the
 * `manifest.json` generation committed by compare-and-swap, deletion of provably redundant files, quarantine of
 * corrupt inputs, and the compaction audit records. No scheduling and no threads: the compactor role
 * (`apps/compactor`) composes this.
 */
export type { CleanupReport, CompactPartitionOptions, PartitionOutcome } from './compact-partition.js';
export { CompactionError, compactPartition, partitionOf } from './compact-partition.js';
export type { CompactionAuditEvent, QuarantineAuditEvent } from './compaction-audit.js';
export {
  COMPACTION_EVENT_KIND,
  QUARANTINE_EVENT_KIND,
  compactionAuditKey,
  encodeCompactionAudit,
  encodeQuarantineAudit,
} from './compaction-audit.js';
export type { QuarantinedObject } from './quarantine-commit.js';
export { QUARANTINE_RECORD_SUFFIX, QUARANTINE_ROOT, quarantineKeyOf } from './quarantine.js';
export type { Provenance } from './provenance.js';
export { PROVENANCE_KEY, provenanceOf } from './provenance.js';
export { RUN_BUDGET_ROWS } from './sorted-merge.js';
