/**
 * @module execute
 * One query, end to end, under the shared memory pool. A log query runs in steps, each in its own module: plan
 * (log-plan.ts: window, predicate, stages) → scan (log-scan.ts: partition walk with caps, per file footer and
 * row-group pruning, per row group reserve, decode, evaluate, and only for groups with matches still needed decode
 * the output columns into the aggregator, collector or stream) → aggregate and render (log-render.ts: group order,
 * the JSON body through the result budget, or NDJSON lines and a trailer). Drift statements go to drift.ts.
 * Every failure path gives back what the query reserved.
 */
import type { CeilingEnforcement, QueryReservation } from '@sluice/limits';
import type { LogQuery, Query } from '@sluice/query';
import { validateQuery } from '@sluice/query';
import type { FooterCache, ObjectStore } from '@sluice/storage';
import { Aggregator } from './aggregate.js';
import type { CorruptObjectPolicy, CorruptObjects } from './corrupt-objects.js';
import { createCorruptObjects } from './corrupt-objects.js';
import { runDrift } from './drift.js';
import { checkAborted, failureOf } from './failures.js';
import { LineStream, type LineSink } from './line-stream.js';
import type { LiveFile } from './listing.js';
import { planLogQuery } from './log-plan.js';
import { renderArrowLogResult } from './arrow-log-result.js';
import { renderLogResult } from './log-render.js';
import { scanLogFiles, type ScanSinks } from './log-scan.js';
import type { ExecuteOutcome } from './outcome.js';
import { RecordCollector } from './records.js';
import type { ColumnDecoderChoice } from './scan.js';
import type { ScanHelpers } from './scan-share.js';
import { MemoryTracker, type HeapReclaimer } from './tracker.js';
import { queryWindow } from './window.js';

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
  /**
   * The body's format (docs/design/query-engine.md, "Arrow results"): `json` (default) or `arrow`, an Arrow IPC
   * stream of the records or aggregation groups. Drift statements and streamed queries are always JSON.
   */
  readonly format?: ResultFormat;
  /**
   * Helper workers an aggregation may lend part of its scan to (docs/design/query-engine.md, "Parallel scans").
   * Absent: the whole scan runs here.
   */
  readonly helpers?: ScanHelpers;
}

/** The format of a query's response body. */
export type ResultFormat = 'json' | 'arrow';

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

/**
 * A validated log query in its four steps (docs/design/query-engine.md): plan, then scan into the query's sink
 * (aggregator, record collector or stream), then order the groups and render.
 */
async function runLogQuery(
  options: ExecuteOptions,
  q: LogQuery,
  tracker: MemoryTracker,
  corrupt: CorruptObjects,
): Promise<ExecuteOutcome> {
  const { limits } = options;
  const plan = planLogQuery(q, {
    tenant: options.tenant,
    nowNs: options.nowNs,
    defaultWindowSecs: options.defaultWindowSecs,
    limits,
    ...(options.rowCap !== undefined ? { rowCap: options.rowCap } : {}),
  });
  const { agg, enforcement, sortField, sortStage, rowLimit } = plan;
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
  const arrow = options.format === 'arrow' && stream === undefined;
  // A stream sends unsorted records as they are found; sorted ones need the top-k heap complete first.
  const collector =
    agg || (stream !== undefined && sortField === undefined)
      ? undefined
      : new RecordCollector({
          limit: rowLimit,
          tracker,
          // The collector's early refusal counts JSON text; an Arrow body is counted whole, at its own size, when
          // it is built (every held row is still reserved on the pool, and max_rows bounds how many there are).
          maxResultBytes: arrow ? Number.MAX_SAFE_INTEGER : limits.maxResultBytes,
          enforcement,
          // A JSON answer takes unsorted rows as bytes; an Arrow answer parses each row's text.
          bytes: !arrow,
          ...(sortField !== undefined
            ? { sort: { field: sortField, descending: sortStage?.descending === true } }
            : {}),
        });
  const sinks: ScanSinks = {
    ...(agg !== undefined ? { aggregator: new Aggregator(agg, tracker) } : {}),
    ...(collector !== undefined ? { collector } : {}),
    ...(stream !== undefined ? { stream } : {}),
  };
  const scan = await scanLogFiles(
    {
      store: options.store,
      tenant: options.tenant,
      limits,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.hooks !== undefined ? { hooks: options.hooks } : {}),
      decoder: options.decoder ?? 'columnar',
      ...(options.footers !== undefined ? { footers: options.footers } : {}),
      tracker,
      corrupt,
      ...(options.helpers !== undefined ? { helpers: options.helpers } : {}),
    },
    plan,
    sinks,
  );
  const render = arrow ? renderArrowLogResult : renderLogResult;
  return render(
    {
      reservation: options.reservation,
      maxRows: limits.maxRows,
      maxResultBytes: limits.maxResultBytes,
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      tracker,
      corrupt,
    },
    plan,
    sinks,
    scan,
  );
}
