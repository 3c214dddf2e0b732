/**
 * @module log-scan
 * Step 2 of a log query (docs/design/query-engine.md): list the live files, then per file and row group prune,
 * read the first-phase columns, check the tenant, select the matching rows, and hand them to the query's sink —
 * the aggregator, the record collector or the stream — reading the sink's columns only for groups with matches
 * that are still needed. Every reservation is given back as its group or file is done.
 */
import type { TimeWindow } from '@sluice/query';
import type { FooterCache, ObjectStore } from '@sluice/storage';
import { LOG_COLUMNS, StorageCorruptError, parseDataKey } from '@sluice/storage';
import type { Aggregator } from './aggregate.js';
import { aggregationColumns } from './aggregate.js';
import { AttrReader } from './attr-value.js';
import type { CorruptObjects } from './corrupt-objects.js';
import { cellReader } from './decode/string-vector.js';
import { windowTest } from './decode/time-window.js';
import type { RowRange } from './decode/page-decoder.js';
import { windowRowSpan } from './decode/page-span.js';
import { QueryAbort, checkAborted } from './failures.js';
import { FIELD_COLUMN } from './fields.js';
import type { LineStream } from './line-stream.js';
import type { LiveFile } from './listing.js';
import { listLiveFiles } from './listing.js';
import type { LogPlan } from './log-plan.js';
import type { Columns } from './predicate-eval.js';
import type { RecordCollector } from './records.js';
import { RECORD_COLUMNS, renderLogRow, sortValue } from './records.js';
import type { QueryStats } from './render-json.js';
import { emptyStats } from './render-json.js';
import type { ColumnDecoderChoice, OpenedFile } from './scan.js';
import { DATA_FILE_COLUMNS, classified, openReserved, readReservedWith } from './scan.js';
import type { MemoryTracker } from './tracker.js';
import type { ScanHelpers } from './scan-share.js';
import { mergesExactly, splitShare } from './scan-share.js';
import type { FieldName } from '@sluice/query';

/** Where a scan's matches go: exactly one of these is set for a log query. */
export interface ScanSinks {
  readonly aggregator?: Aggregator;
  readonly collector?: RecordCollector;
  readonly stream?: LineStream;
}

/** What a scan needs besides the plan. */
export interface ScanContext {
  readonly store: ObjectStore;
  readonly tenant: string;
  readonly limits: { readonly maxListedObjects: number; readonly maxFiles: number };
  readonly signal?: AbortSignal;
  readonly hooks?: {
    afterListing?(info: { readonly files: readonly LiveFile[]; readonly listedObjects: number }): Promise<void> | void;
    beforeRowGroup?(info: { readonly key: string; readonly index: number }): Promise<void> | void;
  };
  readonly decoder: ColumnDecoderChoice;
  /** The worker's footer cache, if any (see `ExecuteOptions.footers`). */
  readonly footers?: FooterCache;
  readonly tracker: MemoryTracker;
  readonly corrupt: CorruptObjects;
  /** Helper workers this scan may lend a share of its files to (docs/design/query-engine.md, "Parallel scans"). */
  readonly helpers?: ScanHelpers;
  /** A helper's share: scan exactly these files (already listed by the coordinator) instead of listing. */
  readonly share?: readonly LiveFile[];
}

/** What a scan found. */
export interface ScanResult {
  /** Every match (the response's `rows`). */
  readonly rows: number;
  readonly stats: QueryStats;
  /** Records a stream without sort sent during the scan. */
  readonly streamedRecords: number;
}

