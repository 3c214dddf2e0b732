/**
 * @module page-span
 * The rows of a row group a time window can touch, from the page index on the effective time
 * (docs/design/query-engine.md, "Page index"): the column index gives each page's min/max, the offset index each
 * page's first row. Pages wholly before or after the window are left out; the span runs from the first kept page
 * to the end of the last, so the scan decodes and tests only those rows. The window test still runs on every row
 * of the span: the span only has to contain every row in the window, never to be exact.
 *
 * A missing, oversized or malformed index yields `undefined` (read the whole group): a bad index costs pruning,
 * never answers.
 */
import type { TimeWindow } from '@sluice/query';
import { LOG_COLUMNS } from '@sluice/storage';
import { readColumnIndex, readOffsetIndex } from 'hyparquet';
import type { RowRange } from './page-decoder.js';

/** The largest column or offset index read for one chunk. */
export const PAGE_INDEX_MAX_BYTES = 1 << 20;

/** What {@link windowRowSpan} needs from the file: its footer's row group and a byte source. */
export interface PageIndexFile {
  readonly rowGroup: {
    readonly num_rows: bigint;
    readonly columns: readonly {
      readonly meta_data?: { readonly path_in_schema: readonly string[] };
      readonly column_index_offset?: bigint;
      readonly column_index_length?: number;
      readonly offset_index_offset?: bigint;
      readonly offset_index_length?: number;
    }[];
  };
  readonly byteLength: number;
  read(start: number, end: number): Promise<Uint8Array>;
}

/** What the tracker offers: bytes held while the index is parsed. */
export interface SpanReserve {
  grow(bytes: number): number;
  shrink(bytes: number): void;
}

function range(offset: bigint | undefined, length: number | undefined, size: number): [number, number] | undefined {
  if (offset === undefined || length === undefined) return undefined;
  const start = Number(offset);
  if (!Number.isSafeInteger(start) || start < 0 || length <= 0 || length > PAGE_INDEX_MAX_BYTES) return undefined;
  if (start + length > size) return undefined;
  return [start, start + length];
}

/**
 * The row span of the group that may hold rows of `window` on the effective time, `{start, end}` with
 * `start === end` when no page can; `undefined` when the group has no usable page index. Store failures
 * propagate (the caller classifies them); a malformed index is `undefined`.
 */
export async function windowRowSpan(
  file: PageIndexFile,
  window: TimeWindow,
  reserve: SpanReserve,
): Promise<RowRange | undefined> {
  const chunk = file.rowGroup.columns.find(
    (c) =>
      c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === LOG_COLUMNS.effectiveTimeUnixNano,
  );
  if (chunk === undefined) return undefined;
  const ci = range(chunk.column_index_offset, chunk.column_index_length, file.byteLength);
  const oi = range(chunk.offset_index_offset, chunk.offset_index_length, file.byteLength);
  if (ci === undefined || oi === undefined) return undefined;
  const numRows = Number(file.rowGroup.num_rows);
  const held = reserve.grow(ci[1] - ci[0] + (oi[1] - oi[0]));
  try {
    const ciBytes = await file.read(ci[0], ci[1]);
    const oiBytes = await file.read(oi[0], oi[1]);
    let firsts: number[];
    let mins: unknown[];
    let maxs: unknown[];
    let nullPages: unknown[];
    let nullCounts: unknown[] | undefined;
    try {
      const view = (b: Uint8Array) => ({ view: new DataView(b.buffer, b.byteOffset, b.byteLength), offset: 0 });
      // Raw INT64 bounds: the TIMESTAMP annotation would make hyparquet convert them to dates.
      const index = readColumnIndex(view(ciBytes), { name: LOG_COLUMNS.effectiveTimeUnixNano, type: 'INT64' });
      const offsets = readOffsetIndex(view(oiBytes));
      firsts = offsets.page_locations.map((p) => Number(p.first_row_index));
      mins = index.min_values;
      maxs = index.max_values;
      nullPages = index.null_pages;
      nullCounts = index.null_counts;
    } catch {
      return undefined;
    }
    const n = firsts.length;
    if (n === 0 || mins.length !== n || maxs.length !== n || nullPages.length !== n) return undefined;
    if (firsts[0] !== 0) return undefined;
    for (let p = 1; p < n; p++)
      if (!Number.isSafeInteger(firsts[p]) || firsts[p]! <= firsts[p - 1]! || firsts[p]! >= numRows) return undefined;
    let start = -1;
    let end = -1;
    for (let p = 0; p < n; p++) {
      if (!outsideWindow(mins[p], maxs[p], nullPages[p], nullCounts?.[p], window)) {
        if (start < 0) start = firsts[p]!;
        end = p + 1 < n ? firsts[p + 1]! : numRows;
      }
    }
    return start < 0 ? { start: 0, end: 0 } : { start, end };
  } finally {
    reserve.shrink(held);
  }
}

/**
 * True only when the page certainly holds no row of the window: it has no NULL time (a NULL is never in a window,
 * but the scan's time column may fall back to another for it) and its bounds, both non-negative as signed int64
 * (so their order is the unsigned order the window test uses), lie wholly before or after the window.
 */
function outsideWindow(min: unknown, max: unknown, nullPage: unknown, nullCount: unknown, window: TimeWindow): boolean {
  if (nullPage !== false || (nullCount !== 0n && nullCount !== 0)) return false;
  if (typeof min !== 'bigint' || typeof max !== 'bigint' || min < 0n || max < min) return false;
  return max < window.fromNs || min >= window.toNs;
}
