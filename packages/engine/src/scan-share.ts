/**
 * @module scan-share
 * Parallel scans (docs/design/query-engine.md, "Parallel scans"): an aggregation whose partial results merge
 * exactly may lend the later part of its file list to a helper worker. The helper scans its share into its own
 * aggregator, under its own reservation, and answers with a {@link PartialScan}; the coordinating worker scans
 * the first part and merges. Only `count` and `min`/`max` merge exactly: a floating-point `sum` (and so `avg`)
 * depends on the order of its additions, so those stay on one worker, as do record queries.
 */
import type { AggregateStage, CountStage, LogQuery } from '@sluice/query';
import { Aggregator, type Group } from './aggregate.js';
import type { CorruptObject } from './corrupt-objects.js';
import { createCorruptObjects } from './corrupt-objects.js';
import type { ExecuteOptions } from './execute.js';
import { checkAborted, failureOf, type QueryFailure } from './failures.js';
import type { LiveFile } from './listing.js';
import { planLogQuery } from './log-plan.js';
import { scanLogFiles } from './log-scan.js';
import type { QueryStats } from './render-json.js';
import { MemoryTracker } from './tracker.js';

/** What a helper found in its share: everything the coordinator adds to its own scan. */
export interface PartialScan {
  readonly rows: number;
  readonly stats: QueryStats;
  /** Rows dropped for a NULL group key. */
  readonly excluded: number;
  /** The helper's groups (plain data: they cross threads by structured clone). */
  readonly groups: readonly Group[];
  /** Corrupt objects the helper left out (policy `skip`), in the order met. */
  readonly corrupt: readonly CorruptObject[];
}

/** The answer to a lend: no helper was free, the helper's partial, or the failure that fails the query. */
export type LendResult =
  | { readonly status: 'refused' }
  | { readonly status: 'ok'; readonly partial: PartialScan }
  | { readonly status: 'failed'; readonly failure: QueryFailure };

/** Helper workers a scan may lend a share of its files to. */
export interface ScanHelpers {
  /**
   * Offers `files` (in listing order) to a helper. Resolves `refused` when none is free (the caller scans them
   * itself); never rejects. Settles on the query's stop too.
   */
  lend(files: readonly LiveFile[]): Promise<LendResult>;
}

/** True for a stage whose partial results merge into exactly the single-worker answer. */
export function mergesExactly(stage: CountStage | AggregateStage): boolean {
  return stage.kind === 'count' || stage.fn === 'min' || stage.fn === 'max';
}

/**
 * Splits visits into the coordinator's first part and the helper's rest, at the half of their bytes; `undefined`
 * when there is less than two files (nothing to share).
 */
export function splitShare<T extends { readonly f: LiveFile }>(
  visits: readonly T[],
): { mine: readonly T[]; theirs: readonly T[] } | undefined {
  if (visits.length < 2) return undefined;
  let total = 0;
  for (const v of visits) total += v.f.size;
  let at = 0;
  let bytes = 0;
  while (at < visits.length - 1 && bytes + (visits[at] as T).f.size <= total / 2) bytes += (visits[at++] as T).f.size;
  if (at === 0) at = 1;
  return { mine: visits.slice(0, at), theirs: visits.slice(at) };
}

/** Outcome of {@link executeScanShare}: on `ok` the partial's group table stays reserved until the caller releases it. */
export type ShareOutcome =
  | { readonly status: 'ok'; readonly partial: PartialScan }
  | { readonly status: 'error'; readonly error: QueryFailure; readonly corrupt: readonly CorruptObject[] };

/**
 * A helper's side: scans exactly `files` of the aggregation `query` (never lists, never lends) and returns its
 * partial. Never throws.
 */
export async function executeScanShare(
  options: Omit<ExecuteOptions, 'query' | 'stream' | 'rowCap'> & {
    readonly query: LogQuery;
    readonly files: readonly LiveFile[];
  },
): Promise<ShareOutcome> {
  const tracker = new MemoryTracker(options.reservation, options.reclaim);
  const corrupt = createCorruptObjects(options.onCorruptObject);
  try {
    checkAborted(options.signal);
    const plan = planLogQuery(options.query, {
      tenant: options.tenant,
      nowNs: options.nowNs,
      defaultWindowSecs: options.defaultWindowSecs,
      limits: options.limits,
    });
    if (plan.agg === undefined || !mergesExactly(plan.agg))
      return {
        status: 'error',
        error: { kind: 'internal', message: 'a scan share must be an aggregation' },
        corrupt: [],
      };
    const aggregator = new Aggregator(plan.agg, tracker);
    const scan = await scanLogFiles(
      {
        store: options.store,
        tenant: options.tenant,
        limits: options.limits,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        ...(options.hooks !== undefined ? { hooks: options.hooks } : {}),
        decoder: options.decoder ?? 'columnar',
        ...(options.footers !== undefined ? { footers: options.footers } : {}),
        tracker,
        corrupt,
        share: options.files,
      },
      plan,
      { aggregator },
    );
    return {
      status: 'ok',
      partial: {
        rows: scan.rows,
        stats: scan.stats,
        excluded: aggregator.excluded,
        groups: aggregator.partialGroups(),
        corrupt: corrupt.met,
      },
    };
  } catch (e) {
    tracker.releaseAll();
    return { status: 'error', error: failureOf(e, options.signal), corrupt: corrupt.met };
  }
}
