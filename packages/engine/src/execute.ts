/**
 * @module execute
 * One log query, end to end, under the shared memory pool: window → partition walk (caps) → per file footer and
 * row-group pruning → per row group: reserve, decode the predicate's columns, evaluate, and only for groups with
 * matches that are still needed decode the output columns → records or aggregation → the JSON body through the
 * result budget — or, for a streamed query, as NDJSON lines through a {@link LineStream} while the scan runs.
 * Every failure path gives back what the query reserved.
 */
import type { CeilingCrossed, CeilingEnforcement, QueryReservation } from '@sluice/limits';
import type { ExecuteOutcome } from './outcome.js';
import type { AggregateStage, CountStage, FieldName, LogQuery, Query, TimeWindow } from '@sluice/query';
import { FIELD_NAMES, aggregationStage, validateQuery } from '@sluice/query';
import type { FooterCache, ObjectStore } from '@sluice/storage';
import { LOG_COLUMNS, StorageCorruptError } from '@sluice/storage';
import { Aggregator, aggregationColumns, type Group } from './aggregate.js';
import { AttrReader } from './attr-value.js';
import type { CorruptObjectPolicy, CorruptObjects } from './corrupt-objects.js';
import { createCorruptObjects } from './corrupt-objects.js';
import { runDrift } from './drift.js';
import { checkAborted, failureOf } from './failures.js';
import { FIELD_COLUMN } from './fields.js';
import { LineStream, type LineSink } from './line-stream.js';
import type { LiveFile } from './listing.js';
import { listLiveFiles } from './listing.js';
import { compilePredicate } from './predicate-eval.js';
import type { Columns } from './predicate-eval.js';
import { createFilterPruner } from './filter-pruning.js';
import { createPruner } from './pruning.js';
import { RECORD_COLUMNS, RecordCollector, projectedKeys, renderLogRow, sortValue } from './records.js';
import { emptyStats, jsonNumber, jsonString, renderStats } from './render-json.js';
import type { OpenedFile } from './scan.js';
import type { ColumnDecoderChoice } from './scan.js';
import { DATA_FILE_COLUMNS, openReserved, readReservedWith } from './scan.js';
import { cellReader } from './decode/string-vector.js';
import { windowTest } from './decode/time-window.js';
import { renderThroughBudget } from './result-body.js';
import { MemoryTracker, type HeapReclaimer } from './tracker.js';
import { effectiveRowLimit, queryWindow } from './window.js';

/** Query caps (docs/design/query-governance.md). */
export interface ExecuteLimits {
  readonly defaultRows: number;
  readonly maxRows: number;
  readonly maxListedObjects: number;
  readonly maxFiles: number;
  readonly maxResultBytes: number;
  /**
   * `querier.limits.enforcement`: in `observe` mode `maxResultBytes` and `maxRows` do not refuse or clamp; a
   * crossing is reported in the outcome's `crossed`. Default `enforce`.
   */
  readonly enforcement?: CeilingEnforcement;
}

/** Deterministic test seams; each is awaited. */
export interface ExecuteHooks {
  /** After the file set is resolved, before any footer read. */
  afterListing?(info: { readonly files: readonly LiveFile[]; readonly listedObjects: number }): Promise<void> | void;
  /** Before a row group that survived pruning is read. */
  beforeRowGroup?(info: { readonly key: string; readonly index: number }): Promise<void> | void;
}

