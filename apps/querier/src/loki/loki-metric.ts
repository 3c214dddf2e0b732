/**
 * @module loki-metric
 * Evaluates a translated metric query (`sum by (…) (count_over_time(…[r]))`, `rate`, and `sum`/`count`/`topk`
 * around them) as Loki does, at evaluation times `t = start + i·step`, each counting the records of the window
 * `[t − r, t)` (docs/grafana.md, "Metric queries"; Loki's window is `(t − r, t]`: the two differ only for a record
 * exactly on a boundary).
 *
 * One engine aggregation answers every point: `count by <labels>, bucket(g)` over `[start − r, end)`, where `g`
 * divides `r`, `step` and `start`, so every window is a whole number of buckets; the window sums are prefix-sum
 * differences. An instant query (one point) needs no bucket. A grouping label that a record may lack (all but
 * `level`) drops that record from the engine's groups (`rows_excluded`); when some were dropped, a second count
 * without that label recovers them as the series without it, as Loki has them.
 *
 * `bytes_over_time` / `bytes_rate` run the same shape as `sum(body_bytes) by <labels>, bucket(g)`: each group's
 * count says whether the window has records (a window of empty lines is 0 bytes, not absent, as in Loki) and its
 * value is the byte sum.
 */
import type { Result } from '@sluice/core';
import {
  levelOfSeverity,
  type GroupTerm,
  type LogQuery,
  type LokiGroupLabel,
  type LokiOuterAgg,
  type LogqlRangeFn,
  type Predicate,
  type Stage,
} from '@sluice/query';
import type { JsonValue } from '@sluice/core';
import type { LokiFailure } from './loki-error.js';
import { parseLokiTime } from './loki-params.js';
import { runLokiQuery, statsOf, type JsonObject, type LokiRunContext } from './loki-run.js';

/** Loki's cap on points per series (`max_query_points`… its 11,000 resolution rule). */
export const MAX_POINTS = 11_000;
/** Buckets one evaluation may ask the engine for (range + step granularity). */
export const MAX_BUCKETS = 100_000;

/** A series: its labels and a value (or none) at each evaluation time. */
export interface LokiSeries {
  readonly labels: Record<string, string>;
  readonly values: (number | null)[];
}

/** What to evaluate. */
export interface MetricSpec {
  readonly predicate: Predicate;
  readonly fn: LogqlRangeFn;
  readonly rangeNs: bigint;
  readonly by: readonly LokiGroupLabel[];
  readonly outer: readonly LokiOuterAgg[];
}

