/**
 * @module query-costs
 * What recent runs of a query cost, to choose its admission lane before it runs (docs/design/query-governance.md,
 * "Fair shares"). A dashboard asks the same questions again and again; an over-wide query is refused or slow
 * again and again. So the querier remembers, per query fingerprint, the last run's execution time and peak pool
 * bytes, and a query whose last run was light (fast, small, not refused) goes to the light lane, whose permits
 * and queue the storm of heavy queries cannot take. A query never seen before goes to the general lane: being
 * unknown is not being light.
 *
 * A query never seen before may *probe* the light lane when a light permit is free at that instant, or wait for
 * one when the general lane cannot admit it at once either (query-service.ts), so it can prove itself light; the light lane moves a run that outgrows it to the general lane.
 * A query whose last run was only *slow* — small and not refused, as a dashboard panel is on a machine busy
 * with a storm — may probe again the same way: under a storm the general lane never runs it, so without that it
 * could never show itself light again (measured: two panels lost for the rest of a 1 h replay after one slow
 * run each). A query that was refused or big stays in the general lane.
 *
 * The fingerprint is the tenant, the statement without its time range, and the window's width in powers of two,
 * so a panel that polls the "last 15 minutes" keeps its fingerprint while its absolute range moves on.
 */
import { effectiveWindow, printPredicate, printStage, type Query } from '@sluice/query';
import type { QueryJobKind } from './worker-protocol.js';

/** The lane a query is admitted through. */
export type QueryLane = 'light' | 'general';

/**
 * Where a query may go: `light` (its last run was light: the light lane, queueing there if need be), `probe`
 * (unknown, or only slow last time: the light lane if a light permit is free now or the general lane has none,
 * else the general lane), or `general`.
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

/** Creates an empty memory. */
export function createQueryCosts(options: QueryCostsOptions): QueryCosts {
  const maxEntries = options.maxEntries ?? 4096;
  // A Map keeps insertion order: re-inserting on use makes the first key the least recently used.
  const last = new Map<string, LaneChoice>();
  return {
    laneOf(fingerprint) {
      const choice = last.get(fingerprint);
      if (choice === undefined) return 'probe';
      last.delete(fingerprint);
      last.set(fingerprint, choice);
      return choice;
    },
    record(fingerprint, cost) {
      const small = !cost.refused && cost.peakBytes <= options.lightBytes;
      const choice: LaneChoice = !small ? 'general' : cost.ms < options.lightMs ? 'light' : 'probe';
      last.delete(fingerprint);
      last.set(fingerprint, choice);
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
  if (job.kind === 'list_templates') return `${tenant}\u0000list_templates`;
  const q = job.query;
  const width = widthBucket(q, nowNs, defaultWindowSecs);
  if (q.kind === 'drift') return `${tenant}\u0000drift\u0000${width}`;
  const stages = q.stages.filter((s) => s.kind !== 'range').map(printStage);
  const cap = job.rowCap === undefined ? '' : `\u0000cap ${job.rowCap}`;
  return `${tenant}\u0000${[printPredicate(q.predicate), ...stages].join(' | ')}\u0000${width}${cap}`;
}
