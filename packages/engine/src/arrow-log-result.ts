/**
 * @module arrow-log-result
 * The render step of a log query asked for as Arrow (docs/design/query-engine.md, "Arrow results"): the records
 * the collector holds (each the LogRow JSON the JSON answer would carry, read back member by member so both answers
 * say the same thing, cell by cell as the writer asks, without holding the values) or the ordered aggregation groups
 * become the columns of one Arrow IPC stream. `rows` and
 * `stats` go in the schema's custom metadata. The stream is counted against `max_result_bytes` and reserved on the
 * query's reservation at its exact size before it is allocated, as the JSON body is.
 */
import type { CeilingCrossed, LimitError } from '@sluice/limits';
import { createResultBudget, limitErrorFromBudget } from '@sluice/limits';
import { encodeArrowStream, type ArrowColumn, type ArrowColumnType } from './arrow-ipc-stream.js';
import { jsonMembers } from './arrow-json-members.js';
import { checkAborted, QueryAbort } from './failures.js';
import type { Group } from './aggregate.js';
import type { LogPlan } from './log-plan.js';
import { orderedGroups, type RenderContext } from './log-render.js';
import type { ScanResult, ScanSinks } from './log-scan.js';
import type { ExecuteOutcome } from './outcome.js';
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

/**
 * The record columns of a response whose records keep `keep` (all when `undefined`). One pass finds where each
 * column's value lies in each held row (`at`: start and end per row and column, -1 when the row has no such
 * member, reserved by the caller: {@link recordSlotBytes}); the columns then decode a cell from its row's text each
 * time the writer asks, so no copy of the values is held.
 */
function recordColumns(texts: readonly string[], keep: ReadonlySet<string> | undefined, at: Int32Array): ArrowColumn[] {
  const fields = RECORD_FIELDS.filter(([key]) => keep === undefined || keep.has(key));
  const withBody = keep === undefined || keep.has('body');
  const slots = new Map<string, number>();
  fields.forEach(([key], f) => slots.set(key, f));
  if (withBody) BODY_COLUMNS.forEach((c, k) => slots.set(c, fields.length + k));
  const width = slots.size;
  at.fill(-1);
  texts.forEach((text, i) => {
    const base = i * width * 2;
    const place = (column: string, start: number, end: number): void => {
      const slot = slots.get(column);
      if (slot === undefined) return;
      at[base + 2 * slot] = start;
      at[base + 2 * slot + 1] = end;
    };
    for (const m of jsonMembers(text)) {
      if (m.key !== 'body') place(m.key, m.start, m.end);
      else
        for (const b of jsonMembers(text, m.start))
          place(b.key === 'kind' ? 'body_kind' : `body_${b.key}`, b.start, b.end);
    }
  });
  const raw = (i: number, slot: number): string | null => {
    const start = at[(i * width + slot) * 2] as number;
    return start < 0 ? null : (texts[i] as string).slice(start, at[(i * width + slot) * 2 + 1]);
  };
  const columns: ArrowColumn[] = fields.map(([key, type, read], slot) => ({
    name: key,
    type,
    value: (i) => {
      const r = raw(i, slot);
      return r === null ? null : readValue(r, read);
    },
  }));
  if (withBody)
    BODY_COLUMNS.forEach((name, k) =>
      columns.push({
        name,
        type: 'utf8',
        value: (i) => {
          const r = raw(i, fields.length + k);
          // A structured body's value is JSON text; the other members are JSON strings.
          return r === null ? null : name === 'body_value' ? r : jsonStringValue(r);
        },
      }),
    );
  return columns;
}

/** Bytes of the value positions {@link recordColumns} keeps: two int32 per row and column. */
export function recordSlotBytes(rows: number): number {
  return rows * (RECORD_FIELDS.length + BODY_COLUMNS.length) * 2 * 4;
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
    // Read straight from the groups the aggregator holds (their key strings are already reserved).
    length = groups.length;
    const group = (i: number): Group => groups[i] as Group;
    columns = agg.by.map((_, t) => ({
      name: `key_${t}`,
      type: 'utf8' as const,
      value: (i) => group(i).key[t] ?? null,
    }));
    columns.push({ name: 'count', type: 'int64', value: (i) => BigInt(group(i).count) });
    if (agg.kind === 'aggregate') {
      columns.push({
        name: 'value',
        type: 'float64',
        value: (i) => {
          const v = aggregator.valueOf(group(i));
          return v === null || !Number.isFinite(v) ? null : v;
        },
      });
    }
  } else {
    length = records.length;
    tracker.grow(recordSlotBytes(length)); // reserve before retain: the value positions
    columns = recordColumns(
      records.map((r) => r.text),
      plan.projectKeys,
      new Int32Array(recordSlotBytes(length) / 4),
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
