/**
 * @module memory-plan
 * One process's memory plan at startup (docs/deployment.md, "Sizing the sink ceiling"): reads the memory source
 * once, sizes the query pool (when the querier runs) and the sink ceiling (when the receiver runs) from that one
 * reading, and checks that they fit: pool + sink ceiling + the measured baseline ≤ the effective limit. A plan that
 * cannot fit is a startup error naming every figure, except when an explicit value alone is above the detected limit
 * (the operator may know a limit Sluice cannot see): then each such value is a warning, as for the pool alone.
 */
import { err, ok } from '@sluice/core';
import type { Result } from '@sluice/core';
import { POOL_BYTES_KEY, derivePoolSize, effectiveLimit } from './derive-pool-size.js';
import type { PoolRoles, PoolSizeError, PoolSizing } from './derive-pool-size.js';
import { BASELINE_BYTES, MIN_SINK_CEILING_BYTES, SINK_CEILING_KEY, deriveSinkCeiling } from './derive-sink-ceiling.js';
import type { SinkCeilingSizing } from './derive-sink-ceiling.js';
import type { MemorySource } from './memory-source.js';

/** Inputs of {@link planMemory}; `null`/`undefined` means the key is unset. */
export interface PlanMemoryOptions {
  readonly roles: PoolRoles;
  /** `querier.limits.memory_pool_bytes`. */
  readonly poolBytes?: number | null;
  /** `querier.limits.memory_pool_fraction`. */
  readonly poolFraction?: number | null;
  /** `receiver.sink.ceiling_bytes`. */
  readonly sinkCeilingBytes?: number | null;
  readonly source: MemorySource;
}

/** The resolved plan. */
export interface MemoryPlan {
  /** The query pool, when the querier runs. */
  readonly pool: PoolSizing | null;
  /** The sink ceiling, when the receiver runs. */
  readonly sinkCeiling: SinkCeilingSizing | null;
  /** The effective limit, or null when none was detected. */
  readonly limitBytes: number | null;
  /** The baseline the fit check counts ({@link BASELINE_BYTES}). */
  readonly baselineBytes: number;
  /** Every warning for the startup log (the pool's, then the sink ceiling's). */
  readonly warnings: readonly string[];
}

/** One figure of a plan that does not fit. */
export interface MemoryFigure {
  /** A config key, or `baseline`. */
  readonly name: string;
  readonly bytes: number;
  /** How it was set: `explicit`, `derived`, `measured`. */
  readonly how: 'explicit' | 'derived' | 'measured';
  /** How a derived figure came about (the share, or the minimum it was clamped to). */
  readonly detail: string | null;
}

/** A plan whose figures add up to more than the detected limit. */
export interface MemoryFitError {
  readonly kind: 'memory_plan_does_not_fit';
  readonly figures: readonly MemoryFigure[];
  readonly totalBytes: number;
  readonly limitBytes: number;
  /** `cgroup_v2`, `cgroup_v1` or `meminfo`, and the file that set the limit. */
  readonly limitSource: string;
  readonly limitFile: string;
  readonly message: string;
}

/**
 * Plans the process's memory. Reads `source` once.
 * @example
 * const r = planMemory({ roles, poolBytes: null, poolFraction: null, sinkCeilingBytes: null, source });
 * if (!r.ok) fail(r.error.message); else log(r.value.sinkCeiling?.description);
 */
