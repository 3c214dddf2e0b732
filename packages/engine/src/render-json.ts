/**
 * @module render-json
 * Hand-written JSON fragments for responses: u64/ns values go out as exact bare integers from `bigint` (never
 * through `Number`, never `JSON.stringify` of a bigint), strings through `JSON.stringify` (which is exact for them).
 */
import type { CorruptObject } from './corrupt-objects.js';
import { MAX_SKIPPED_OBJECTS_LISTED } from './corrupt-objects.js';

/** A JSON string literal. */
export function jsonString(s: string): string {
  return JSON.stringify(s);
}

/** An exact JSON integer from a u64 stored as int64 (the same 64 bits). */
export function jsonU64(v: bigint): string {
  return BigInt.asUintN(64, v).toString();
}

/** A JSON number for a finite double, `null` otherwise. */
export function jsonNumber(v: number | null): string {
  return v === null || !Number.isFinite(v) ? 'null' : JSON.stringify(v);
}

/** The four-field stats object of every response. */
export interface QueryStats {
  row_groups_scanned: number;
  row_groups_pruned: number;
  bytes_read: number;
  rows_excluded: number;
}

/** `{"row_groups_scanned":…,…}`, with the skipped objects appended when there are any ({@link renderSkipped}). */
export function renderStats(s: QueryStats, skipped: readonly CorruptObject[] = []): string {
  return (
    `{"row_groups_scanned":${s.row_groups_scanned},"row_groups_pruned":${s.row_groups_pruned},` +
    `"bytes_read":${s.bytes_read},"rows_excluded":${s.rows_excluded}${renderSkipped(skipped)}}`
  );
}

/**
 * The stats fields of a response that left objects out: `,"objects_skipped":n,"skipped_objects":[{key,reason}…]`
 * (the first {@link MAX_SKIPPED_OBJECTS_LISTED} named), or `''` when nothing was skipped, so the response of a
 * query that met no damage is byte for byte what it was before objects could be skipped.
 */
export function renderSkipped(skipped: readonly CorruptObject[]): string {
  if (skipped.length === 0) return '';
  const named = skipped
    .slice(0, MAX_SKIPPED_OBJECTS_LISTED)
    .map((o) => `{"key":${jsonString(o.key)},"reason":${jsonString(o.reason)}}`);
  return `,"objects_skipped":${skipped.length},"skipped_objects":[${named.join(',')}]`;
}

/** Fresh zeroed stats. */
export function emptyStats(): QueryStats {
  return { row_groups_scanned: 0, row_groups_pruned: 0, bytes_read: 0, rows_excluded: 0 };
}
