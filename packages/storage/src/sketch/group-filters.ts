/**
 * @module sketch/group-filters
 * Reader side of the per-row-group filters (docs/design/storage-format.md, "Row-group filters"): where a group's
 * filter is (its length is what a caller reserves before the check reads it), and the checks. Every check
 * answers "may match" when the filter is absent or unusable, so a file without filters — any file written before
 * them, or by another writer — is read exactly as before.
 */
import type { ParquetFileHandle } from '../parquet-reader.js';
import { sketchMayContain } from './body-ngram-sketch.js';
import { bloomWordsFrom, columnBloomMayContain } from './column-bloom.js';
import {
  decodeFilterIndex,
  FILTERS_KEY,
  type FilterKind,
  type FilterRange,
  type GroupFilters,
} from './filter-index.js';

const indexes = new WeakMap<object, readonly GroupFilters[] | null>();

function filterIndex(file: ParquetFileHandle): readonly GroupFilters[] | null {
  if (indexes.has(file.metadata)) return indexes.get(file.metadata) ?? null;
  const value = file.metadata.key_value_metadata?.find((kv) => kv.key === FILTERS_KEY)?.value;
  const decoded = decodeFilterIndex(value, file.rowGroups.length, file.byteLength);
  indexes.set(file.metadata, decoded);
  return decoded;
}

/** The `kind` filter of group `index`, or null. */
export function filterRange(file: ParquetFileHandle, index: number, kind: FilterKind): FilterRange | null {
  return filterIndex(file)?.[index]?.[kind] ?? null;
}

/**
 * False only when group `index` certainly has no row whose `column` is `value` (the id's 16 or 8 bytes). Reads
 * the filter ({@link filterRange} gives its size).
 */
export async function groupMayContainValue(
  file: ParquetFileHandle,
  index: number,
  column: 'trace_id' | 'span_id',
  value: Uint8Array,
): Promise<boolean> {
  const range = filterRange(file, index, column);
  if (range === null) return true;
  return columnBloomMayContain(bloomWordsFrom(await file.readBytes(range.offset, range.length)), value);
}

/**
 * False only when no body in group `index` can contain a needle with these window hashes
 * (`needleNgramHashes`). Reads the sketch ({@link filterRange} gives its size).
 */
export async function groupMayContainText(
  file: ParquetFileHandle,
  index: number,
  hashes: readonly { readonly hi: number; readonly lo: number }[],
): Promise<boolean> {
  if (hashes.length === 0) return true;
  const range = filterRange(file, index, 'body');
  if (range === null) return true;
  return sketchMayContain(bloomWordsFrom(await file.readBytes(range.offset, range.length)), hashes);
}
