/**
 * @module derive-sink-ceiling
 * The receiver's sink ceiling (`receiver.sink.ceiling_bytes`) when it is unset, from the same effective limit as
 * the query pool (docs/deployment.md, "Sizing the sink ceiling"): a share of min(cgroup limit, MemTotal), never more
 * than what the limit leaves after the query pool (when the querier shares the process) and the measured
 * baseline, clamped to [32 MiB, 1 GiB]. Integer arithmetic as for the pool: share in ppm, BigInt, rounded down.
 */
import { shareToPpm } from './derive-pool-size.js';
import type { EffectiveLimit } from './derive-pool-size.js';

/** The config key the ceiling comes from. */
export const SINK_CEILING_KEY = 'receiver.sink.ceiling_bytes';
/**
 * Resident memory of a both-roles process (receiver, querier with 4 query workers, compactor) outside the pool and
 * the sink buffers: 320 MiB. Measured with `npm run bench:baseline` (`VmHWM` 313–316 MiB under light ingest and
 * queries, `VmRSS` 245–253 MiB idle, four runs; docs/deployment.md, "The baseline"). Every derivation leaves at least this free.
 */
export const BASELINE_BYTES = 335_544_320;
/** The smallest derived ceiling: 32 MiB (below it the sink would flush tiny Parquet files all the time). */
export const MIN_SINK_CEILING_BYTES = 33_554_432;
/** The largest derived ceiling: 1 GiB, the fixed ceiling before it was derived (large hosts keep it). */
export const MAX_SINK_CEILING_BYTES = 1_073_741_824;
/** The ceiling when no memory limit can be detected (non-Linux development): 1 GiB, as before. */
export const FALLBACK_SINK_CEILING_BYTES = 1_073_741_824;
/** Share of the limit for the sink when the querier (and its pool) shares the process. */
export const SINK_SHARE_WITH_QUERIER = 0.25;
/** Share of the limit for the sink when no querier runs in the process. */
export const SINK_SHARE_WITHOUT_QUERIER = 0.5;

const PPM = 1_000_000n;

/** Where the ceiling came from (the pool's sources). */
export type SinkCeilingSource = 'explicit' | 'cgroup_v2' | 'cgroup_v1' | 'meminfo' | 'fallback';

/** A resolved sink ceiling. */
export interface SinkCeilingSizing {
  readonly sizeBytes: number;
  readonly source: SinkCeilingSource;
  /** The share applied, or null for an explicit or fallback ceiling. */
  readonly share: number | null;
  /** True when the share's figure was cut to what the pool and the baseline leave, or clamped to the bounds. */
  readonly bounded: boolean;
  /** One line for the startup log: size, source, share, limit. */
  readonly description: string;
}

/** Inputs of {@link deriveSinkCeiling}. */
export interface DeriveSinkCeilingOptions {
  /** `receiver.sink.ceiling_bytes` if set. */
  readonly explicitBytes: number | null;
  /** The effective limit, or undefined when none was detected. */
  readonly limit: EffectiveLimit | undefined;
  /** The query pool's size when the querier runs in this process, else null. */
  readonly poolBytes: number | null;
}

/**
 * Resolves the ceiling. Never fails: whether the result fits the limit is `planMemory`'s check.
 * @example
 * deriveSinkCeiling({ explicitBytes: null, limit, poolBytes: 805_306_368 }).sizeBytes
 */
export function deriveSinkCeiling(options: DeriveSinkCeilingOptions): SinkCeilingSizing {
  const { explicitBytes, limit, poolBytes } = options;
  if (explicitBytes !== null) return sizing(explicitBytes, 'explicit', null, false, limit);
  if (limit === undefined) return sizing(FALLBACK_SINK_CEILING_BYTES, 'fallback', null, false, undefined);
  const share = poolBytes === null ? SINK_SHARE_WITHOUT_QUERIER : SINK_SHARE_WITH_QUERIER;
  const shareBytes = (limit.bytes * shareToPpm(share)) / PPM;
  // What the limit leaves once the pool and the baseline are counted; may be negative on a tiny limit.
  const room = limit.bytes - BigInt(poolBytes ?? 0) - BigInt(BASELINE_BYTES);
  let size = shareBytes < room ? shareBytes : room;
  if (size > BigInt(MAX_SINK_CEILING_BYTES)) size = BigInt(MAX_SINK_CEILING_BYTES);
  if (size < BigInt(MIN_SINK_CEILING_BYTES)) size = BigInt(MIN_SINK_CEILING_BYTES);
  return sizing(Number(size), limit.source, share, size !== shareBytes, limit);
}

function sizing(
  sizeBytes: number,
  source: SinkCeilingSource,
  share: number | null,
  bounded: boolean,
  limit: EffectiveLimit | undefined,
): SinkCeilingSizing {
  const limitPart = limit ? `, effective memory limit ${limit.bytes} bytes (${limit.source}: ${limit.file})` : '';
  const description =
    `sink ceiling ${sizeBytes} bytes (${(sizeBytes / 1_048_576).toFixed(1)} MiB), source ${source}` +
    `${share === null ? '' : `, share ${share}${bounded ? ' (bounded by the pool, the baseline or [32 MiB, 1 GiB])' : ''}`}` +
    `${limitPart}, baseline ${BASELINE_BYTES} bytes`;
  return Object.freeze({ sizeBytes, source, share, bounded, description });
}
