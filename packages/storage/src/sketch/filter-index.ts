/**
 * @module sketch/filter-index
 * Where a data file's per-row-group filters are: the footer key-value entry {@link FILTERS_KEY} holds
 * `{"version":1,"ngram":5,"groups":[{"body":[offset,length],"trace_id":[…],"span_id":[…]}, …]}`, one object per
 * row group, each filter optional. The filters are ours, not Parquet's standard bloom filters: other readers
 * ignore the key, and DuckDB (1.5) prunes wrongly on standard bloom filters of BLOB columns such as the ids
 * (docs/design/storage-format.md, "Row-group filters"). A reader that cannot parse the entry, or meets another
 * version or window length, uses no filter — which costs pruning, never answers.
 */
import { NGRAM_BYTES } from './body-ngram-sketch.js';

/** Footer key of the filter index. */
export const FILTERS_KEY = 'sluice.filters';
/** Version of the filter layout and hashes. */
export const FILTERS_VERSION = 1;
/** The largest filter a reader fetches (a writer never writes a bigger one). */
export const FILTER_MAX_BYTES = 1 << 20;

/** What a row group has a filter of. */
export type FilterKind = 'body' | 'trace_id' | 'span_id';
const KINDS: readonly FilterKind[] = ['body', 'trace_id', 'span_id'];

/** A filter's bytes in the file. */
export interface FilterRange {
  readonly offset: number;
  readonly length: number;
}

/** One row group's filters. */
export type GroupFilters = Partial<Record<FilterKind, FilterRange>>;

/** The footer value for these row groups. */
export function encodeFilterIndex(groups: readonly GroupFilters[]): string {
  return JSON.stringify({
    version: FILTERS_VERSION,
    ngram: NGRAM_BYTES,
    groups: groups.map((g) =>
      Object.fromEntries(KINDS.flatMap((k) => (g[k] ? [[k, [g[k].offset, g[k].length]]] : []))),
    ),
  });
}

function range(v: unknown, byteLength: number): FilterRange | null {
  if (!Array.isArray(v) || v.length !== 2) return null;
  const [offset, length] = v as unknown[];
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length)) return null;
  const at = offset as number;
  const len = length as number;
  if (at < 4 || len < 32 || len % 32 !== 0 || len > FILTER_MAX_BYTES || at + len > byteLength) return null;
  return { offset: at, length: len };
}

/**
 * The filters of a file with `rowGroups` groups and `byteLength` bytes, from its footer value; null when absent
 * or unusable (wrong shape, version, window, group count, or a range outside the file).
 */
export function decodeFilterIndex(
  value: string | undefined,
  rowGroups: number,
  byteLength: number,
): readonly GroupFilters[] | null {
  if (value === undefined) return null;
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as { version?: unknown; ngram?: unknown; groups?: unknown };
  if (o.version !== FILTERS_VERSION || o.ngram !== NGRAM_BYTES || !Array.isArray(o.groups)) return null;
  if (o.groups.length !== rowGroups) return null;
  const out: GroupFilters[] = [];
  for (const g of o.groups as unknown[]) {
    if (typeof g !== 'object' || g === null || Array.isArray(g)) return null;
    const entry: GroupFilters = {};
    for (const k of KINDS) {
      const raw = (g as Record<string, unknown>)[k];
      if (raw === undefined) continue;
      const r = range(raw, byteLength);
      if (r === null) return null;
      entry[k] = r;
    }
    out.push(entry);
  }
  return out;
}
