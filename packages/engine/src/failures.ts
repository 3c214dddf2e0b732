/**
 * @module failures
 * The typed outcomes of a failed query and the internal control-flow error that carries one to the top of
 * {@link executeQuery}. Messages never carry library text (docs/design/query-governance.md).
 */
import type { LimitError } from '@sluice/limits';

/** Why a query failed. `internal` messages are scrubbed (e.g. "failed to read storage"). */
export type QueryFailure =
  | { readonly kind: 'invalid_query'; readonly message: string }
  | LimitError
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'internal'; readonly message: string };

/** Thrown inside the engine to unwind to the top with a typed failure. Never escapes the package. */
export class QueryAbort extends Error {
  override readonly name = 'QueryAbort';
  constructor(readonly failure: QueryFailure) {
    super(failure.kind);
  }
}

/** The scrubbed message of every storage failure. */
export const STORAGE_FAILURE_MESSAGE = 'failed to read storage';

/** Maps anything thrown during execution to a failure (never leaks the thrown text). */
export function failureOf(e: unknown, signal: AbortSignal | undefined): QueryFailure {
  if (e instanceof QueryAbort) return e.failure;
  if (signal?.aborted === true) return { kind: 'cancelled' };
  return { kind: 'internal', message: STORAGE_FAILURE_MESSAGE };
}

/** Throws `cancelled` when the signal has fired. */
export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new QueryAbort({ kind: 'cancelled' });
}
