/**
 * @module limit-error-details
 * The machine-readable side of a rejection: which configured limit refused the query, what the query needed or
 * did, the configured value and whether a retry may succeed (docs/design/query-governance.md). Additive to the
 * message: clients and dashboards read these figures instead of parsing text.
 */
import { assertNever } from '@sluice/core';
import type { MemoryCeiling } from './grow-outcome.js';
import type { FileLimitCap, LimitError } from './limit-errors.js';
import { isRetryableLimitError } from './limit-errors.js';
import {
  MANIFEST_BYTES_LIMIT,
  MAX_FILES_KEY,
  MAX_LISTED_OBJECTS_KEY,
  MAX_PER_TENANT_KEY,
  MAX_QUERY_MEMORY_KEY,
  MAX_QUEUED_KEY,
  MAX_RESULT_BYTES_KEY,
  POOL_BYTES_KEY,
  QUERY_TIMEOUT_KEY,
  QUEUE_TIMEOUT_KEY,
} from './limit-keys.js';

/** The figures of one rejection. */
export interface LimitErrorDetails {
  /** The limit's config key, e.g. `querier.limits.max_query_memory_bytes` (or a label for a fixed limit). */
  readonly limit: string;
  /** What the query needed or did (bytes, ms), when known. */
  readonly value: number | null;
  /**
   * The configured value of the limit, when known. For the time kinds it is the deadline that applied, which is the
   * request's own when it asked for less than `query_timeout_ms`.
   */
  readonly ceiling: number | null;
  /** True when the same query may succeed later (status 503). */
  readonly retryable: boolean;
}

/**
 * The details of `error`.
 * @example
 * limitErrorDetails({ kind: 'query_queue_full', maxQueued: 16 })
 * // { limit: 'querier.limits.max_queued_queries', value: null, ceiling: 16, retryable: true }
 */
export function limitErrorDetails(error: LimitError): LimitErrorDetails {
  const retryable = isRetryableLimitError(error.kind);
  const details = (limit: string, value: number | null, ceiling: number | null): LimitErrorDetails =>
    Object.freeze({ limit, value, ceiling, retryable });
  switch (error.kind) {
    case 'query_memory_limit':
      return details(memoryCeilingKey(error.ceiling), error.neededBytes, error.ceilingBytes);
    case 'query_memory_contended':
      return details(POOL_BYTES_KEY, error.neededBytes, error.poolBytes);
    case 'query_queue_full':
      return details(MAX_QUEUED_KEY, null, error.maxQueued);
    case 'query_queue_timeout':
      return details(QUEUE_TIMEOUT_KEY, error.waitedMs, error.queueTimeoutMs);
    case 'query_file_limit':
      return details(fileLimitKey(error.cap), null, error.limit);
    case 'query_result_limit':
      return details(MAX_RESULT_BYTES_KEY, null, error.limitBytes);
    case 'query_time_limit':
    case 'query_time_contended':
      return details(QUERY_TIMEOUT_KEY, error.elapsedMs, error.timeoutMs);
    case 'query_tenant_busy':
      return details(MAX_PER_TENANT_KEY, null, error.maxPerTenant);
    default:
      return assertNever(error, 'limit error');
  }
}

function memoryCeilingKey(ceiling: MemoryCeiling): string {
  switch (ceiling) {
    case 'pool':
      return POOL_BYTES_KEY;
    case 'query':
      return MAX_QUERY_MEMORY_KEY;
    default:
      return assertNever(ceiling, 'memory ceiling');
  }
}

function fileLimitKey(cap: FileLimitCap): string {
  switch (cap) {
    case 'max_listed_objects':
      return MAX_LISTED_OBJECTS_KEY;
    case 'max_files':
      return MAX_FILES_KEY;
    case 'manifest_bytes':
      return MANIFEST_BYTES_LIMIT;
    default:
      return assertNever(cap, 'file limit cap');
  }
}
