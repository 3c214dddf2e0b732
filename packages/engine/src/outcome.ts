/**
 * @module outcome
 * The outcome type every query entry point returns (log queries, drift statements, list_templates). It lives apart
 * from execute.ts so that drift.ts and templates.ts, which execute.ts calls, do not import execute.ts back.
 */
import type { CeilingCrossed, ResultBudget } from '@sluice/limits';
import type { CorruptObject } from './corrupt-objects.js';
import type { QueryFailure } from './failures.js';
import type { QueryStats } from './render-json.js';

/**
 * Outcome of a query. On `ok`, `body` is the whole serialized response and is still reserved through `budget`:
 * the caller calls `budget.release()` once it has been sent. On `error`, nothing stays reserved. Either way
 * `corrupt` lists every corrupt or foreign object the query met (under `skip`, those it left out; under `fail`,
 * the one it failed on), for the querier's log and metric.
 */
export type ExecuteOutcome =
  | {
      readonly status: 'ok';
      readonly body: Buffer;
      readonly budget: ResultBudget;
      readonly rows: number;
      readonly stats: QueryStats;
      readonly corrupt: readonly CorruptObject[];
      /** Observe mode: the result ceilings this query went past and was served anyway (else empty). */
      readonly crossed?: readonly CeilingCrossed[];
      /** A streamed query: the bytes of the lines sent before the trailer (`body`). */
      readonly streamedBytes?: number;
    }
  | { readonly status: 'error'; readonly error: QueryFailure; readonly corrupt: readonly CorruptObject[] };
