/**
 * @module derive-pool-size
 * Resolves the pool size (docs/deployment.md, "Sizing the query memory pool"): explicit `memory_pool_bytes` wins; otherwise
 * share × min(cgroup limit, MemTotal), with share = `memory_pool_fraction`, else 0.50 when the receiver or
 * compaction shares the process and 0.75 when the querier runs alone. The product is integer arithmetic: the share
 * becomes parts per million once, and the size is `limit × ppm / 1_000_000` in BigInt, rounded down, so it never
 * exceeds share × limit. Invalid results are startup errors returned as values, naming the key and the value.
 */
import { err, ok } from '@sluice/core';
import type { Result } from '@sluice/core';
import type { MemoryReading, MemorySource } from './memory-source.js';

/** The smallest pool Sluice starts with: 32 MiB. Below it nearly every query would be refused. */
export const MIN_POOL_BYTES = 33_554_432;
/** Pool size when no limit can be detected at all (non-Linux development): 1 GiB. */
export const FALLBACK_POOL_BYTES = 1_073_741_824;
/** Default share when another role (receiver, compaction) runs in the process. */
export const SHARED_PROCESS_SHARE = 0.5;
/** Default share when the querier runs alone. */
export const QUERIER_ONLY_SHARE = 0.75;

const PPM = 1_000_000n;

/** Config keys the sizing reads (docs/configuration.md). */
export const POOL_BYTES_KEY = 'querier.limits.memory_pool_bytes';
export const POOL_FRACTION_KEY = 'querier.limits.memory_pool_fraction';

/** The roles enabled in this process. */
export interface PoolRoles {
  readonly receiver: boolean;
  readonly compaction: boolean;
  readonly querier: boolean;
}

/** Inputs of {@link derivePoolSize}; `null`/`undefined` means the key is unset. */
export interface DerivePoolSizeOptions {
  readonly explicitBytes?: number | null;
  readonly fraction?: number | null;
  readonly roles: PoolRoles;
  readonly source: MemorySource;
}

/** Where the size came from. */
export type PoolSizeSource = 'explicit' | 'cgroup_v2' | 'cgroup_v1' | 'meminfo' | 'fallback';

/** A resolved pool size. */
export interface PoolSizing {
  readonly sizeBytes: number;
  readonly source: PoolSizeSource;
  /** The effective limit min(cgroup, MemTotal), or null when none was detected. */
  readonly limitBytes: number | null;
  /** The share applied, or null for an explicit or fallback size. */
  readonly share: number | null;
  /** The file that set the limit, when a cgroup or meminfo did. */
  readonly limitFile: string | null;
  /** One line for the startup log: size, source, share. */
  readonly description: string;
  /** Warnings for the startup log (explicit size above the detected limit, ignored inputs, fallback). */
  readonly warnings: readonly string[];
}

/** A startup configuration error naming the key and its value. */
export interface PoolSizeError {
  readonly kind: 'pool_size_invalid';
  readonly key: typeof POOL_BYTES_KEY | typeof POOL_FRACTION_KEY;
  readonly value: number;
  readonly reason: 'below_minimum' | 'out_of_range' | 'not_a_byte_count';
  readonly message: string;
}

/**
 * Resolves the pool size. Reads `source` once.
 * @example
 * const r = derivePoolSize({ roles: { receiver: true, compaction: false, querier: true },
 *   source: createMemorySource() });
 * if (!r.ok) fail(r.error.message); else log(r.value.description);
 */