/** Runs the scan step. */
export async function scanLogFiles(ctx: ScanContext, plan: LogPlan, sinks: ScanSinks): Promise<ScanResult> {
  const { store, tenant, limits, signal, hooks, decoder, footers, tracker, corrupt } = ctx;
  const { window, predicate, pruner, filters, agg, sortField, projectKeys, rowLimit, phase1, tenantStatsTrusted } =
    plan;
  const { aggregator, collector, stream } = sinks;
  const stats = emptyStats();
  let streamedRecords = 0;
  // A helper's share comes listed by its coordinator (docs/design/query-engine.md, "Parallel scans").
  const { files, listed } =
    ctx.share !== undefined
      ? { files: ctx.share, listed: 0 }
      : await listLiveFiles(store, tenant, window, limits, signal, corrupt);
  if (hooks?.afterListing && ctx.share === undefined) await hooks.afterListing({ files, listedObjects: listed });
  let rows = 0;
  // `sort ts desc | limit n` walks the partitions newest first: once the top n are in, a partition whose hour
  // ends at or before the worst of them cannot place a row (a row's ts lies in its partition's hour, or is 0), so
  // its groups are counted without reading the sort column, and without reading anything when the statistics
  // cover them. Ties between equal ts are decided by the file order of the listing, whatever the visit order.
  const newestFirst = collector?.sorted === true && sortField === 'ts' && plan.sortStage?.descending === true;
  const visits = files.map((f, ordinal) => ({ f, ordinal }));
  if (newestFirst) visits.reverse();
  // An aggregation whose partial results merge exactly may lend the later files to a helper worker; the files
  // stay in listing order on both sides, so the merged answer is the one this worker alone would give.
  const split =
    ctx.helpers !== undefined && aggregator !== undefined && agg !== undefined && mergesExactly(agg)
      ? splitShare(visits)
      : undefined;
  const lent = split !== undefined ? ctx.helpers?.lend(split.theirs.map((v) => v.f)) : undefined;
  // Settled here too, so a helper's failure while this worker scans its own share is never left unobserved.
  lent?.catch(() => undefined);
  await scanVisits(split !== undefined ? split.mine : visits);
  if (split !== undefined && lent !== undefined) {
    const answer = await lent;
    checkAborted(signal);
    if (answer.status === 'failed') throw new QueryAbort(answer.failure);
    if (answer.status === 'refused') await scanVisits(split.theirs);
    else {
      const { partial } = answer;
      for (const o of partial.corrupt) corrupt.absorb(new StorageCorruptError(o.key, o.reason));
      rows += partial.rows;
      stats.row_groups_scanned += partial.stats.row_groups_scanned;
      stats.row_groups_pruned += partial.stats.row_groups_pruned;
      stats.bytes_read += partial.stats.bytes_read;
      aggregator?.merge(partial.groups, partial.excluded);
    }
  }
  return { rows, stats, streamedRecords };

  async function scanVisits(list: readonly { f: LiveFile; ordinal: number }[]): Promise<void> {
    for (const { f, ordinal } of list) {
      checkAborted(signal);
      const partitionEnd = newestFirst ? partitionEndNs(f.key) : undefined;
      /** The row's place in listing order: decides between equal sort keys. */
      const orderOf = (row: number): number => ordinal * 2 ** 32 + row;
      let opened: OpenedFile;
      try {
        opened = await openReserved(store, f.key, f.size, tracker, DATA_FILE_COLUMNS, signal, footers);
      } catch (e) {
        if (corrupt.absorb(e)) continue; // skip: the file is left out
        throw e;
      }
      const file = opened.handle;
      let materialBytes = 0;
      /** Matches of the row group in progress, counted before its output columns are read. */
      let groupRows = 0;
      try {
        const hasEffective = file.columnNames.includes(LOG_COLUMNS.effectiveTimeUnixNano);
        for (const g of file.rowGroups) {
          groupRows = 0;
          if (!pruner.mayMatch(g) || (filters.active && !(await filters.mayMatch(file, g.index, tracker)))) {
            stats.row_groups_pruned++;
            continue;
          }
          const timeColumn = hasEffective ? LOG_COLUMNS.effectiveTimeUnixNano : LOG_COLUMNS.timeUnixNano;
          // A row group whose time statistics lie wholly inside the window needs no per-row window test, and its
          // time column is read only if something else needs it.
          const covered = coveredByWindow(
            g.columns.find((c) => c.name === timeColumn),
            window,
          );
          // Otherwise the page index narrows it to the rows of the pages the window touches; the reference decoder
          // reads whole groups, as it always did (docs/design/query-engine.md, "Page index").
          const span =
            covered || !hasEffective || decoder === 'hyparquet'
              ? undefined
              : await pageSpan(opened, g.index, window, tracker);
          if (span !== undefined && span.start >= span.end) {
            stats.row_groups_pruned++;
            continue;
          }
          const lo = span?.start ?? 0;
          const hi = span?.end ?? g.numRows;
          stats.row_groups_scanned++;
          checkAborted(signal);
          const want = new Set(phase1);
          if (!hasEffective) want.add(LOG_COLUMNS.timeUnixNano);
          if (
            covered &&
            !predicate.columns.has(timeColumn) &&
            (sortField === undefined || FIELD_COLUMN[sortField] !== timeColumn)
          ) {
            want.delete(timeColumn);
          }
          const tcol = g.columns.find((c) => c.name === LOG_COLUMNS.tenantId);
          const tenantByStats = tenantStatsTrusted && tcol?.min === tenant && tcol.max === tenant;
          if (!tenantByStats) want.add(LOG_COLUMNS.tenantId);
          const hopeless =
            partitionEnd !== undefined && collector !== undefined && !collector.accepts(partitionEnd - 1n, 0);
          if (hopeless) {
            if (covered && predicate.always && tenantByStats) {
              rows += g.numRows;
              continue;
            }
            const sortColumn = FIELD_COLUMN[sortField as FieldName];
            if (!predicate.columns.has(sortColumn) && !(sortColumn === timeColumn && !covered)) want.delete(sortColumn);
          }
          if (hooks?.beforeRowGroup) await hooks.beforeRowGroup({ key: f.key, index: g.index });
          checkAborted(signal);
          const first = await readReservedWith(opened, g.index, want, tracker, decoder, span, 'group', plan.searchOnly);
          let second: { cols: Columns; reserved: number } | undefined;
          const matchBytes = tracker.grow(g.numRows * 4);
          try {
            const cols = first.cols;
            if (!tenantByStats) {
              const t = cellReader(cols[LOG_COLUMNS.tenantId]);
              for (let i = lo; i < hi; i++) {
                if (t(i) !== tenant) throw new StorageCorruptError(f.key, 'tenant_mismatch');
              }
            }
            const attrs = new AttrReader();
            const test = predicate.bind(cols, attrs);
            /** The matching rows in order; `null` when every row of the group matches (nothing to loop over). */
            let sel: Int32Array | null = null;
            let m = g.numRows;
            if (!covered || !predicate.always) {
              const inWindow = covered ? undefined : windowTest(cols[timeColumn], window);
              const matched = new Int32Array(g.numRows);
              m = 0;
              for (let i = lo; i < hi; i++) {
                if (inWindow !== undefined && !inWindow(i)) continue;
                if (!test(i)) continue;
                matched[m++] = i;
              }
              sel = matched;
            }
            const rowOf = (k: number): number => (sel === null ? k : (sel[k] as number));
            rows += m;
            groupRows = m;
            if (m === 0) continue;
            // The record columns the scan did not read; rendering them is material, kept out of bytes_read.
            // With `take` (the first `take` matches are all that will be rendered), only the pages holding rows from
            // the first to the last of those are decoded, into buffers of that range alone (the slice layout:
            // rendering reads row by row) (docs/design/query-engine.md, "Targeted rendering").
            const readRecordRest = async (take?: number): Promise<Columns> => {
              const before = opened.source.bytesRead;
              const rows =
                take !== undefined && take > 0 && take < g.numRows
                  ? { start: rowOf(0), end: rowOf(Math.min(take, m) - 1) + 1 }
                  : undefined;
              second = await readReservedWith(
                opened,
                g.index,
                RECORD_COLUMNS.filter((c) => !want.has(c)),
                tracker,
                decoder,
                rows,
                'slice',
              );
              materialBytes += opened.source.bytesRead - before;
              return { ...cols, ...second.cols };
            };
            if (aggregator && agg) {
              const effective = g.columns.find((c) => c.name === LOG_COLUMNS.effectiveTimeUnixNano);
              const aggCols = aggregationColumns(agg, effective !== undefined && effective.nullCount === 0);
              // Group-key and value columns are part of the count scan, so they stay in bytes_read.
              second = await readReservedWith(
                opened,
                g.index,
                [...aggCols].filter((c) => !want.has(c)),
                tracker,
                decoder,
                span,
              );
              const all: Columns = { ...cols, ...second.cols };
              if (!aggregator.addBatch(all, attrs, sel, m)) {
                const add = aggregator.bind(all, new AttrReader());
                for (let k = 0; k < m; k++) add(rowOf(k));
              }
            } else if (collector) {
              if (hopeless) continue;
              let needed = false;
              if (collector.sorted) {
                for (let k = 0; k < m && !needed; k++)
                  needed = collector.accepts(
                    sortValue(cols, rowOf(k), sortField as FieldName),
                    orderOf(g.rowStart + rowOf(k)),
                  );
              } else needed = collector.wantsMore;
              if (!needed) continue;
              const all = await readRecordRest(collector.sorted ? undefined : collector.remaining);
              for (let k = 0; k < m; k++) {
                const i = rowOf(k);
                if (collector.sorted) {
                  const key = sortValue(all, i, sortField as FieldName);
                  const order = orderOf(g.rowStart + i);
                  if (collector.accepts(key, order)) collector.add(renderLogRow(all, i, projectKeys), key, order);
                } else {
                  if (!collector.wantsMore) break;
                  collector.addRow(all, i, projectKeys);
                }
              }
            } else if (stream) {
              if (streamedRecords >= rowLimit) continue;
              const all = await readRecordRest(rowLimit - streamedRecords);
              for (let k = 0; k < m && streamedRecords < rowLimit; k++) {
                const wait = stream.push(renderLogRow(all, rowOf(k), projectKeys));
                streamedRecords++;
                if (wait) await wait;
              }
            }
          } finally {
            tracker.shrink(matchBytes);
            if (second) tracker.shrink(second.reserved);
            tracker.shrink(first.reserved);
          }
        }
      } catch (e) {
        // skip: the rest of the file is left out; what its earlier row groups contributed stays counted. A group
        // whose output columns failed contributed no records or groups, so its matches leave `rows` too.
        if (!corrupt.absorb(e)) throw e;
        rows -= groupRows;
      } finally {
        stats.bytes_read += opened.source.bytesRead - materialBytes;
        tracker.shrink(opened.reserved);
      }
    }
  }
}

