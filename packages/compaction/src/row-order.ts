/**
 * @module row-order
 * The compacted file's row order (packages/compaction/README.md): `resource.service.name` (NULL first, then by Unicode code
 * point = UTF-8 byte order, as S3 keys and DuckDB's default VARCHAR order), then `time_unix_nano` (as the u64 it
 * is). Equal keys keep input order: input file (live set sorted by name), then row ordinal within the file.
 */
import { compareKeys, serviceNameOf } from '@sluice/storage';
import type { StoredLogRow } from '@sluice/storage';

/** The sort key of one row. */
export interface RowSortKey {
  readonly service: string | null;
  readonly time: bigint;
}

/** The sort key of a stored row. */
export function sortKeyOf(row: StoredLogRow): RowSortKey {
  return { service: serviceNameOf(row.record), time: row.record.timeUnixNano };
}

/** Compares two sort keys: negative when `a` sorts first, 0 when equal (the caller breaks ties by input position). */
export function compareSortKeys(a: RowSortKey, b: RowSortKey): number {
  if (a.service !== b.service) {
    if (a.service === null) return -1;
    if (b.service === null) return 1;
    const c = compareKeys(a.service, b.service);
    if (c !== 0) return c;
  }
  return a.time < b.time ? -1 : a.time > b.time ? 1 : 0;
}

/** Sorts rows in the compacted order, stably (equal keys keep their position, i.e. their row ordinal). */
export function sortRowsStable(rows: readonly StoredLogRow[]): StoredLogRow[] {
  const keyed = rows.map((row, i) => ({ row, key: sortKeyOf(row), i }));
  keyed.sort((a, b) => compareSortKeys(a.key, b.key) || a.i - b.i);
  return keyed.map((k) => k.row);
}