/** Evaluation times `start, start + step, …` up to and including `end`. */
export interface Points {
  readonly startNs: bigint;
  readonly stepNs: bigint;
  readonly count: number;
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

const bad = (message: string): { ok: false; error: LokiFailure } => ({
  ok: false,
  error: { kind: 'bad_request', message },
});

const floorTo = (ns: bigint, stepNs: bigint): bigint => {
  const r = ns % stepNs;
  return r < 0n ? ns - r - stepNs : ns - r;
};

/**
 * The evaluation times of `[start, end]` by `step`, both ends moved down to a multiple of `step` as Loki's query
 * frontend aligns them (Grafana sends the time picker's bounds as they are, to the millisecond); refused past
 * Loki's 11,000 points. Aligned points let one bucket width (gcd of step and range) serve every window.
 */
export function pointsOf(rawStartNs: bigint, rawEndNs: bigint, stepNs: bigint): Result<Points, LokiFailure> {
  const startNs = floorTo(rawStartNs, stepNs);
  const endNs = floorTo(rawEndNs, stepNs);
  const count = (endNs - startNs) / stepNs + 1n;
  if (count > BigInt(MAX_POINTS)) {
    return bad(
      `exceeded maximum resolution of ${MAX_POINTS} points per timeseries. Try decreasing the query resolution (?step=XX)`,
    );
  }
  return { ok: true, value: { startNs, stepNs, count: Number(count) } };
}

const range = (fromNs: bigint, toNs: bigint) =>
  ({
    kind: 'range',
    from: { kind: 'absolute', ns: fromNs < 0n ? 0n : fromNs },
    to: { kind: 'absolute', ns: toNs },
  }) as const;

interface Counted {
  /** Group key (the by-labels' values, then the bucket start when bucketed) → count, and body bytes when summed. */
  readonly groups: { readonly key: readonly string[]; readonly count: number; readonly bytes: number }[];
  readonly excluded: number;
}

/** True for the range functions over line sizes rather than line counts. */
const isBytes = (fn: LogqlRangeFn): boolean => fn === 'bytes_over_time' || fn === 'bytes_rate';

async function count(
  ctx: LokiRunContext,
  predicate: Predicate,
  terms: readonly GroupTerm[],
  fromNs: bigint,
  toNs: bigint,
  bytes: boolean,
): Promise<Result<Counted, LokiFailure>> {
  const stage: Stage = bytes
    ? { kind: 'aggregate', fn: 'sum', path: { kind: 'field', name: 'body_bytes' }, by: terms }
    : { kind: 'count', by: terms };
  const query: LogQuery = { kind: 'logs', predicate, stages: [range(fromNs, toNs), stage] };
  const r = await runLokiQuery(ctx, query);
  if (!r.ok) return r;
  const agg = r.value['aggregate'];
  const groups: Counted['groups'] = [];
  if (Array.isArray(agg)) {
    for (const g of agg as JsonValue[]) {
      const o = g as JsonObject;
      groups.push({
        key: (o['key'] as string[]) ?? [],
        count: Number(o['count'] ?? 0),
        bytes: Number(o['value'] ?? 0),
      });
    }
  }
  return { ok: true, value: { groups, excluded: statsOf(r.value)['rows_excluded'] ?? 0 } };
}

/** Per series (labels of `by`) the count and the body bytes per bucket index (or index 0 unbucketed). */
type Buckets = Map<string, { labels: Record<string, string>; counts: Map<number, number>; bytes: Map<number, number> }>;

function add(into: Buckets, labels: Record<string, string>, bucket: number, n: number, bytes: number): void {
  const key = JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
  let s = into.get(key);
  if (s === undefined) {
    s = { labels, counts: new Map(), bytes: new Map() };
    into.set(key, s);
  }
  s.counts.set(bucket, (s.counts.get(bucket) ?? 0) + n);
  s.bytes.set(bucket, (s.bytes.get(bucket) ?? 0) + bytes);
}

function labelsOfKey(by: readonly LokiGroupLabel[], key: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  by.forEach((b, i) => {
    const v = key[i]!;
    labels[b.label] = b.level ? levelOfSeverity(Number(v)) : v;
  });
  return labels;
}

/** Evaluates a metric query into series (before `topk`/`sum`/`count` around the innermost sum: see applyOuter). */
export async function evaluateMetric(
  ctx: LokiRunContext,
  spec: MetricSpec,
  points: Points,
): Promise<Result<LokiSeries[], LokiFailure>> {
  const { rangeNs } = spec;
  const bucketed = points.count > 1;
  let g = rangeNs;
  let baseNs = points.startNs - rangeNs;
  if (bucketed) {
    g = gcd(gcd(rangeNs, points.stepNs), points.startNs < 0n ? -points.startNs : points.startNs);
    const buckets = (points.stepNs * BigInt(points.count - 1) + rangeNs) / g;
    if (g < 1_000_000n || buckets > BigInt(MAX_BUCKETS)) {
      return bad(
        'start, step and the range must be whole milliseconds and align to at most 100000 buckets; align start to the step or widen the step',
      );
    }
    baseNs = points.startNs - rangeNs;
  }
  const endNs = points.startNs + points.stepNs * BigInt(points.count - 1);
  const terms: GroupTerm[] = spec.by.map((b) => b.term);
  const bucketTerm: GroupTerm[] = bucketed ? [{ kind: 'bucket', widthNs: g }] : [];
  const bucketIndex = (key: readonly string[]): number | null => {
    if (!bucketed) return 0;
    const t = parseLokiTime('bucket', key[key.length - 1] ?? '', 0n);
    return t.ok ? Number((t.value - baseNs) / g) : null;
  };
  const bytes = isBytes(spec.fn);
  const main = await count(ctx, spec.predicate, [...terms, ...bucketTerm], baseNs, endNs, bytes);
  if (!main.ok) return main;
  const series: Buckets = new Map();
  for (const grp of main.value.groups) {
    const b = bucketIndex(grp.key);
    if (b !== null) add(series, labelsOfKey(spec.by, grp.key), b, grp.count, grp.bytes);
  }
  const nullable = spec.by.findIndex((b) => b.nullable);
  if (nullable >= 0 && main.value.excluded > 0) {
    // The records without the nullable label: all records minus those the first count grouped.
    const kept = spec.by.filter((_, i) => i !== nullable);
    const all = await count(ctx, spec.predicate, [...kept.map((b) => b.term), ...bucketTerm], baseNs, endNs, bytes);
    if (!all.ok) return all;
    const rest: Buckets = new Map();
    for (const grp of all.value.groups) {
      const b = bucketIndex(grp.key);
      if (b !== null) add(rest, labelsOfKey(kept, grp.key), b, grp.count, grp.bytes);
    }
    for (const grp of main.value.groups) {
      const b = bucketIndex(grp.key);
      const labels = labelsOfKey(spec.by, grp.key);
      delete labels[spec.by[nullable]!.label];
      if (b !== null) add(rest, labels, b, -grp.count, -grp.bytes);
    }
    for (const s of rest.values()) {
      for (const [b, n] of s.counts) if (n > 0) add(series, s.labels, b, n, s.bytes.get(b) ?? 0);
    }
  }
  const bucketsPerStep = bucketed ? Number(points.stepNs / g) : 0;
  const bucketsPerRange = bucketed ? Number(rangeNs / g) : 1;
  const seconds = Number(rangeNs) / 1e9;
  const out: LokiSeries[] = [];
  for (const s of series.values()) {
    const values: (number | null)[] = [];
    for (let i = 0; i < points.count; i++) {
      // Point i covers buckets [i·step/g, i·step/g + r/g): the bucket index counts from start − r.
      const first = i * bucketsPerStep;
      let n = 0;
      let size = 0;
      for (let b = first; b < first + bucketsPerRange; b++) {
        n += s.counts.get(b) ?? 0;
        size += s.bytes.get(b) ?? 0;
      }
      // A window with no records has no point; one whose lines are all empty is 0 bytes.
      const v = bytes ? size : n;
      values.push(n === 0 ? null : spec.fn === 'rate' || spec.fn === 'bytes_rate' ? v / seconds : v);
    }
    if (values.some((v) => v !== null)) out.push({ labels: s.labels, values });
  }
  return { ok: true, value: applyOuter(out, spec.outer, points.count) };
}

function project(labels: Record<string, string>, by: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of by) if (labels[l] !== undefined) out[l] = labels[l];
  return out;
}

