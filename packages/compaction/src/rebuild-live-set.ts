/**
 * @module rebuild-live-set
 * The live set of a partition whose manifest had to be quarantined, rebuilt from the files alone. A compacted file
 * names in its footer provenance every file whose rows it holds that still existed when it was made
 * (provenance.ts), so:
 *
 * - compaction outputs are considered newest generation first (then the one replacing more files, then the later
 *   name); one is kept unless a kept output already replaces it or shares an input with it. A shared input means
 *   the two hold the same rows: the loser of a compare-and-swap race, or an older generation;
 * - an output passed over is not live (its rows are in a kept one); a file that is not an output (a receiver
 *   file) is live unless a kept output replaces it.
 *
 * So retired inputs still waiting out their grace period are not resurrected next to the file that holds their
 * rows (which would show every such row twice), and receiver files written after the last compaction stay live.
 * The one case the files cannot decide is two outputs of one race that merged different inputs (each adopted a
 * late file the other did not): the one replacing more files is kept, and a late file only the other one holds
 * stays live on its own while it exists (it is deleted only after a committed output held it for the grace).
 */
import { compareKeys } from '@sluice/storage';
import type { Provenance } from './provenance.js';

/** A readable data file of the partition and its provenance (`null` for a file that is not a compaction output). */
export interface RebuildCandidate {
  readonly name: string;
  readonly provenance: Provenance | null;
}

/** The names to list in the rebuilt manifest, in key order. */
export function rebuildLiveSet(files: readonly RebuildCandidate[]): string[] {
  const outputs = files
    .filter((f): f is RebuildCandidate & { provenance: Provenance } => f.provenance !== null)
    .sort(
      (a, b) =>
        b.provenance.generation - a.provenance.generation ||
        b.provenance.replaces.length - a.provenance.replaces.length ||
        compareKeys(b.name, a.name),
    );
  const kept = new Set<string>();
  const covered = new Set<string>();
  for (const o of outputs) {
    if (covered.has(o.name)) continue;
    if (o.provenance.replaces.some((r) => covered.has(r) || kept.has(r))) continue;
    kept.add(o.name);
    for (const r of o.provenance.replaces) covered.add(r);
  }
  return files
    .filter((f) => !covered.has(f.name) && (f.provenance === null || kept.has(f.name)))
    .map((f) => f.name)
    .sort(compareKeys);
}
