/**
 * @module limit-errors
 * The typed rejections (docs/design/query-governance.md) and their HTTP mapping: 422 ("ask for less": retrying unchanged fails
 * again) or 503 ("busy": the same query may succeed later; no Retry-After). Messages are Sluice's own: each names
 * the limit (its config key) and the remedy, and never carries engine or library text.
 */
import { assertNever } from '@sluice/core';
import type { GrowRefused, MemoryCeiling } from './grow-outcome.js';
import type { AdmitRejected } from './admission-gate.js';
import type { BudgetOutcome } from './result-budget.js';
import {
  MAX_CONCURRENT_KEY,
  MAX_FILES_KEY,
  MAX_LISTED_OBJECTS_KEY,
  MAX_PER_TENANT_KEY,
  MAX_QUERY_MEMORY_KEY,
  MAX_QUEUED_KEY,
  MAX_RESULT_BYTES_KEY,
  POOL_BYTES_KEY,
  QUERY_TIMEOUT_KEY,
  QUEUE_TIMEOUT_KEY,
  REQUEST_TIMEOUT_PARAMS,
} from './limit-keys.js';

/** Every limit rejection kind; the same token is the response `kind`, the MCP `data.kind` and `error.type`. */
export type LimitErrorKind =
  | 'query_memory_limit'
  | 'query_memory_contended'
  | 'query_queue_full'
  | 'query_queue_timeout'
  | 'query_file_limit'
  | 'query_result_limit'
  | 'query_time_limit'
  | 'query_time_contended'
  | 'query_tenant_busy';

/** All kinds, in the RFC's order. */
export const LIMIT_ERROR_KINDS: readonly LimitErrorKind[] = Object.freeze([
  'query_memory_limit',
  'query_memory_contended',
  'query_queue_full',
  'query_queue_timeout',
  'query_file_limit',
  'query_result_limit',
  'query_time_limit',
  'query_time_contended',
  'query_tenant_busy',
]);

/** Which cap a `query_file_limit` crossed (docs/design/query-governance.md). */
export type FileLimitCap = 'max_listed_objects' | 'max_files' | 'manifest_bytes';

/** A rejection with the figures its message reports. */
export type LimitError =
  | {
      readonly kind: 'query_memory_limit';
      readonly neededBytes: number;
      readonly poolBytes: number;
      /** Which ceiling the query could not fit under: the whole pool or its own per-query ceiling. */
      readonly ceiling: MemoryCeiling;
      /** That ceiling in bytes (`poolBytes` for `pool`). */
      readonly ceilingBytes: number;
    }
  | { readonly kind: 'query_memory_contended'; readonly neededBytes: number; readonly poolBytes: number }
  | { readonly kind: 'query_queue_full'; readonly maxQueued: number }
  | { readonly kind: 'query_queue_timeout'; readonly waitedMs: number; readonly queueTimeoutMs: number }
  | { readonly kind: 'query_file_limit'; readonly cap: FileLimitCap; readonly limit: number }
  | { readonly kind: 'query_result_limit'; readonly limitBytes: number }
  | {
      readonly kind: 'query_time_limit';
      /** The deadline that stopped the query: `query_timeout_ms`, or the shorter one the request asked for. */
      readonly timeoutMs: number;
      readonly elapsedMs: number;
      /** True when the request's own timeout (shorter than `query_timeout_ms`) was the deadline. */
      readonly clientShortened: boolean;
    }
  | {
      readonly kind: 'query_time_contended';
      readonly timeoutMs: number;
      readonly elapsedMs: number;
      readonly clientShortened: boolean;
    }
  | { readonly kind: 'query_tenant_busy'; readonly maxPerTenant: number };

