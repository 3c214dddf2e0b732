/**
 * @module log-plan
 * Step 1 of a log query (docs/design/query-engine.md): what to read and how to answer, fixed before any I/O — the
 * window, the compiled predicate and pruner, the aggregation or record stages, the row limit and the columns every
 * scanned row group reads first.
 */
import type { CeilingEnforcement } from '@sluice/limits';
import type { AggregateStage, CountStage, FieldName, LogQuery, TimeWindow } from '@sluice/query';
import { FIELD_NAMES, aggregationStage } from '@sluice/query';
import { LOG_COLUMNS } from '@sluice/storage';
import { aggregationColumns } from './aggregate.js';
import { FIELD_COLUMN } from './fields.js';
import type { CompiledPredicate } from './predicate-eval.js';
import { compilePredicate } from './predicate-eval.js';
import type { RowGroupPruner } from './pruning.js';
import { createFilterPruner, type FilterPruner } from './filter-pruning.js';
import { createPruner } from './pruning.js';
import { projectedKeys } from './records.js';
import type { RowLimits } from './window.js';
import { effectiveRowLimit, queryWindow } from './window.js';

/** The plan of one log query. */
export interface LogPlan {
  readonly window: TimeWindow;
  readonly predicate: CompiledPredicate;
  readonly pruner: RowGroupPruner;
  /** Row-group pruning from the files' filters (docs/design/storage-format.md, "Row-group filters"). */
  readonly filters: FilterPruner;
  /** The `count` / aggregate stage, if any. */
  readonly agg: CountStage | AggregateStage | undefined;
  readonly sortStage: { readonly key: string; readonly descending: boolean } | undefined;
  /** The record sort field (no aggregation, sort on a built-in field). */
  readonly sortField: FieldName | undefined;
  readonly projectKeys: ReadonlySet<string> | undefined;
  readonly enforcement: CeilingEnforcement;
  /** Records to return (0 for an aggregation). */
  readonly rowLimit: number;
  /** Columns every scanned row group reads before evaluation (the time and tenant columns are added per group). */
  readonly phase1: ReadonlySet<string>;
  /**
   * Phase-1 columns an aggregation only byte-searches (the predicate's `searchOnly`, less anything the aggregation
   * or the scan reads): read as `SearchOnlyStrings` (decode/search-only.ts), searched page by page, never kept. Empty for record
   * queries, whose phase-1 columns are rendered.
   */
  readonly searchOnly: ReadonlySet<string>;
  /** Tenant statistics shorter than the 16-byte truncation can prove a group's tenant. */
  readonly tenantStatsTrusted: boolean;
}

/** Inputs of {@link planLogQuery}. */
export interface PlanInputs {
  readonly tenant: string;
  readonly nowNs: bigint;
  readonly defaultWindowSecs: number;
  readonly limits: RowLimits & { readonly enforcement?: CeilingEnforcement };
  readonly rowCap?: number;
}

/** Plans a validated log query; throws an `invalid_query` QueryAbort for a pattern the engine refuses. */
export function planLogQuery(q: LogQuery, o: PlanInputs): LogPlan {
  const window = queryWindow(q, o.nowNs, o.defaultWindowSecs);
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
  const enforcement = o.limits.enforcement ?? 'enforce';
  const rowLimit = agg ? 0 : effectiveRowLimit(q, o.limits, o.rowCap, enforcement === 'enforce');
  const sortField =
    !agg && sortStage && (FIELD_NAMES as readonly string[]).includes(sortStage.key)
      ? (sortStage.key as FieldName)
      : undefined;
  const phase1 = new Set<string>(predicate.columns);
  phase1.add(LOG_COLUMNS.effectiveTimeUnixNano);
  if (sortField !== undefined) phase1.add(FIELD_COLUMN[sortField]);
  const searchOnly = new Set<string>();
  if (agg !== undefined) {
    const read = aggregationColumns(agg);
    read.add(LOG_COLUMNS.tenantId).add(LOG_COLUMNS.effectiveTimeUnixNano).add(LOG_COLUMNS.timeUnixNano);
    for (const c of predicate.searchOnly) if (!read.has(c)) searchOnly.add(c);
  }
  return {
    window,
    predicate,
    pruner,
    filters,
    agg,
    sortStage,
    sortField,
    projectKeys,
    enforcement,
    rowLimit,
    phase1,
    searchOnly,
    tenantStatsTrusted: Buffer.byteLength(o.tenant, 'utf8') < 16,
  };
}
