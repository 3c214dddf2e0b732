/**
 * @module ceiling-observation
 * Observe, then enforce (docs/design/query-governance.md, "Observe, then enforce"): with
 * `querier.limits.enforcement: observe` the per-query result ceilings do not refuse. A query past one is served,
 * and what enforce mode would have refused is reported as a {@link CeilingCrossed}: the querier logs it with the
 * query's fingerprint and counts it on `sluice.query.budget_exceeded`, so an operator can choose a ceiling from
 * real traffic before arming it. The pool itself, the file caps, the deadline and admission are never observed
 * only: memory that is not there is refused in either mode.
 */
import { assertNever } from '@sluice/core';
import { MAX_QUERY_MEMORY_KEY, MAX_RESULT_BYTES_KEY, MAX_ROWS_KEY } from './limit-keys.js';

/** What the result ceilings do: refuse (`enforce`, the default) or serve and report (`observe`). */
export type CeilingEnforcement = 'enforce' | 'observe';

/**
 * The ceilings observe mode relaxes, by their config key's last segment (the `sluice.query.limit` attribute):
 * the serialized result, the row limit (enforce mode clamps a larger `limit` to it), the per-query memory ceiling.
 */
export type ResultCeiling = 'max_result_bytes' | 'max_rows' | 'max_query_memory_bytes';

/** A ceiling a query went past and was served anyway (observe mode). */
export interface CeilingCrossed {
  readonly limit: ResultCeiling;
  /** What the query did: result bytes, records returned, or peak pool bytes. */
  readonly value: number;
  /** The configured ceiling it went past. */
  readonly ceiling: number;
}

/** The config key of a result ceiling, for the warning line. */
export function resultCeilingKey(limit: ResultCeiling): string {
  switch (limit) {
    case 'max_result_bytes':
      return MAX_RESULT_BYTES_KEY;
    case 'max_rows':
      return MAX_ROWS_KEY;
    case 'max_query_memory_bytes':
      return MAX_QUERY_MEMORY_KEY;
    default:
      return assertNever(limit, 'result ceiling');
  }
}
