/**
 * @module manifest-append
 * Late data made visible at once (docs/design/storage-format.md, "The live set of a partition, and manifests"):
 * once a partition has `manifest.json`, readers ignore every file it does not list, so a data file the sink stores
 * into such a partition (late data, or any flush into an hour the compactor already manages, such as the open hour
 * under continuous compaction) is added to the manifest by the same compare-and-swap the compactor commits with.
 * A reader therefore still sees the whole old set or the whole new set, and never waits for a sweep.
 */
import {
  ManifestFormatError,
  MAX_MANIFEST_BYTES,
  encodePartitionManifest,
  manifestKey,
  parsePartitionManifest,
} from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';

/**
 * What {@link appendToManifest} did:
 * - `no_manifest`: the partition has none, so every `*.parquet` in it is live already;
 * - `listed`: the manifest already named the file (a retried flush);
 * - `appended`: a new generation names it;
 * - `left_to_compactor`: the manifest is corrupt or full (1 MiB); the compactor's next sweep quarantines and
 *   rebuilds it, or adopts the file, as it always did with late data.
 */
export type AppendOutcome = 'no_manifest' | 'listed' | 'appended' | 'left_to_compactor';

/**
 * Compare-and-swap rounds before the flush fails (and is retried with the flush's back-off). Each lost round
 * means another writer (a compactor, another receiver) committed in between, so a bound here is never reached
 * by a healthy store.
 */
export const MAX_APPEND_ROUNDS = 20;

/**
 * Adds the data file `dataKey` (already stored) to its partition's manifest, when the partition has one.
 * Call it after the file's put, never before: a manifest must not name a file that does not exist yet.
 * @throws the store's errors, or an `Error` after {@link MAX_APPEND_ROUNDS} lost races (the caller retries).
 */
export async function appendToManifest(store: ObjectStore, dataKey: string): Promise<AppendOutcome> {
  const slash = dataKey.lastIndexOf('/');
  const prefix = dataKey.slice(0, slash + 1);
  const name = dataKey.slice(slash + 1);
  const key = manifestKey(prefix);
  for (let round = 0; round < MAX_APPEND_ROUNDS; round++) {
    const current = await store.getVersioned(key);
    if (current === null) return 'no_manifest';
    let manifest;
    try {
      manifest = parsePartitionManifest(current.bytes);
    } catch (e) {
      if (e instanceof ManifestFormatError) return 'left_to_compactor';
      throw e;
    }
    if (manifest.files.includes(name)) return 'listed';
    let next: Uint8Array;
    try {
      next = encodePartitionManifest({ generation: manifest.generation + 1, files: [...manifest.files, name] });
    } catch (e) {
      if (e instanceof ManifestFormatError) return 'left_to_compactor';
      throw e;
    }
    if (next.byteLength > MAX_MANIFEST_BYTES || !Number.isSafeInteger(manifest.generation + 2))
      return 'left_to_compactor';
    const put = await store.putConditional(key, next, { ifMatch: current.etag });
    if (put.status === 'ok') return 'appended';
  }
  throw new Error(`${key}: lost ${MAX_APPEND_ROUNDS} compare-and-swap rounds adding ${name}`);
}
