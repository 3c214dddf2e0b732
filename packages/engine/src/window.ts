/**
 * @module window
 * The scan window and the row limit of a log query (packages/query/README.md): the last `range` wins (relative times
 * against `nowNs`, reversed bounds swapped), else `[now − default_window_secs, now]`; half-open `[from, to)` over
 * `effective_time_unix_nano`. Non-aggregation queries get exactly one limit: the last `limit` clamped to
 * `max_rows` (and to the MCP `rowCap`), else `default_rows`.
 */
import type { LogQuery, Query, TimeWindow } from '@sluice/query';
import { effectiveLimit, effectiveWindow } from '@sluice/query';

/** One hour in ns. */
export const HOUR_NS = 3_600_000_000_000n;

/** The resolved half-open window of a query. */
export function queryWindow(q: Query, nowNs: bigint, defaultWindowSecs: number): TimeWindow {
  return effectiveWindow(q, nowNs, defaultWindowSecs);
}

/** Row limits as configured. */
export interface RowLimits {
  readonly defaultRows: number;
  readonly maxRows: number;
}

/**
 * The effective record limit of a non-aggregation query. With `clamp: false` (observe mode) a `limit` above
 * `max_rows` is not clamped: the query gets what it asked for, and the querier reports the crossing.
 */
export function effectiveRowLimit(q: LogQuery, limits: RowLimits, rowCap?: number, clamp = true): number {
  const asked = effectiveLimit(q);
  const ceiling = clamp ? BigInt(limits.maxRows) : BigInt(Number.MAX_SAFE_INTEGER);
  let n = asked === undefined ? limits.defaultRows : asked > ceiling ? Number(ceiling) : Number(asked);
  if (asked === undefined) n = Math.min(n, limits.maxRows);
  if (rowCap !== undefined && rowCap >= 0) n = Math.min(n, Math.floor(rowCap));
  return Math.max(0, n);
}

/** True when `[startNs, endNs)` overlaps the window `[from, to)`. */
export function overlaps(w: TimeWindow, startNs: bigint, endNs: bigint): boolean {
  return startNs < w.toNs && endNs > w.fromNs;
}
