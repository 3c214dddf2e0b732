/**
 * @module compaction-error
 * The one error a compaction throws on purpose: the partition cannot be compacted as found this sweep (the sweep
 * reports it as an `error` outcome and retries it at the next one). Corrupt inputs are not errors: they are
 * quarantined (see quarantine.ts).
 */

/** Thrown when a partition cannot be compacted as found (the sweep reports it as an `error` outcome). */
export class CompactionError extends Error {
  override readonly name = 'CompactionError';
}