/** Applies `sum by`, `count by` and `topk` around the innermost sum, innermost first, per evaluation time. */
export function applyOuter(series: LokiSeries[], outer: readonly LokiOuterAgg[], n: number): LokiSeries[] {
  let current = series;
  for (const o of outer) {
    if (o.op === 'topk') {
      const groups = new Map<string, LokiSeries[]>();
      for (const s of current) {
        const key = JSON.stringify(project(s.labels, o.by));
        groups.set(key, [...(groups.get(key) ?? []), s]);
      }
      const kept = current.map((s) => ({ labels: s.labels, values: new Array<number | null>(n).fill(null) }));
      const index = new Map(current.map((s, i) => [s, i]));
      for (const members of groups.values()) {
        for (let i = 0; i < n; i++) {
          const present = members.filter((s) => s.values[i] !== null);
          present.sort((a, b) => b.values[i]! - a.values[i]!);
          for (const s of present.slice(0, o.k)) kept[index.get(s)!]!.values[i] = s.values[i]!;
        }
      }
      current = kept.filter((s) => s.values.some((v) => v !== null));
      continue;
    }
    const groups = new Map<string, LokiSeries>();
    for (const s of current) {
      const labels = project(s.labels, o.by);
      const key = JSON.stringify(
        Object.keys(labels)
          .sort()
          .map((k) => [k, labels[k]]),
      );
      let g = groups.get(key);
      if (g === undefined) {
        g = { labels, values: new Array<number | null>(n).fill(null) };
        groups.set(key, g);
      }
      for (let i = 0; i < n; i++) {
        const v = s.values[i];
        if (v === null || v === undefined) continue;
        g.values[i] = (g.values[i] ?? 0) + (o.op === 'sum' ? v : 1);
      }
    }
    current = [...groups.values()];
  }
  return current;
}
