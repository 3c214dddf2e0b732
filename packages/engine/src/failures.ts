/**
 * @module failures
 * The typed outcomes of a failed query and the internal control-flow error that carries one to the top of
 * {@link executeQuery}. Messages never carry library text (docs/design/query-governance.md).
 */
import type { LimitError } from '@sluice/limits';
import type { CorruptReason, StorageOperation, UnavailableReason } from '@sluice/storage';
import { StorageCorruptError, StorageUnavailableError } from '@sluice/storage';

/** Why a query failed. `internal` messages are scrubbed (e.g. "failed to read storage"). */
export type QueryFailure =
  | { readonly kind: 'invalid_query'; readonly message: string }
  | LimitError
  | { readonly kind: 'cancelled' }
  /** An object of the query's window is corrupt or foreign and `on_corrupt_object` is `fail`. */
  | { readonly kind: 'storage_corrupt'; readonly key: string; readonly reason: CorruptReason }
  /** A storage call failed on every attempt it was allowed. */
  | {
      readonly kind: 'storage_unavailable';
      readonly operation: StorageOperation;
      readonly key: string | null;
      readonly attempts: number;
      readonly reason: UnavailableReason;
    }
  | { readonly kind: 'internal'; readonly message: string };

/** Thrown inside the engine to unwind to the top with a typed failure. Never escapes the package. */
export class QueryAbort extends Error {
  override readonly name = 'QueryAbort';
  constructor(readonly failure: QueryFailure) {
    super(failure.kind);
  }
}

/** The scrubbed message of every storage failure that is neither unavailable storage nor a corrupt object. */
export const STORAGE_FAILURE_MESSAGE = 'failed to read storage';

/**
 * Maps anything thrown during execution to a failure (never leaks the thrown text). An abort wins over what the
 * aborted storage call threw: the caller stopped the query and decides what to answer.
 */
export function failureOf(e: unknown, signal: AbortSignal | undefined): QueryFailure {
  if (e instanceof QueryAbort) return e.failure;
  if (signal?.aborted === true) return { kind: 'cancelled' };
  if (e instanceof StorageUnavailableError) {
    const { operation, key, attempts, reason } = e;
    return { kind: 'storage_unavailable', operation, key, attempts, reason };
  }
  if (e instanceof StorageCorruptError) return { kind: 'storage_corrupt', key: e.key, reason: e.reason };
  return { kind: 'internal', message: STORAGE_FAILURE_MESSAGE };
}

/** Throws `cancelled` when the signal has fired. */
export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new QueryAbort({ kind: 'cancelled' });
}