export function derivePoolSize(options: DerivePoolSizeOptions): Result<PoolSizing, PoolSizeError> {
  const { explicitBytes, fraction, roles } = options;
  if (fraction !== undefined && fraction !== null && !(Number.isFinite(fraction) && fraction > 0 && fraction <= 1)) {
    return err(
      invalid(POOL_FRACTION_KEY, fraction, 'out_of_range', `${POOL_FRACTION_KEY} = ${fraction} must lie in (0, 1]`),
    );
  }
  const reading = options.source.read();
  const warnings = reading.notes.map((n) => `memory limit detection: ${n}`);
  const limit = effectiveLimit(reading);

  if (explicitBytes !== undefined && explicitBytes !== null) {
    if (!Number.isSafeInteger(explicitBytes) || explicitBytes < 0) {
      return err(
        invalid(
          POOL_BYTES_KEY,
          explicitBytes,
          'not_a_byte_count',
          `${POOL_BYTES_KEY} = ${explicitBytes} is not a whole number of bytes`,
        ),
      );
    }
    if (explicitBytes < MIN_POOL_BYTES) return err(tooSmall(POOL_BYTES_KEY, explicitBytes, explicitBytes));
    if (limit && BigInt(explicitBytes) > limit.bytes) {
      warnings.push(
        `${POOL_BYTES_KEY} = ${explicitBytes} exceeds the detected memory limit ${limit.bytes} (${limit.source}, ${limit.file}); ` +
          'allowed, but the process may be OOM-killed before the pool refuses a query',
      );
    }
    return ok(sizing(explicitBytes, 'explicit', limit, null, warnings));
  }

  if (!limit) {
    warnings.push(
      `no memory limit detected (no cgroup limit, no MemTotal); the pool falls back to ${FALLBACK_POOL_BYTES} bytes`,
    );
    return ok(sizing(FALLBACK_POOL_BYTES, 'fallback', undefined, null, warnings));
  }
  const share = fraction ?? (roles.receiver || roles.compaction ? SHARED_PROCESS_SHARE : QUERIER_ONLY_SHARE);
  const size = Number((limit.bytes * shareToPpm(share)) / PPM);
  if (size < MIN_POOL_BYTES) {
    const key = fraction === undefined || fraction === null ? POOL_BYTES_KEY : POOL_FRACTION_KEY;
    return err(
      tooSmall(key, key === POOL_FRACTION_KEY ? share : size, size, `${share} × ${limit.bytes} (${limit.source})`),
    );
  }
  return ok(sizing(size, limit.source, limit, share, warnings));
}

/** The share in integer parts per million (rounded to the nearest ppm, so 0.29 is 290000, not 289999). */
export function shareToPpm(share: number): bigint {
  return BigInt(Math.round(share * 1_000_000));
}

/** The effective memory limit and where it came from. */
export interface EffectiveLimit {
  readonly bytes: bigint;
  readonly source: 'cgroup_v2' | 'cgroup_v1' | 'meminfo';
  /** The file that set it (`MemTotal` for meminfo). */
  readonly file: string;
}
type Limit = EffectiveLimit;

/**
 * min(cgroup limit, MemTotal); the cgroup wins a tie (it is the limit the kernel enforces). The one rule both the
 * pool and the sink ceiling size from (docs/deployment.md).
 */
export function effectiveLimit(reading: MemoryReading): Limit | undefined {
  const { cgroup, memTotalBytes } = reading;
  if (cgroup && (memTotalBytes === undefined || cgroup.limitBytes <= memTotalBytes)) {
    return { bytes: cgroup.limitBytes, source: cgroup.version === 'v2' ? 'cgroup_v2' : 'cgroup_v1', file: cgroup.file };
  }
  if (memTotalBytes !== undefined) return { bytes: memTotalBytes, source: 'meminfo', file: 'MemTotal' };
  return undefined;
}

function sizing(
  sizeBytes: number,
  source: PoolSizeSource,
  limit: Limit | undefined,
  share: number | null,
  warnings: string[],
): PoolSizing {
  const limitPart = limit ? `, effective memory limit ${limit.bytes} bytes (${limit.source}: ${limit.file})` : '';
  const description =
    `query memory pool ${sizeBytes} bytes (${mib(sizeBytes)} MiB), source ${source}` +
    `${share === null ? '' : `, share ${share}`}${limitPart}`;
  return Object.freeze({
    sizeBytes,
    source,
    limitBytes: limit ? Number(limit.bytes) : null,
    share,
    limitFile: limit?.file ?? null,
    description,
    warnings: Object.freeze([...warnings]),
  });
}

function mib(bytes: number): string {
  return (bytes / 1_048_576).toFixed(1);
}

function invalid(
  key: PoolSizeError['key'],
  value: number,
  reason: PoolSizeError['reason'],
  message: string,
): PoolSizeError {
  return Object.freeze({ kind: 'pool_size_invalid', key, value, reason, message });
}

function tooSmall(key: PoolSizeError['key'], value: number, size: number, how?: string): PoolSizeError {
  const from = how === undefined ? '' : ` (= ${how})`;
  return invalid(
    key,
    value,
    'below_minimum',
    `${key} = ${value} resolves to a query memory pool of ${size} bytes${from}, below the ${MIN_POOL_BYTES}-byte (32 MiB) minimum; ` +
      `raise the memory limit, or set ${POOL_BYTES_KEY} to at least ${MIN_POOL_BYTES}`,
  );
}