/** HTTP status for `kind`: 422 for "ask for less", 503 for "busy, retry". */
export function limitErrorStatus(kind: LimitErrorKind): 422 | 503 {
  switch (kind) {
    case 'query_memory_limit':
    case 'query_file_limit':
    case 'query_result_limit':
    case 'query_time_limit':
      return 422;
    case 'query_memory_contended':
    case 'query_queue_full':
    case 'query_queue_timeout':
    case 'query_time_contended':
    case 'query_tenant_busy':
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
      return memoryLimitMessage(error.ceiling, error.neededBytes, error.ceilingBytes);
    case 'query_memory_contended':
      return (
        `query memory pool of ${error.poolBytes} bytes (${POOL_BYTES_KEY}) is in use by other queries; ` +
        `this query needed ${error.neededBytes} bytes, which fits the pool alone; retry later`
      );
    case 'query_queue_full':
      return (
        `querier is at capacity: every query permit (${MAX_CONCURRENT_KEY}) is in use and the queue ` +
        `of ${error.maxQueued} (${MAX_QUEUED_KEY}) is full; retry later`
      );
    case 'query_queue_timeout':
      return (
        `query waited ${Math.round(error.waitedMs)} ms for a permit (${QUEUE_TIMEOUT_KEY}) without one ` +
        'becoming free; retry later'
      );
    case 'query_file_limit':
      return fileLimitMessage(error.cap, error.limit);
    case 'query_result_limit':
      return (
        `query result exceeds ${error.limitBytes} bytes (${MAX_RESULT_BYTES_KEY}); ` +
        'ask for fewer rows with a smaller limit, or narrow the time range'
      );
    case 'query_time_limit':
      return (
        `${ranOutOfTime(error.elapsedMs, error.timeoutMs, error.clientShortened)}; ` +
        'narrow the time range or simplify the predicate' +
        (error.clientShortened ? `, or ask for a longer timeout (at most ${QUERY_TIMEOUT_KEY})` : '')
      );
    case 'query_time_contended':
      return (
        `${ranOutOfTime(error.elapsedMs, error.timeoutMs, error.clientShortened)} while other queries were ` +
        'running at the same time; retry later'
      );
    case 'query_tenant_busy':
      return (
        `this tenant already has ${error.maxPerTenant} queries running or queued, its whole share ` +
        `(${MAX_PER_TENANT_KEY}); retry later, when one of them has finished`
      );
    default:
      return assertNever(error, 'limit error');
  }
}

function memoryLimitMessage(ceiling: MemoryCeiling, neededBytes: number, ceilingBytes: number): string {
  switch (ceiling) {
    case 'pool':
      return (
        `query needs at least ${neededBytes} bytes of query memory, more than the whole pool of ${ceilingBytes} bytes ` +
        `(${POOL_BYTES_KEY}); narrow the time range, add filters or reduce the group cardinality, ` +
        `or raise ${POOL_BYTES_KEY}`
      );
    case 'query':
      return (
        `query needs at least ${neededBytes} bytes of query memory, more than the per-query ceiling of ` +
        `${ceilingBytes} bytes (${MAX_QUERY_MEMORY_KEY}); narrow the time range, add filters or reduce the group ` +
        `cardinality, or raise ${MAX_QUERY_MEMORY_KEY}`
      );
    default:
      return assertNever(ceiling, 'memory ceiling');
  }
}

/** The first half of both time messages: how long the query ran and whose deadline stopped it. */
function ranOutOfTime(elapsedMs: number, timeoutMs: number, clientShortened: boolean): string {
  const deadline = clientShortened
    ? `the timeout of ${timeoutMs} ms the request asked for (${REQUEST_TIMEOUT_PARAMS})`
    : `the query timeout of ${timeoutMs} ms (${QUERY_TIMEOUT_KEY})`;
  return `query ran for ${Math.round(elapsedMs)} ms and reached ${deadline}`;
}

function fileLimitMessage(cap: FileLimitCap, limit: number): string {
  switch (cap) {
    case 'max_listed_objects':
      return `query would list more than ${limit} objects (${MAX_LISTED_OBJECTS_KEY}); narrow the time range`;
    case 'max_files':
      return `query would read more than ${limit} files (${MAX_FILES_KEY}); narrow the time range`;
    case 'manifest_bytes':
      return `a partition manifest is larger than ${limit} bytes, the fixed manifest limit; narrow the time range or compact the partition`;
    default:
      return assertNever(cap, 'file limit cap');
  }
}

/** The rejection for a refused pool reservation (past the pool or the query's own ceiling). */
export function limitErrorFromRefusal(refused: GrowRefused): LimitError {
  switch (refused.kind) {
    case 'query_memory_limit':
      return {
        kind: 'query_memory_limit',
        neededBytes: refused.needed,
        poolBytes: refused.poolSize,
        ceiling: refused.ceiling,
        ceilingBytes: refused.ceilingBytes,
      };
    case 'query_memory_contended':
      return { kind: 'query_memory_contended', neededBytes: refused.needed, poolBytes: refused.poolSize };
    default:
      return assertNever(refused.kind, 'memory refusal kind');
  }
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
      return { kind: 'query_queue_timeout', waitedMs: rejected.waitedMs, queueTimeoutMs: rejected.queueTimeoutMs };
    case 'query_tenant_busy':
      return { kind: 'query_tenant_busy', maxPerTenant: rejected.maxPerTenant };
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
