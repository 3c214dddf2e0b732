/**
 * @module arrow-log-result
 * The render step of a log query asked for as Arrow (docs/design/query-engine.md, "Arrow results"): the records
 * the collector holds (each the LogRow JSON the JSON answer would carry, read back member by member so both answers
 * say the same thing) or the ordered aggregation groups become the columns of one Arrow IPC stream. `rows` and
 * `stats` go in the schema's custom metadata. The stream is counted against `max_result_bytes` and reserved on the
 * query's reservation at its exact size before it is allocated, as the JSON body is.
 */
import type { CeilingCrossed, LimitError } from '@sluice/limits';
import { createResultBudget, limitErrorFromBudget } from '@sluice/limits';
import { encodeArrowStream, type ArrowColumn, type ArrowColumnType } from './arrow-ipc-stream.js';
import { jsonMembers } from './arrow-json-members.js';
import { checkAborted, QueryAbort } from './failures.js';
import type { LogPlan } from './log-plan.js';
import { orderedGroups, type RenderContext } from './log-render.js';
import type { ScanResult, ScanSinks } from './log-scan.js';
import type { ExecuteOutcome } from './outcome.js';
import { retainedRowBytes } from './records.js';
import { renderStats } from './render-json.js';

/** The media type of an Arrow IPC stream, as `/v1/query` answers it. */
export const ARROW_STREAM = 'application/vnd.apache.arrow.stream';

/** Schema metadata keys of an Arrow answer (docs/design/query-engine.md, "Arrow results"). */
export const ARROW_METADATA = Object.freeze({
  /** `records` or `aggregate`: which of the JSON answer's arrays the rows are. */
  kind: 'sluice.kind',
  /** The JSON answer's `rows` (every match), as decimal text. */
  rows: 'sluice.rows',
  /** The JSON answer's `stats` object, as its JSON text. */
  stats: 'sluice.stats',
});

/** How a record column reads its value from the LogRow member of the same name. */
type RecordValue = 'u64' | 'number' | 'string' | 'json';

/** The LogRow keys in render order, each with its column type (`body` is split below). */
const RECORD_FIELDS: readonly (readonly [key: string, type: ArrowColumnType, read: RecordValue])[] = [
  ['time_unix_nano', 'timestamp_ns', 'u64'],
  ['observed_time_unix_nano', 'timestamp_ns', 'u64'],
  ['severity_number', 'int32', 'number'],
  ['severity_text', 'utf8', 'string'],
  ['trace_id', 'utf8', 'string'],
  ['span_id', 'utf8', 'string'],
  ['flags', 'uint32', 'number'],
  ['event_name', 'utf8', 'string'],
  ['scope_name', 'utf8', 'string'],
  ['scope_version', 'utf8', 'string'],
  ['scope_attributes', 'utf8', 'json'],
  ['attributes', 'utf8', 'json'],
  ['resource_attributes', 'utf8', 'json'],
  ['resource_schema_url', 'utf8', 'string'],
  ['scope_schema_url', 'utf8', 'string'],
  ['dropped_attributes_count', 'uint32', 'number'],
  ['template_id', 'uint64', 'u64'],
  ['template_version', 'uint32', 'number'],
];

/** The columns the LogRow `body` object becomes: its kind, a rendered line and how faithful it is, or a value. */
const BODY_COLUMNS = ['body_kind', 'body_line', 'body_reconstruction', 'body_value'] as const;