/** Input of {@link executeQuery}. */
export interface ExecuteOptions {
  readonly store: ObjectStore;
  readonly tenant: string;
  /** The IR; relative times resolve against `nowNs`. */
  readonly query: Query;
  readonly nowNs: bigint;
  readonly defaultWindowSecs: number;
  readonly limits: ExecuteLimits;
  /** Everything the query holds is reserved on it. */
  readonly reservation: QueryReservation;
  /** MCP `query_logs` `limit`: a hard cap on records. */
  readonly rowCap?: number;
  /** Cancellation (the client went away, or the deadline passed); also cancels the pending storage call. */
  readonly signal?: AbortSignal;
  /** `querier.on_corrupt_object`: fail the query on a corrupt object (default), or leave the object out. */
  readonly onCorruptObject?: CorruptObjectPolicy;
  readonly hooks?: ExecuteHooks;
  /** Runs before each decode with the query's held bytes (see {@link HeapReclaimer}). */
  readonly reclaim?: HeapReclaimer;
  /**
   * The query worker's footer cache (docs/design/query-governance.md, "Footer cache"): data-file footers found
   * there are not read again, and footers read are offered to it. `stats.bytes_read` counts bytes actually read
   * from storage, so a cached footer adds nothing to it.
   */
  readonly footers?: FooterCache;
  /**
   * Stream a log query's result as NDJSON (docs/design/query-governance.md, "Streamed results"): each record
   * (or aggregation group) is one line sent through `sink` as the scan finds it, in batches; the outcome's `body`
   * is then only the trailer line `{"rows":n,"stats":{…}}`. Ignored for drift statements (answered whole).
   */
  readonly stream?: { readonly sink: LineSink; readonly batchBytes?: number };
  /**
   * Which decoder reads data files (docs/design/query-engine.md, "Columnar decode"): `columnar` (default) is
   * Sluice's page decoder with hyparquet for the columns it does not handle; `hyparquet` is the reference path
   * the property tests compare it with.
   */
  readonly decoder?: ColumnDecoderChoice;
}

export type { QueryFailure } from './failures.js';
export type { QueryStats } from './render-json.js';

export type { ExecuteOutcome } from './outcome.js';

/** Runs one query. Never throws: every failure is a typed outcome, with the reservation given back. */
export async function executeQuery(options: ExecuteOptions): Promise<ExecuteOutcome> {
  const tracker = new MemoryTracker(options.reservation, options.reclaim);
  const corrupt = createCorruptObjects(options.onCorruptObject);
  try {
    checkAborted(options.signal);
    if (options.query.kind === 'drift') {
      const w = queryWindow(options.query, options.nowNs, options.defaultWindowSecs);
      return await runDrift({ ...options, window: w, tracker, corrupt });
    }
    const valid = validateQuery(options.query);
    if (!valid.ok)
      return { status: 'error', error: { kind: 'invalid_query', message: valid.error.message }, corrupt: [] };
    return await runLogQuery(options, options.query, tracker, corrupt);
  } catch (e) {
    tracker.releaseAll();
    return { status: 'error', error: failureOf(e, options.signal), corrupt: corrupt.met };
  }
}

