/**
 * @module limit-errors
 * The typed rejections (docs/design/query-governance.md) and their HTTP mapping: 422 ("ask for less": retrying unchanged fails
 * again) or 503 ("busy": the same query may succeed later; no Retry-After). Messages are Sluice's own: each names
 * the limit (its config key) and the remedy, and never carries engine or library text.
 */
import { assertNever } from '@sluice/core';
import type { GrowRefused } from './grow-outcome.js';
import type { AdmitRejected } from './admission-gate.js';
import type { BudgetOutcome } from './result-budget.js';

/** Every limit rejection kind; the same token is the response `kind`, the MCP `data.kind` and `error.type`. */
export type LimitErrorKind =
  | 'query_memory_limit'
  | 'query_memory_contended'
  | 'query_queue_full'
  | 'query_queue_timeout'
  | 'query_file_limit'
  | 'query_result_limit';

/** All kinds, in the RFC's order. */
export const LIMIT_ERROR_KINDS: readonly LimitErrorKind[] = Object.freeze([
  'query_memory_limit',
  'query_memory_contended',
  'query_queue_full',
  'query_queue_timeout',
  'query_file_limit',
  'query_result_limit',
]);

/** Which cap a `query_file_limit` crossed (docs/design/query-governance.md). */
export type FileLimitCap = 'max_listed_objects' | 'max_files' | 'manifest_bytes';

/** A rejection with the figures its message reports. */
export type LimitError =
  | { readonly kind: 'query_memory_limit'; readonly neededBytes: number; readonly poolBytes: number }
  | { readonly kind: 'query_memory_contended'; readonly neededBytes: number; readonly poolBytes: number }
  | { readonly kind: 'query_queue_full'; readonly maxQueued: number }
  | { readonly kind: 'query_queue_timeout'; readonly waitedMs: number }
  | { readonly kind: 'query_file_limit'; readonly cap: FileLimitCap; readonly limit: number }
  | { readonly kind: 'query_result_limit'; readonly limitBytes: number };

/** HTTP status for `kind`: 422 for "ask for less", 503 for "busy, retry". */
export function limitErrorStatus(kind: LimitErrorKind): 422 | 503 {
  switch (kind) {
    case 'query_memory_limit':
    case 'query_file_limit':
    case 'query_result_limit':
      return 422;
    case 'query_memory_contended':
    case 'query_queue_full':
    case 'query_queue_timeout':
      return 503;
    default:
      return assertNever(kind, 'limit error kind');
  }
}

/** True when the same query may succeed later (the 503 class). */
export function isRetryableLimitError(kind: LimitErrorKind): boolean {
  return limitErrorStatus(kind) === 503;
}

/** The user-facing message: names the limit's config key and the remedy, and nothing from any library. */
export function describeLimitError(error: LimitError): string {
  switch (error.kind) {
    case 'query_memory_limit':
      return (
        `query needs at least ${error.neededBytes} bytes of query memory, more than the whole pool of ${error.poolBytes} bytes ` +
        '(querier.limits.memory_pool_bytes); narrow the time range, add filters or reduce the group cardinality, ' +
        'or raise querier.limits.memory_pool_bytes'
      );
    case 'query_memory_contended':
      return (
        `query memory pool of ${error.poolBytes} bytes (querier.limits.memory_pool_bytes) is in use by other queries; ` +
        `this query needed ${error.neededBytes} bytes, which fits the pool alone; retry later`
      );
    case 'query_queue_full':
      return (
        'querier is at capacity: every query permit (querier.limits.max_concurrent_queries) is in use and the queue ' +
        `of ${error.maxQueued} (querier.limits.max_queued_queries) is full; retry later`
      );
    case 'query_queue_timeout':
      return (
        `query waited ${Math.round(error.waitedMs)} ms for a permit (querier.limits.queue_timeout_ms) without one ` +
        'becoming free; retry later'
      );
    case 'query_file_limit':
      return fileLimitMessage(error.cap, error.limit);
    case 'query_result_limit':
      return (
        `query result exceeds ${error.limitBytes} bytes (querier.limits.max_result_bytes); ` +
        'ask for fewer rows with a smaller limit, or narrow the time range'
      );
    default:
      return assertNever(error, 'limit error');
  }
}

function fileLimitMessage(cap: FileLimitCap, limit: number): string {
  switch (cap) {
    case 'max_listed_objects':
      return `query would list more than ${limit} objects (querier.limits.max_listed_objects); narrow the time range`;
    case 'max_files':
      return `query would read more than ${limit} files (querier.limits.max_files); narrow the time range`;
    case 'manifest_bytes':
      return `a partition manifest is larger than ${limit} bytes, the fixed manifest limit; narrow the time range or compact the partition`;
    default:
      return assertNever(cap, 'file limit cap');
  }
}

/** The rejection for a refused pool reservation. */
export function limitErrorFromRefusal(refused: GrowRefused): LimitError {
  return { kind: refused.kind, neededBytes: refused.needed, poolBytes: refused.poolSize };
}

/**
 * The rejection for an admission refusal; `undefined` for `cancelled`, which is the client's own doing and gets no
 * response body.
 */
export function limitErrorFromAdmission(rejected: AdmitRejected): LimitError | undefined {
  switch (rejected.kind) {
    case 'query_queue_full':
      return { kind: 'query_queue_full', maxQueued: rejected.maxQueued };
    case 'query_queue_timeout':
      return { kind: 'query_queue_timeout', waitedMs: rejected.waitedMs };
    case 'cancelled':
      return undefined;
    default:
      return assertNever(rejected, 'admission rejection');
  }
}

/** The rejection for a failed {@link BudgetOutcome} (a result ceiling or a refused reservation). */
export function limitErrorFromBudget(failed: Exclude<BudgetOutcome, { status: 'ok' }>): LimitError {
  return failed.status === 'over'
    ? { kind: 'query_result_limit', limitBytes: failed.limitBytes }
    : limitErrorFromRefusal(failed);
}