/** A JSON string literal's value; one without escapes is its inside (no JSON.parse per value). */
function jsonStringValue(raw: string): string {
  return raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

function readValue(raw: string, read: RecordValue): bigint | number | string {
  switch (read) {
    case 'u64':
      return BigInt(raw);
    case 'number':
      return Number(raw);
    case 'string':
      return jsonStringValue(raw);
    case 'json':
      return raw;
  }
}

/** The record columns of a response whose records keep `keep` (all when `undefined`). */
function recordColumns(texts: readonly string[], keep: ReadonlySet<string> | undefined): ArrowColumn[] {
  const n = texts.length;
  const fields = RECORD_FIELDS.filter(([key]) => keep === undefined || keep.has(key));
  const withBody = keep === undefined || keep.has('body');
  const values = new Map<string, (bigint | number | string | null)[]>();
  for (const [key] of fields) values.set(key, new Array<null>(n).fill(null));
  if (withBody) for (const c of BODY_COLUMNS) values.set(c, new Array<null>(n).fill(null));
  const readers = new Map(fields.map(([key, , read]) => [key, read]));
  texts.forEach((text, i) => {
    for (const { key, raw } of jsonMembers(text)) {
      if (key === 'body') {
        for (const m of jsonMembers(raw)) {
          const column = m.key === 'kind' ? 'body_kind' : m.key === 'value' ? 'body_value' : `body_${m.key}`;
          const target = values.get(column);
          if (target !== undefined) target[i] = m.key === 'value' ? m.raw : jsonStringValue(m.raw);
        }
        continue;
      }
      const read = readers.get(key);
      const target = values.get(key);
      if (read !== undefined && target !== undefined) target[i] = readValue(raw, read);
    }
  });
  const columns: ArrowColumn[] = fields.map(([key, type]) => ({ name: key, type, values: values.get(key) ?? [] }));
  if (withBody) for (const c of BODY_COLUMNS) columns.push({ name: c, type: 'utf8', values: values.get(c) ?? [] });
  return columns;
}

/** The render step of a log query answered as an Arrow IPC stream (never streamed: see the module doc). */
export function renderArrowLogResult(
  ctx: RenderContext,
  plan: LogPlan,
  sinks: ScanSinks,
  scan: ScanResult,
): ExecuteOutcome {
  const { tracker, corrupt, signal } = ctx;
  const { agg, enforcement } = plan;
  const { aggregator, collector } = sinks;
  const { rows, stats } = scan;
  checkAborted(signal);
  const groups = aggregator ? orderedGroups(plan, aggregator) : undefined;
  stats.rows_excluded = aggregator?.excluded ?? 0;
  const records = collector?.drain() ?? [];
  const crossed: CeilingCrossed[] = [];
  if (!agg && records.length > ctx.maxRows)
    crossed.push({ limit: 'max_rows', value: records.length, ceiling: ctx.maxRows });

  let columns: ArrowColumn[];
  let length: number;
  if (groups && aggregator && agg) {
    length = groups.length;
    const width = agg.by.length + (agg.kind === 'aggregate' ? 2 : 1);
    // The column arrays: one slot per group and column (the key strings are the aggregator's, already reserved).
    tracker.grow(length * width * 16);
    columns = agg.by.map((_, t) => ({
      name: `key_${t}`,
      type: 'utf8' as const,
      values: groups.map((g) => g.key[t] ?? null),
    }));
    columns.push({ name: 'count', type: 'int64', values: groups.map((g) => BigInt(g.count)) });
    if (agg.kind === 'aggregate') {
      columns.push({
        name: 'value',
        type: 'float64',
        values: groups.map((g) => {
          const v = aggregator.valueOf(g);
          return v === null || !Number.isFinite(v) ? null : v;
        }),
      });
    }
  } else {
    length = records.length;
    // The values read back from the held rows: at most one more copy of each row's text, plus a slot per column.
    for (const r of records) tracker.grow(retainedRowBytes(r.text) + (RECORD_FIELDS.length + 4) * 16);
    columns = recordColumns(
      records.map((r) => r.text),
      plan.projectKeys,
    );
  }
  checkAborted(signal);

  const metadata = new Map([
    [ARROW_METADATA.kind, agg ? 'aggregate' : 'records'],
    [ARROW_METADATA.rows, String(rows)],
    [ARROW_METADATA.stats, renderStats(stats, corrupt.met)],
  ]);
  const budget = createResultBudget({ maxResultBytes: ctx.maxResultBytes, reservation: ctx.reservation, enforcement });
  let body: Buffer;
  try {
    body = encodeArrowStream(columns, length, metadata, (bytes) => {
      const o = budget.count(bytes);
      if (o.status !== 'ok') throw new QueryAbort(limitErrorFromBudget(o) satisfies LimitError);
    });
  } catch (e) {
    budget.release();
    throw e;
  }
  tracker.releaseAll();
  if (budget.crossed) crossed.push(budget.crossed);
  return { status: 'ok', body, budget, rows, stats, corrupt: corrupt.met, crossed };
}
