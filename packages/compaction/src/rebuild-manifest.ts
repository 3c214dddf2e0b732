/**
 * @module rebuild-manifest
 * Replacing a corrupt `manifest.json` (`manifest_invalid`, `manifest_foreign_name`): the corrupt bytes go under
 * `quarantine/` first, then a fresh manifest is committed over them by compare-and-swap (`ifMatch` the corrupt
 * object's ETag, so a concurrent compactor's repair wins cleanly). Its files are the live set rebuilt from the
 * partition's files and their provenance (rebuild-live-set.ts); data files that are themselves corrupt are
 * quarantined in the same commit, and files already quarantined (originals waiting out their grace) stay out.
 *
 * Its generation is one above the highest generation anything in the partition states: the old manifest's when it
 * is still a usable number, and every compacted file's provenance. Nothing orders by generation (commits are
 * compare-and-swap on the ETag, and readers only read `files`), so when the old generation is unreadable this is
 * merely a fresh, safe number; it is at least 1, since 0 marks a first manifest.
 */
import { compareKeys, manifestKey } from '@sluice/storage';
import type { CorruptReason } from '@sluice/storage';
import { openInput } from './corrupt-input.js';
import type { CorruptFinding } from './corrupt-input.js';
import { provenanceOf } from './provenance.js';
import { quarantinedFiles } from './quarantine.js';
import { confirmFindings, quarantineAndCommit } from './quarantine-commit.js';
import type { QuarantineContext, QuarantineResult } from './quarantine-commit.js';
import { rebuildLiveSet } from './rebuild-live-set.js';
import type { RebuildCandidate } from './rebuild-live-set.js';

/** The corrupt manifest as found. */
export interface CorruptManifest {
  readonly bytes: Uint8Array;
  readonly etag: string;
  readonly reason: CorruptReason;
  readonly detail: string;
  /** Its generation, when still a usable number. */
  readonly generation: number | null;
}

function usable(g: number): boolean {
  return Number.isSafeInteger(g) && g >= 0 && Number.isSafeInteger(g + 3);
}

/**
 * Quarantines `manifest` and commits the rebuilt live set of the partition whose `*.parquet` children are `files`
 * (name → size).
 */
export async function rebuildManifest(
  ctx: QuarantineContext,
  manifest: CorruptManifest,
  files: ReadonlyMap<string, number>,
  signal?: AbortSignal,
): Promise<QuarantineResult> {
  const { store, prefix } = ctx;
  const quarantined = await quarantinedFiles(store, prefix, signal);
  const candidates: RebuildCandidate[] = [];
  const corrupt: CorruptFinding[] = [];
  for (const name of [...files.keys()].sort(compareKeys)) {
    const size = files.get(name) ?? 0;
    if (quarantined.get(name)?.bytes === size) continue;
    signal?.throwIfAborted();
    const opened = await openInput(store, prefix, name, size, ctx.tenant);
    if (opened.status === 'corrupt') corrupt.push(opened.finding);
    else candidates.push({ name, provenance: provenanceOf(opened.file) });
  }
  let highest = manifest.generation ?? 0;
  for (const c of candidates) {
    const g = c.provenance?.generation;
    if (g !== undefined && usable(g)) highest = Math.max(highest, g);
  }
  const generation = highest + 1;
  const moves = [
    { key: manifestKey(prefix), reason: manifest.reason, detail: manifest.detail, bytes: manifest.bytes },
    ...(await confirmFindings(ctx, corrupt)),
  ];
  return quarantineAndCommit(ctx, {
    move: moves,
    drop: [],
    commit: {
      base: { etag: manifest.etag, generation: generation - 1 },
      generation,
      files: rebuildLiveSet(candidates),
    },
  });
}
