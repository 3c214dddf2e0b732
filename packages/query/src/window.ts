/**
 * @module window
 * Time resolution and the effective window/limit of a query (packages/query/README.md): relative times resolve against
 * the server's `now`, reversed bounds are swapped, the last `range` wins, and without one the window is
 * `[now − default_window_secs, now]`. Windows are half-open `[fromNs, toNs)`.
 */
import type { LogQuery, Query, Stage, TimeSpec } from './ir.js';
import { Queries, Stages } from './ir.js';
import { NS_PER_SECOND } from './time-text.js';

/** A resolved half-open window in nanoseconds since the epoch. */
export interface TimeWindow {
  readonly fromNs: bigint;
  readonly toNs: bigint;
}

/** Nanoseconds of a time spec at `nowNs`. */
export function resolveTime(t: TimeSpec, nowNs: bigint): bigint {
  switch (t.kind) {
    case 'now':
      return nowNs;
    case 'relative':
      return nowNs + t.offsetNs;
    case 'absolute':
      return t.ns;
  }
}

function resolvePair(from: TimeSpec, to: TimeSpec, nowNs: bigint): [TimeSpec, TimeSpec] {
  let a = resolveTime(from, nowNs);
  let b = resolveTime(to, nowNs);
  if (a > b) [a, b] = [b, a];
  return [
    { kind: 'absolute', ns: a },
    { kind: 'absolute', ns: b },
  ];
}

/**
 * The same query with every `now`/relative time made absolute at `nowNs` and reversed bounds swapped, so later
 * stages (planning, caching, logging) see one fixed instant.
 */
export function resolveTimes(q: Query, nowNs: bigint): Query {
  if (q.kind === 'drift') return Queries.drift(...resolvePair(q.from, q.to, nowNs));
  const stages = q.stages.map((s): Stage =>
    s.kind === 'range' ? Stages.range(...resolvePair(s.from, s.to, nowNs)) : s,
  );
  return Queries.logs(q.predicate, stages);
}

/**
 * The window a query scans: its last `range` (resolved at `nowNs`, bounds ordered), else
 * `[nowNs − defaultWindowSecs·1e9, nowNs]`. For a drift statement, its `from`/`to`.
 */
export function effectiveWindow(q: Query, nowNs: bigint, defaultWindowSecs: number): TimeWindow {
  let pair: [TimeSpec, TimeSpec] | undefined;
  if (q.kind === 'drift') pair = [q.from, q.to];
  else {
    for (const s of q.stages) if (s.kind === 'range') pair = [s.from, s.to];
  }
  if (!pair) return { fromNs: nowNs - BigInt(Math.trunc(defaultWindowSecs)) * NS_PER_SECOND, toNs: nowNs };
  const [a, b] = resolvePair(pair[0], pair[1], nowNs);
  return { fromNs: resolveTime(a, nowNs), toNs: resolveTime(b, nowNs) };
}

/** The last `limit` of a log query (the one that counts; the server clamps it), or `undefined`. */
export function effectiveLimit(q: LogQuery): bigint | undefined {
  let n: bigint | undefined;
  for (const s of q.stages) if (s.kind === 'limit') n = s.n;
  return n;
}

/** The aggregation stage of a log query, if any (validation guarantees at most one). */
export function aggregationStage(q: LogQuery): Extract<Stage, { kind: 'count' | 'aggregate' }> | undefined {
  return q.stages.find(Stages.isAggregation);
}