export function planMemory(options: PlanMemoryOptions): Result<MemoryPlan, PoolSizeError | MemoryFitError> {
  const reading = options.source.read();
  const once: MemorySource = { paths: options.source.paths, read: () => reading };
  const { roles } = options;
  let pool: PoolSizing | null = null;
  if (roles.querier) {
    const sized = derivePoolSize({
      explicitBytes: options.poolBytes ?? null,
      fraction: options.poolFraction ?? null,
      roles,
      source: once,
    });
    if (!sized.ok) return sized;
    pool = sized.value;
  }
  const warnings = [...(pool?.warnings ?? [])];
  const limit = effectiveLimit(reading);
  const plan = (sinkCeiling: SinkCeilingSizing | null): MemoryPlan =>
    Object.freeze({
      pool,
      sinkCeiling,
      limitBytes: limit ? Number(limit.bytes) : null,
      baselineBytes: BASELINE_BYTES,
      warnings: Object.freeze(warnings),
    });
  if (!roles.receiver) {
    // The querier's own sizing rules apply unchanged (the pool's warning for an explicit size above the limit).
    return ok(plan(null));
  }
  if (!pool) warnings.push(...reading.notes.map((n) => `memory limit detection: ${n}`));
  const explicitSink = options.sinkCeilingBytes ?? null;
  const sink = deriveSinkCeiling({ explicitBytes: explicitSink, limit, poolBytes: pool?.sizeBytes ?? null });
  if (!limit) {
    if (sink.source === 'fallback') {
      warnings.push(
        `no memory limit detected (no cgroup limit, no MemTotal); ${SINK_CEILING_KEY} falls back to ${sink.sizeBytes} bytes`,
      );
    }
    return ok(plan(sink));
  }
  const poolAbove = pool?.source === 'explicit' && BigInt(pool.sizeBytes) > limit.bytes;
  const sinkAbove = explicitSink !== null && BigInt(explicitSink) > limit.bytes;
  if (sinkAbove) {
    warnings.push(
      `${SINK_CEILING_KEY} = ${explicitSink} exceeds the detected memory limit ${limit.bytes} (${limit.source}, ${limit.file}); ` +
        'allowed, but the process may be OOM-killed before the sink flushes at its ceiling',
    );
  }
  if (poolAbove || sinkAbove) {
    // An explicit value above the limit says the operator knows a limit Sluice cannot see: no fit check against it.
    return ok(plan(sink));
  }
  const figures: MemoryFigure[] = [];
  if (pool) {
    const explicit = pool.source === 'explicit';
    figures.push({
      name: POOL_BYTES_KEY,
      bytes: pool.sizeBytes,
      how: explicit ? 'explicit' : 'derived',
      detail: explicit ? null : `share ${pool.share} of the limit`,
    });
  }
  const sinkExplicit = sink.source === 'explicit';
  figures.push({
    name: SINK_CEILING_KEY,
    bytes: sink.sizeBytes,
    how: sinkExplicit ? 'explicit' : 'derived',
    detail: sinkExplicit
      ? null
      : sink.sizeBytes === MIN_SINK_CEILING_BYTES
        ? 'its 32 MiB minimum'
        : `share ${sink.share}`,
  });
  figures.push({ name: 'baseline', bytes: BASELINE_BYTES, how: 'measured', detail: null });
  const total = figures.reduce((sum, f) => sum + BigInt(f.bytes), 0n);
  if (total > limit.bytes) return err(doesNotFit(figures, total, limit));
  return ok(plan(sink));
}

function doesNotFit(
  figures: readonly MemoryFigure[],
  total: bigint,
  limit: NonNullable<ReturnType<typeof effectiveLimit>>,
): MemoryFitError {
  const parts = figures
    .map((f) => `${f.name} = ${f.bytes} (${f.how}${f.detail === null ? '' : `: ${f.detail}`})`)
    .join(' + ');
  const message =
    `the memory plan does not fit the detected memory limit: ${parts} = ${total} bytes, above the limit of ` +
    `${limit.bytes} bytes (${limit.source}: ${limit.file}); lower ${SINK_CEILING_KEY} or ${POOL_BYTES_KEY} ` +
    '(or leave them unset to derive them), or raise the memory limit';
  return Object.freeze({
    kind: 'memory_plan_does_not_fit',
    figures: Object.freeze([...figures]),
    totalBytes: Number(total),
    limitBytes: Number(limit.bytes),
    limitSource: limit.source,
    limitFile: limit.file,
    message,
  });
}