async function runLogQuery(
  options: ExecuteOptions,
  q: LogQuery,
  tracker: MemoryTracker,
  corrupt: CorruptObjects,
): Promise<ExecuteOutcome> {
  const { store, tenant, limits, signal, hooks } = options;
  const decoder = options.decoder ?? 'columnar';
  const window = queryWindow(q, options.nowNs, options.defaultWindowSecs);
  const predicate = compilePredicate(q.predicate);
  const pruner = createPruner(q.predicate, window);
  const filters = createFilterPruner(q.predicate);
  const agg: CountStage | AggregateStage | undefined = aggregationStage(q);
  let sortStage: { key: string; descending: boolean } | undefined;
  let projectKeys: Set<string> | undefined;
  for (const s of q.stages) {
    if (s.kind === 'sort') sortStage = s;
    if (s.kind === 'project') projectKeys = projectedKeys(s.paths);
  }
  const stats = emptyStats();
  const enforcement = limits.enforcement ?? 'enforce';
  const rowLimit = agg ? 0 : effectiveRowLimit(q, limits, options.rowCap, enforcement === 'enforce');
  const stream =
    options.stream === undefined
      ? undefined
      : new LineStream({
          sink: options.stream.sink,
          tracker,
          maxResultBytes: limits.maxResultBytes,
          enforcement,
          ...(options.stream.batchBytes !== undefined ? { batchBytes: options.stream.batchBytes } : {}),
        });
  /** Records sent by a streamed query without sort, which sends each record as the scan finds it. */
  let streamedRecords = 0;
  const aggregator = agg === undefined ? undefined : new Aggregator(agg, tracker);
  const sortField =
    !agg && sortStage && (FIELD_NAMES as readonly string[]).includes(sortStage.key)
      ? (sortStage.key as FieldName)
      : undefined;
  // A stream sends unsorted records as they are found; sorted ones need the top-k heap complete first.
  const collector =
    agg || (stream !== undefined && sortField === undefined)
      ? undefined
      : new RecordCollector({
          limit: rowLimit,
          tracker,
          maxResultBytes: limits.maxResultBytes,
          enforcement,
          ...(sortField !== undefined
            ? { sort: { field: sortField, descending: sortStage?.descending === true } }
            : {}),
        });

  const { files, listed } = await listLiveFiles(store, tenant, window, limits, signal, corrupt);
  if (hooks?.afterListing) await hooks.afterListing({ files, listedObjects: listed });

  const phase1 = new Set<string>(predicate.columns);
  phase1.add(LOG_COLUMNS.effectiveTimeUnixNano);
  if (sortField !== undefined) phase1.add(FIELD_COLUMN[sortField]);
  const tenantStatsTrusted = Buffer.byteLength(tenant, 'utf8') < 16;
  let rows = 0;

  for (const f of files) {
    checkAborted(signal);
    let opened: OpenedFile;
    try {
      opened = await openReserved(store, f.key, f.size, tracker, DATA_FILE_COLUMNS, signal, options.footers);
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
        stats.row_groups_scanned++;
        checkAborted(signal);
        if (hooks?.beforeRowGroup) await hooks.beforeRowGroup({ key: f.key, index: g.index });
        checkAborted(signal);
        const want = new Set(phase1);
        const timeColumn = hasEffective ? LOG_COLUMNS.effectiveTimeUnixNano : LOG_COLUMNS.timeUnixNano;
        if (!hasEffective) want.add(LOG_COLUMNS.timeUnixNano);
        // A row group whose time statistics lie wholly inside the window needs no per-row window test, and its
        // time column is read only if something else needs it.
        const covered = coveredByWindow(
          g.columns.find((c) => c.name === timeColumn),
          window,
        );
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
        const first = await readReservedWith(opened, g.index, want, tracker, decoder);
        let second: { cols: Columns; reserved: number } | undefined;
        const matchBytes = tracker.grow(g.numRows * 4);
        try {
          const cols = first.cols;
          if (!tenantByStats) {
            const t = cellReader(cols[LOG_COLUMNS.tenantId]);
            for (let i = 0; i < g.numRows; i++) {
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
            for (let i = 0; i < g.numRows; i++) {
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
          // the first to the last of those are decoded (docs/design/query-engine.md, "Targeted rendering").
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
            );
            const all: Columns = { ...cols, ...second.cols };
            if (!aggregator.addBatch(all, attrs, sel, m)) {
              const add = aggregator.bind(all, new AttrReader());
              for (let k = 0; k < m; k++) add(rowOf(k));
            }
          } else if (collector) {
            let needed = false;
            if (collector.sorted) {
              for (let k = 0; k < m && !needed; k++)
                needed = collector.accepts(sortValue(cols, rowOf(k), sortField as FieldName));
            } else needed = collector.wantsMore;
            if (!needed) continue;
            const all = await readRecordRest(collector.sorted ? undefined : collector.remaining);
            for (let k = 0; k < m; k++) {
              const i = rowOf(k);
              if (collector.sorted) {
                const key = sortValue(all, i, sortField as FieldName);
                if (collector.accepts(key)) collector.add(renderLogRow(all, i, projectKeys), key);
              } else {
                if (!collector.wantsMore) break;
                collector.add(renderLogRow(all, i, projectKeys));
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

  checkAborted(signal);
  let groups = aggregator?.groups();
  if (groups && aggregator && agg && sortStage) {
    const key = sortStage.key;
    const termIndex = agg.by.findIndex((t) => t.kind === 'path' && t.path.kind === 'field' && t.path.name === key);
    const dir = sortStage.descending ? -1 : 1;
    const byValue = key === 'value' || (agg.kind === 'aggregate' && key === agg.fn);
    if (key === 'count' || byValue || termIndex >= 0) {
      groups = [...groups].sort((a, b) => {
        if (key === 'count') return dir * (a.count - b.count);
        if (byValue) {
          const va = aggregator.valueOf(a);
          const vb = aggregator.valueOf(b);
          if (va === null || vb === null) return va === vb ? 0 : va === null ? 1 : -1;
          return dir * (va - vb);
        }
        const ka = a.key[termIndex] ?? '';
        const kb = b.key[termIndex] ?? '';
        return dir * (ka < kb ? -1 : ka > kb ? 1 : 0);
      });
    }
  }
  stats.rows_excluded = aggregator?.excluded ?? 0;
  const records = collector?.drain() ?? [];
  const returned = records.length + streamedRecords;
  const crossed: CeilingCrossed[] = [];
  if (!agg && returned > limits.maxRows) crossed.push({ limit: 'max_rows', value: returned, ceiling: limits.maxRows });
  if (stream) {
    for (const r of records) {
      const wait = stream.push(r.text);
      tracker.shrink(r.reserved);
      if (wait) await wait;
    }
    if (groups && aggregator) {
      for (const g of groups) {
        const wait = stream.push(renderGroup(g, agg, aggregator));
        if (wait) await wait;
      }
    }
    await stream.end();
    checkAborted(signal);
    const trailer = `{"rows":${rows},"stats":${renderStats(stats, corrupt.met)}}\n`;
    stream.count(Buffer.byteLength(trailer, 'utf8'));
    // Counted against max_result_bytes by the stream above; the budget only reserves the trailer until it is sent.
    const budget = renderThroughBudget(options.reservation, Number.MAX_SAFE_INTEGER, (append) => append(trailer));
    tracker.releaseAll();
    if (stream.crossed) crossed.push(stream.crossed);
    const streamedBytes = stream.bytes - budget.countedBytes;
    return { status: 'ok', body: budget.body(), budget, rows, stats, corrupt: corrupt.met, crossed, streamedBytes };
  }
  const budget = renderThroughBudget(
    options.reservation,
    limits.maxResultBytes,
    (append) => {
      append(`{"rows":${rows},"stats":${renderStats(stats, corrupt.met)},"records":[`);
      records.forEach((r, idx) => {
        append(idx === 0 ? r.text : `,${r.text}`);
        tracker.shrink(r.reserved);
      });
      append(']');
      if (groups && aggregator) {
        append(',"aggregate":[');
        groups.forEach((g, idx) => append(`${idx === 0 ? '' : ','}${renderGroup(g, agg, aggregator)}`));
        append(']');
      }
      append('}');
    },
    enforcement,
  );
  tracker.releaseAll();
  if (budget.crossed) crossed.push(budget.crossed);
  return { status: 'ok', body: budget.body(), budget, rows, stats, corrupt: corrupt.met, crossed };
}

/** One aggregation group as its JSON object: `{"key":[…],"count":n}` (and `"value"` for an aggregate). */
function renderGroup(g: Group, agg: CountStage | AggregateStage | undefined, aggregator: Aggregator): string {
  let s = `{"key":[${g.key.map(jsonString).join(',')}],"count":${g.count}`;
  if (agg?.kind === 'aggregate') s += `,"value":${jsonNumber(aggregator.valueOf(g))}`;
  return `${s}}`;
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
