/**
 * @module query-costs
 * What recent runs of a query cost, to choose its admission lane before it runs (docs/design/query-governance.md,
 * "Fair shares"). A dashboard asks the same questions again and again; an over-wide query is refused or slow
 * again and again. So the querier remembers, per query fingerprint, the last run's execution time and peak pool
 * bytes, and a query whose last run was light (fast, small, not refused) goes to the light lane, whose permits
 * and queue the storm of heavy queries cannot take. A query never seen before goes to the general lane: being
 * unknown is not being light.
 *
 * A query never seen before may *probe* the light lane when a light permit is free at that instant (it never
 * queues there), so it can prove itself light; the light lane moves a run that outgrows it to the general lane.
 * A light query whose runs become *slow* — small and not refused, as a dashboard panel is on a machine busy
 * with a storm — keeps the light lane for {@link LIGHT_SLOW_RUNS_TOLERATED} slow runs in a row (measured: a 1 h
 * replay lost two panels for good after one slow run each). After that, and for a query that was slow without
 * ever having been light, it may probe again the same way as an unknown one, never wait for the lane: a storm's
 * slow-but-small queries allowed to wait there held light permits one after another (measured: 91 % of
 * dashboard polls served instead of 98 %). A query that was refused or big stays in the general lane.
 *
 * Slowness is judged like the deadline's 422/503 rule: a slow run during which another query executed may have
 * been slowed by the others, so it does not count against a light query as long as it stayed within
 * {@link LIGHT_CONTENDED_SLOWDOWN} × `light_query_ms`. Wall time alone let a storm push every dashboard panel out
 * of the lane it exists for (measured: a 1 h replay served 90 % of dashboard polls, the rest refused
 * `query_tenant_busy` on the general lane, once the panels' runs under the storm passed `light_query_ms` a few
 * times in a row). A run slower than that, or slow with nothing else executing, counts as before.
 *
 * The fingerprint is the tenant, the statement without its time range, and the window's width in powers of two,
 * so a panel that polls the "last 15 minutes" keeps its fingerprint while its absolute range moves on. The same
 * statement part without the tenant, hashed ({@link statementFingerprint}), names a query in log lines.
 */
import { createHash } from 'node:crypto';
import { effectiveWindow, printPredicate, printStage, type Query } from '@sluice/query';
import type { QueryJobKind } from './worker-protocol.js';

/** The lane a query is admitted through. */
export type QueryLane = 'light' | 'general';

/**
 * Where a query may go: `light` (its last run was light, or it was light and only a few slow runs followed: the
 * light lane, queueing there if need be), `probe` (unknown, or slow and not light: the light lane only if a
 * light permit is free now, else the general lane), or `general`.
 */
export type LaneChoice = 'light' | 'probe' | 'general';

/** How one run went, as far as its lane is concerned. */
export interface RunCost {
  /** Execution time from dispatch to result, ms. */
  readonly ms: number;
  /** The most the query held on the pool. */
  readonly peakBytes: number;
  /** Refused by a limit (memory, time, result size, files) or failed: never light. */
  readonly refused: boolean;
  /** Another query executed at some moment while this run did (its time may not be its own). */
  readonly contended: boolean;
}

/** Options of {@link createQueryCosts}; the thresholds mirror `querier.limits.light_query_*`. */
export interface QueryCostsOptions {
  /** `light_query_ms`: a light run finished within this many ms of execution. */
  readonly lightMs: number;
  /** `light_query_memory_bytes`: a light run held at most this many pool bytes. */
  readonly lightBytes: number;
  /** Fingerprints remembered (least recently used forgotten first). Default 4096. */
  readonly maxEntries?: number;
}

/** The remembered costs. */
export interface QueryCosts {
  /** Where a query with `fingerprint` may go (see {@link LaneChoice}). */
  laneOf(fingerprint: string): LaneChoice;
  /** Records a finished run of `fingerprint`. */
  record(fingerprint: string, cost: RunCost): void;
  /** Fingerprints remembered now. */
  size(): number;
}

/**
 * Consecutive slow (small, not refused) runs a query that has been light keeps the light lane through. A
 * dashboard panel slowed by a storm's CPU stays light; a query that has become heavy leaves the lane after this
 * many runs, each stopped at `light_query_ms` and moved, so it costs the light lane at most this many of them.
 */
export const LIGHT_SLOW_RUNS_TOLERATED = 2;

