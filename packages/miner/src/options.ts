/**
 * @module options
 * The miner's tuning knobs (packages/miner/README.md), their defaults and their validation. Every cap that
 * bounds the miner's memory is here; the README derives the bound from them.
 */

/** Miner parameters. Names are the `receiver.miner.*` keys in camelCase. */
export interface MinerOptions {
  /** Clean-attach cutoff in (0, 1]: a line whose best similarity is ≥ this attaches to that template. */
  readonly similarityThreshold: number;
  /** Bottom of the lossy zone, in (0, similarityThreshold]: below it the line is a parse failure. */
  readonly similarityFloor: number;
  /** Number of leading (masked) tokens that key the prefix tree, 0..8. */
  readonly prefixDepth: number;
  /** Literal children per tree node (≥ 1); a full node routes unseen tokens through its `<*>` child. */
  readonly maxNodeChildren: number;
  /** A token longer than this many UTF-8 bytes (1..1024) becomes an `OVERFLOW` param and the line is lossy. */
  readonly paramByteLimit: number;
  /** Templates per tenant (≥ 1); at the ceiling new shapes are parse failures (never merged, never evicted). */
  readonly maxTemplatesPerTenant: number;
  /** Lines with more whitespace-separated tokens than this (≥ 1) are parse failures. */
  readonly maxLineTokens: number;
}

/** The defaults (packages/miner/README.md). */
export const DEFAULT_MINER_OPTIONS: MinerOptions = Object.freeze({
  similarityThreshold: 0.7,
  similarityFloor: 0.4,
  prefixDepth: 2,
  maxNodeChildren: 100,
  paramByteLimit: 256,
  maxTemplatesPerTenant: 20_000,
  maxLineTokens: 512,
});

function isInt(v: number): boolean {
  return Number.isSafeInteger(v);
}

/**
 * Merges `overrides` over `base` and validates every field against the documented ranges.
 *
 * @throws RangeError listing every out-of-range option (a configuration bug, not a runtime outcome).
 */
export function resolveMinerOptions(
  overrides: Partial<MinerOptions> = {},
  base: MinerOptions = DEFAULT_MINER_OPTIONS,
): MinerOptions {
  const o: MinerOptions = { ...base, ...stripUndefined(overrides) };
  const problems: string[] = [];
  if (!(o.similarityThreshold > 0 && o.similarityThreshold <= 1)) {
    problems.push(`similarityThreshold must be in (0, 1], got ${o.similarityThreshold}`);
  }
  if (!(o.similarityFloor > 0 && o.similarityFloor <= o.similarityThreshold)) {
    problems.push(`similarityFloor must be in (0, similarityThreshold], got ${o.similarityFloor}`);
  }
  if (!isInt(o.prefixDepth) || o.prefixDepth < 0 || o.prefixDepth > 8) {
    problems.push(`prefixDepth must be an integer in 0..8, got ${o.prefixDepth}`);
  }
  if (!isInt(o.maxNodeChildren) || o.maxNodeChildren < 1) {
    problems.push(`maxNodeChildren must be an integer ≥ 1, got ${o.maxNodeChildren}`);
  }
  if (!isInt(o.paramByteLimit) || o.paramByteLimit < 1 || o.paramByteLimit > 1024) {
    problems.push(`paramByteLimit must be an integer in 1..1024, got ${o.paramByteLimit}`);
  }
  if (!isInt(o.maxTemplatesPerTenant) || o.maxTemplatesPerTenant < 1) {
    problems.push(`maxTemplatesPerTenant must be an integer ≥ 1, got ${o.maxTemplatesPerTenant}`);
  }
  if (!isInt(o.maxLineTokens) || o.maxLineTokens < 1) {
    problems.push(`maxLineTokens must be an integer ≥ 1, got ${o.maxLineTokens}`);
  }
  if (problems.length > 0) throw new RangeError(`invalid miner options: ${problems.join('; ')}`);
  return Object.freeze(o);
}

function stripUndefined(o: Partial<MinerOptions>): Partial<MinerOptions> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out as Partial<MinerOptions>;
}
