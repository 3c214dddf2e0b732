/**
 * @module read-manifest
 * The compactor's reading of a partition's `manifest.json`: a manifest it can build on, or a corrupt one with the
 * reason it is quarantined for. Stricter than readers in one respect: a generation so large that the next commit
 * (n+1) or the compactor's defensive re-publish (n+2) would not be a safe integer is `manifest_invalid`, because the
 * compactor could never commit over it.
 */
import { MAX_MANIFEST_BYTES, isManifestFileName, parsePartitionManifest } from '@sluice/storage';
import type { CorruptReason, PartitionManifest } from '@sluice/storage';
import { detailOf } from './corrupt-input.js';

/** What {@link readManifest} found. */
export type ManifestRead =
  | { readonly status: 'ok'; readonly manifest: PartitionManifest }
  | {
      readonly status: 'corrupt';
      readonly reason: Extract<CorruptReason, 'manifest_invalid' | 'manifest_foreign_name'>;
      readonly detail: string;
      /** The generation it states, when that is still a usable number (kept so the rebuild goes above it). */
      readonly generation: number | null;
    };

/** True for a generation the compactor can still commit two generations above. */
function usableGeneration(g: unknown): g is number {
  return typeof g === 'number' && Number.isSafeInteger(g) && g >= 0 && Number.isSafeInteger(g + 2);
}

/** Classifies the bytes of `manifest.json`. */
export function readManifest(bytes: Uint8Array): ManifestRead {
  let manifest: PartitionManifest;
  try {
    manifest = parsePartitionManifest(bytes);
  } catch (e) {
    return classifyBroken(bytes, detailOf(e));
  }
  if (!usableGeneration(manifest.generation))
    return {
      status: 'corrupt',
      reason: 'manifest_invalid',
      detail: `generation ${manifest.generation} leaves no room for another commit`,
      generation: null,
    };
  return { status: 'ok', manifest };
}

/**
 * Why a manifest that failed to parse is corrupt, by the rules of `parsePartitionManifest` in their order (so the
 * compactor and the querier name the same reason for the same bytes): size, JSON, object, generation, file list,
 * then each name in turn (not a string: invalid; not a bare `.parquet` name: foreign; repeated: invalid).
 */
function classifyBroken(bytes: Uint8Array, detail: string): ManifestRead {
  const invalid = (generation: number | null): ManifestRead => ({
    status: 'corrupt',
    reason: 'manifest_invalid',
    detail,
    generation,
  });
  if (bytes.byteLength > MAX_MANIFEST_BYTES) return invalid(null);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return invalid(null);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid(null);
  const g = 'generation' in value ? value.generation : undefined;
  if (typeof g !== 'number' || !Number.isSafeInteger(g) || g < 0) return invalid(null);
  const generation = usableGeneration(g) ? g : null;
  const files = 'files' in value ? value.files : undefined;
  if (!Array.isArray(files)) return invalid(generation);
  const seen = new Set<string>();
  for (const f of files as unknown[]) {
    if (typeof f !== 'string') return invalid(generation);
    if (!isManifestFileName(f))
      return {
        status: 'corrupt',
        reason: 'manifest_foreign_name',
        detail: `names ${JSON.stringify(f.length > 100 ? `${f.slice(0, 100)}…` : f)}`,
        generation,
      };
    if (seen.has(f)) return invalid(generation);
    seen.add(f);
  }
  return invalid(generation);
}