/**
 * How many times `light_query_ms` a contended run of a light query may take without counting as slow: the
 * dashboard panels of the incident replay ran at most ~2× the threshold under the storm (p99 7.6 s against
 * 4 s), while a query that has become heavy is not hidden for long — past this it counts as a slow run however
 * busy the machine was, and a light-lane run is bounded by its deadline either way.
 */
export const LIGHT_CONTENDED_SLOWDOWN = 3;

/** What is remembered of one fingerprint. */
interface Verdict {
  readonly choice: LaneChoice;
  /** Slow runs in a row since its last light run (only counted while it is light). */
  readonly slowRuns: number;
}

/** Creates an empty memory. */
export function createQueryCosts(options: QueryCostsOptions): QueryCosts {
  const maxEntries = options.maxEntries ?? 4096;
  // A Map keeps insertion order: re-inserting on use makes the first key the least recently used.
  const last = new Map<string, Verdict>();
  const judge = (before: Verdict | undefined, cost: RunCost): Verdict => {
    if (cost.refused || cost.peakBytes > options.lightBytes) return { choice: 'general', slowRuns: 0 };
    if (cost.ms < options.lightMs) return { choice: 'light', slowRuns: 0 };
    // Slowed beside other queries, within reason: not the query's own weight, so neither light nor slow.
    if (before?.choice === 'light' && cost.contended && cost.ms < LIGHT_CONTENDED_SLOWDOWN * options.lightMs)
      return before;
    // Only slow. A light query keeps its lane for a few slow runs (hysteresis); anything else may probe.
    if (before?.choice === 'light' && before.slowRuns < LIGHT_SLOW_RUNS_TOLERATED)
      return { choice: 'light', slowRuns: before.slowRuns + 1 };
    return { choice: 'probe', slowRuns: 0 };
  };
  return {
    laneOf(fingerprint) {
      const verdict = last.get(fingerprint);
      if (verdict === undefined) return 'probe';
      last.delete(fingerprint);
      last.set(fingerprint, verdict);
      return verdict.choice;
    },
    record(fingerprint, cost) {
      const verdict = judge(last.get(fingerprint), cost);
      last.delete(fingerprint);
      last.set(fingerprint, verdict);
      while (last.size > maxEntries) last.delete(last.keys().next().value as string);
    },
    size: () => last.size,
  };
}

/** log2 of the window's width in seconds, rounded down (0 for anything under 2 s). */
function widthBucket(query: Query, nowNs: bigint, defaultWindowSecs: number): number {
  const w = effectiveWindow(query, nowNs, defaultWindowSecs);
  const secs = Number((w.toNs - w.fromNs) / 1_000_000_000n);
  return secs < 2 ? 0 : Math.floor(Math.log2(secs));
}

/** The fingerprint of a job for `tenant` at `nowNs` (see the module doc). */
export function queryFingerprint(tenant: string, job: QueryJobKind, nowNs: bigint, defaultWindowSecs: number): string {
  return `${tenant}\u0000${statementKey(job, nowNs, defaultWindowSecs)}`;
}

/** The tenant-independent part of {@link queryFingerprint}: the normalized statement and the window's width. */
function statementKey(job: QueryJobKind, nowNs: bigint, defaultWindowSecs: number): string {
  if (job.kind === 'list_templates') return 'list_templates';
  if (job.kind === 'tail_poll') return `tail\u0000${printPredicate(job.predicate)}`;
  const q = job.query;
  const width = widthBucket(q, nowNs, defaultWindowSecs);
  if (q.kind === 'drift') return `drift\u0000${width}`;
  const stages = q.stages.filter((s) => s.kind !== 'range').map(printStage);
  const cap = job.rowCap === undefined ? '' : `\u0000cap ${job.rowCap}`;
  return `${[printPredicate(q.predicate), ...stages].join(' | ')}\u0000${width}${cap}`;
}

/**
 * The query fingerprint of log lines (docs/design/query-governance.md, "Observe, then enforce"): 16 hex digits of
 * the SHA-256 of the normalized statement (printed predicate and stages without the time range) and the window's
 * width in powers of two. Stable across restarts and processes, and the same for every tenant, so one statement's
 * lines can be counted across tenants without logging the statement (the tenant is its own field).
 */
export function statementFingerprint(job: QueryJobKind, nowNs: bigint, defaultWindowSecs: number): string {
  return createHash('sha256')
    .update(statementKey(job, nowNs, defaultWindowSecs))
    .digest('hex')
    .slice(0, 16);
}
