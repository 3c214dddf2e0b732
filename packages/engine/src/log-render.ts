/**
 * @module log-render
 * Steps 3 and 4 of a log query (docs/design/query-engine.md): order the aggregation groups, then render the
 * response — the whole JSON body through the result budget, or, for a streamed query, the held records and groups
 * as lines and the trailer as the body.
 */
import type { CeilingCrossed, QueryReservation } from '@sluice/limits';
import type { AggregateStage, CountStage } from '@sluice/query';
import type { Aggregator, Group } from './aggregate.js';
import type { CorruptObjects } from './corrupt-objects.js';
import { checkAborted } from './failures.js';
import type { LogPlan } from './log-plan.js';
import type { ScanResult, ScanSinks } from './log-scan.js';
import type { ExecuteOutcome } from './outcome.js';
import { jsonNumber, jsonString, renderStats } from './render-json.js';
import { renderThroughBudget } from './result-body.js';
import type { MemoryTracker } from './tracker.js';

/** The aggregation step: the groups in response order (by key, or by the `sort` stage). */
export function orderedGroups(plan: LogPlan, aggregator: Aggregator): Group[] {
  const { agg, sortStage } = plan;
  let groups = aggregator.groups();
  if (agg && sortStage) {
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
  return groups;
}

/** What the render step needs besides the plan and the scan's result. */
export interface RenderContext {
  readonly reservation: QueryReservation;
  readonly maxRows: number;
  readonly maxResultBytes: number;
  readonly signal?: AbortSignal;
  readonly tracker: MemoryTracker;
  readonly corrupt: CorruptObjects;
}

/** The render step: the outcome of a log query whose scan is complete. */
export async function renderLogResult(
  ctx: RenderContext,
  plan: LogPlan,
  sinks: ScanSinks,
  scan: ScanResult,
): Promise<ExecuteOutcome> {
  const { tracker, corrupt, signal } = ctx;
  const { agg, enforcement } = plan;
  const { aggregator, collector, stream } = sinks;
  const { rows, stats, streamedRecords } = scan;
  const limits = { maxRows: ctx.maxRows, maxResultBytes: ctx.maxResultBytes };
  const options = { reservation: ctx.reservation };
  checkAborted(signal);
  const groups = aggregator ? orderedGroups(plan, aggregator) : undefined;
  stats.rows_excluded = aggregator?.excluded ?? 0;
  const records = collector?.drain() ?? [];
  const recordBytes = collector?.drainBytes();
  const returned = records.length + (recordBytes?.count ?? 0) + streamedRecords;
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
      // The budget keeps each record's text itself (not a copy) until the seal writes the body, so the record's own
      // reservation, which covers a V8 string at two bytes a character, stays until then (released below).
      records.forEach((r, idx) => append(idx === 0 ? r.text : `,${r.text}`));
      // Rows rendered to bytes are handed over as their buffers (commas included), reserved until the same point.
      for (const chunk of recordBytes?.chunks ?? []) append(chunk);
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