/** {@link windowRowSpan} over an opened file's row group; a store failure is classified as a read would be. */
async function pageSpan(
  opened: OpenedFile,
  index: number,
  window: TimeWindow,
  tracker: MemoryTracker,
): Promise<RowRange | undefined> {
  const rowGroup = opened.handle.metadata.row_groups[index];
  if (rowGroup === undefined) return undefined;
  const read = async (start: number, end: number): Promise<Uint8Array> => {
    try {
      return await opened.source.read(start, end);
    } catch (e) {
      throw classified(e, opened.key);
    }
  };
  return windowRowSpan({ rowGroup, byteLength: opened.source.byteLength, read }, window, tracker);
}

/** The end of a data file's hour partition in ns, from its key (`undefined` for a key that is not one). */
function partitionEndNs(key: string): bigint | undefined {
  const parts = parseDataKey(key);
  return parts === null ? undefined : (BigInt(parts.hourStartMs) + 3_600_000n) * 1_000_000n;
}

/** True when a row group's time column has no NULLs and its min/max lie inside `[fromNs, toNs)`. */
function coveredByWindow(
  column: { min?: unknown; max?: unknown; nullCount?: number | bigint } | undefined,
  window: TimeWindow,
): boolean {
  if (column === undefined || typeof column.min !== 'bigint' || typeof column.max !== 'bigint') return false;
  if (column.nullCount === undefined || Number(column.nullCount) !== 0) return false;
  const min = BigInt.asUintN(64, column.min);
  const max = BigInt.asUintN(64, column.max);
  return min >= window.fromNs && max < window.toNs && min <= max;
}
