/**
 * @module compaction-provenance
 * What a compacted file records about its origin, in its Parquet footer key-value metadata under
 * {@link PROVENANCE_KEY}: `{"version":1,"generation":n,"replaces":["<name>.parquet",…]}`. `replaces` names every
 * file whose rows this file contains and which may still exist in the partition (its direct inputs plus the
 * not-yet-deleted files its inputs replaced). The compactor deletes an unlisted file only when provenance proves
 * it redundant: it is named in a live file's `replaces`, or it is itself a compaction output that lost its race.
 * Any other unlisted file (for example a receiver file written into an already compacted partition) is kept.
 * It lives in storage (not compaction) because readers use it too: a live tail skips the rows of a compaction
 * output whose inputs it already sent (docs/design/query-governance.md, "Live tail").
 */
import type { ParquetFileHandle } from './parquet-reader.js';

/** Footer metadata key of the provenance record. */
export const PROVENANCE_KEY = 'sluice.compaction';

/** A compacted file's provenance. */
export interface Provenance {
  readonly generation: number;
  readonly replaces: readonly string[];
}

/** Encodes the footer metadata value. */
export function encodeProvenance(p: Provenance): string {
  return JSON.stringify({ version: 1, generation: p.generation, replaces: p.replaces });
}

/** The provenance of an opened file, or `null` when it is not a compaction output (or the record is unreadable). */
export function provenanceOf(file: ParquetFileHandle): Provenance | null {
  const entry = file.metadata.key_value_metadata?.find((kv) => kv.key === PROVENANCE_KEY);
  if (entry?.value === undefined) return null;
  try {
    const v: unknown = JSON.parse(entry.value);
    if (typeof v !== 'object' || v === null || !('replaces' in v) || !Array.isArray(v.replaces)) return null;
    const generation = 'generation' in v && typeof v.generation === 'number' ? v.generation : 0;
    return { generation, replaces: v.replaces.filter((x): x is string => typeof x === 'string') };
  } catch {
    return null;
  }
}
