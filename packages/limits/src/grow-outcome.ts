/**
 * @module grow-outcome
 * The value a reservation attempt returns, and the rule that classifies a refusal: the query's
 * `needed` bytes (what it held plus what it asked for) against its own ceiling first, then the whole pool.
 */

/**
 * Why a `tryGrow` was refused: past the query's own ceiling or `needed > poolSize` is a size problem (422),
 * otherwise contention (503).
 */
export type MemoryRefusalKind = 'query_memory_limit' | 'query_memory_contended';

/**
 * Which ceiling refused: `pool` is the shared pool (`querier.limits.memory_pool_bytes`), `query` the query's own
 * `maxBytes` (`querier.limits.max_query_memory_bytes`).
 */
export type MemoryCeiling = 'pool' | 'query';

/** A refused `tryGrow`, with the figures the user-facing message and the server log report. */
export interface GrowRefused {
  readonly status: 'refused';
  readonly kind: MemoryRefusalKind;
  /** `held + requested`: a lower bound on what the query needed at the refusal (docs/design/query-governance.md, "422 or 503"). */
  readonly needed: number;
  /** Bytes this query held when it was refused. */
  readonly held: number;
  /** The refused request. */
  readonly requested: number;
  /** The shared pool's size in bytes. */
  readonly poolSize: number;
  /** The ceiling that refused. A `query` refusal is always `query_memory_limit` and never touched the pool total. */
  readonly ceiling: MemoryCeiling;
  /** That ceiling in bytes: `poolSize` for `pool`, the query's `maxBytes` for `query`. */
  readonly ceilingBytes: number;
}

/** The outcome of `QueryReservation.tryGrow`. */
export type GrowOutcome = { readonly status: 'ok' } | GrowRefused;

/** The one shared success value (outcomes are immutable). */
export const GROW_OK: GrowOutcome = Object.freeze({ status: 'ok' });

/**
 * Classifies a refusal (docs/design/query-governance.md, "422 or 503"): a query that could not fit even with the pool to itself is told to ask for
 * less (`query_memory_limit`); one that would have fit had others not held the rest is told to retry
 * (`query_memory_contended`). `needed` is a lower bound, so the rule errs toward retrying, never the reverse.
 *
 * @example
 * classifyRefusal(150, 100) // 'query_memory_limit'
 * classifyRefusal(50, 100)  // 'query_memory_contended'
 */
export function classifyRefusal(needed: number, poolSize: number): MemoryRefusalKind {
  return needed > poolSize ? 'query_memory_limit' : 'query_memory_contended';
}

/** Builds the refusal value for a request of `requested` bytes by a query holding `held` that the pool refused. */
export function refusal(held: number, requested: number, poolSize: number): GrowRefused {
  const needed = held + requested;
  return Object.freeze({
    status: 'refused',
    kind: classifyRefusal(needed, poolSize),
    needed,
    held,
    requested,
    poolSize,
    ceiling: 'pool',
    ceilingBytes: poolSize,
  });
}

/**
 * Builds the refusal value for a request that would take the query past its own `maxBytes`: always "ask for
 * less", since retrying the same query can never fit under the same ceiling.
 */
export function queryCeilingRefusal(held: number, requested: number, poolSize: number, maxBytes: number): GrowRefused {
  return Object.freeze({
    status: 'refused',
    kind: 'query_memory_limit',
    needed: held + requested,
    held,
    requested,
    poolSize,
    ceiling: 'query',
    ceilingBytes: maxBytes,
  });
}
