/**
 * @module partition-manifest
 * `manifest.json` of a data partition (docs/design/storage-format.md): `{"generation": <u64>, "files": ["<name>.parquet", …]}`.
 * When present it is authoritative: the listed files are the partition's live set and unlisted files are ignored
 * by readers. Absent, every `*.parquet` in the partition is live. Generations are committed by compare-and-swap
 * (`ObjectStore.putConditional`), so a reader sees the whole old set or the whole new set.
 */

import type { CorruptReason } from './storage-errors.js';

/** File name of a partition manifest, next to the partition's data files. */
export const MANIFEST_FILE_NAME = 'manifest.json';

/** Largest manifest accepted (a fixed query cap: docs/design/query-governance.md). */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/** A decoded partition manifest. */
export interface PartitionManifest {
  /** Commit counter: 1 for the first manifest of a partition, +1 per commit. */
  readonly generation: number;
  /** Bare, partition-local, lowercase `.parquet` names, no duplicates. */
  readonly files: readonly string[];
}

/**
 * Why a manifest was refused: `manifest_invalid` (too large, not UTF-8 JSON, not an object, no valid generation, no
 * file list, a name that is not a string or is listed twice) or `manifest_foreign_name` (it names anything but a
 * bare partition-local `.parquet` file: a path, `..`, another extension). The same tokens as {@link CorruptReason}.
 */
export type ManifestFormatReason = Extract<CorruptReason, 'manifest_invalid' | 'manifest_foreign_name'>;

/** Thrown by {@link parsePartitionManifest} for a manifest that violates the format. */
export class ManifestFormatError extends Error {
  override readonly name = 'ManifestFormatError';
  constructor(
    message: string,
    /** Machine-readable: a foreign name is told from an unparsable manifest without reading the message. */
    readonly reason: ManifestFormatReason = 'manifest_invalid',
  ) {
    super(message);
  }
}

const FILE_NAME_RE = /^[a-z0-9][a-z0-9._-]*\.parquet$/;

/** `<partitionPrefix>manifest.json` (the prefix ends with `/`). */
export function manifestKey(partitionPrefix: string): string {
  return `${partitionPrefix}${MANIFEST_FILE_NAME}`;
}

/** True for a name a manifest may list: bare, lowercase, ending in `.parquet`. */
export function isManifestFileName(name: string): boolean {
  return FILE_NAME_RE.test(name) && !name.includes('..');
}

/**
 * Decodes and validates a manifest. Unknown top-level fields are ignored (forward compatibility).
 * @throws {@link ManifestFormatError} when it is too large, not JSON, or breaks a rule of the format.
 */
export function parsePartitionManifest(bytes: Uint8Array): PartitionManifest {
  if (bytes.byteLength > MAX_MANIFEST_BYTES)
    throw new ManifestFormatError(`manifest of ${bytes.byteLength} bytes exceeds ${MAX_MANIFEST_BYTES}`);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ManifestFormatError('manifest is not UTF-8 JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ManifestFormatError('manifest is not an object');
  const generation = 'generation' in value ? value.generation : undefined;
  const files = 'files' in value ? value.files : undefined;
  // Above 2^53 − 1 a JSON number is no longer exact: two generations could compare equal, so it is refused.
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) {
    throw new ManifestFormatError('manifest generation is not a non-negative integer of at most 2^53 - 1');
  }
  if (!Array.isArray(files)) throw new ManifestFormatError('manifest files is not an array');
  const seen = new Set<string>();
  for (const f of files) {
    if (typeof f !== 'string') throw new ManifestFormatError('manifest lists a non-string file name');
    if (!isManifestFileName(f))
      throw new ManifestFormatError(
        `manifest lists an invalid file name ${JSON.stringify(f)}`,
        'manifest_foreign_name',
      );
    if (seen.has(f)) throw new ManifestFormatError(`manifest lists ${f} twice`);
    seen.add(f);
  }
  return { generation, files: [...seen] };
}

/**
 * Encodes a manifest as compact JSON (`{"generation":n,"files":[…]}`).
 * @throws {@link ManifestFormatError} when a name is invalid or repeated.
 */
export function encodePartitionManifest(manifest: PartitionManifest): Uint8Array {
  const bytes = new TextEncoder().encode(JSON.stringify({ generation: manifest.generation, files: manifest.files }));
  parsePartitionManifest(bytes); // the same rules on the way out
  return bytes;
}
