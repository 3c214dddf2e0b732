/**
 * @module limit-error-details.test
 * Every rejection kind's details: the config key that refused, what the query needed or did, the configured value,
 * and whether a retry may succeed (exactly the 503 kinds).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { limitErrorDetails } from './limit-error-details.js';
import type { LimitErrorDetails } from './limit-error-details.js';
import { LIMIT_ERROR_KINDS, limitErrorStatus } from './limit-errors.js';
import type { LimitError } from './limit-errors.js';

const CASES: ReadonlyArray<readonly [LimitError, LimitErrorDetails]> = [
  [
    { kind: 'query_memory_limit', neededBytes: 2000, poolBytes: 1000, ceiling: 'pool', ceilingBytes: 1000 },
    { limit: 'querier.limits.memory_pool_bytes', value: 2000, ceiling: 1000, retryable: false },
  ],
  [
    { kind: 'query_memory_limit', neededBytes: 600, poolBytes: 1000, ceiling: 'query', ceilingBytes: 500 },
    { limit: 'querier.limits.max_query_memory_bytes', value: 600, ceiling: 500, retryable: false },
  ],
  [
    { kind: 'query_memory_contended', neededBytes: 500, poolBytes: 1000 },
    { limit: 'querier.limits.memory_pool_bytes', value: 500, ceiling: 1000, retryable: true },
  ],
  [
    { kind: 'query_queue_full', maxQueued: 16 },
    { limit: 'querier.limits.max_queued_queries', value: null, ceiling: 16, retryable: true },
  ],
  [
    { kind: 'query_queue_timeout', waitedMs: 10_003, queueTimeoutMs: 10_000 },
    { limit: 'querier.limits.queue_timeout_ms', value: 10_003, ceiling: 10_000, retryable: true },
  ],
  [
    { kind: 'query_file_limit', cap: 'max_listed_objects', limit: 100_000 },
    { limit: 'querier.limits.max_listed_objects', value: null, ceiling: 100_000, retryable: false },
  ],
  [
    { kind: 'query_file_limit', cap: 'max_files', limit: 10_000 },
    { limit: 'querier.limits.max_files', value: null, ceiling: 10_000, retryable: false },
  ],
  [
    { kind: 'query_file_limit', cap: 'manifest_bytes', limit: 1_048_576 },
    { limit: 'manifest_bytes (fixed, not configurable)', value: null, ceiling: 1_048_576, retryable: false },
  ],
  [
    { kind: 'query_result_limit', limitBytes: 67_108_864 },
    { limit: 'querier.limits.max_result_bytes', value: null, ceiling: 67_108_864, retryable: false },
  ],
  [
    { kind: 'query_time_limit', timeoutMs: 30_000, elapsedMs: 30_002, clientShortened: false },
    { limit: 'querier.limits.query_timeout_ms', value: 30_002, ceiling: 30_000, retryable: false },
  ],
  [
    { kind: 'query_time_limit', timeoutMs: 500, elapsedMs: 501, clientShortened: true },
    { limit: 'querier.limits.query_timeout_ms', value: 501, ceiling: 500, retryable: false },
  ],
  [
    { kind: 'query_time_contended', timeoutMs: 30_000, elapsedMs: 30_000, clientShortened: false },
    { limit: 'querier.limits.query_timeout_ms', value: 30_000, ceiling: 30_000, retryable: true },
  ],
  [
    { kind: 'query_tenant_busy', maxPerTenant: 3 },
    { limit: 'querier.limits.max_concurrent_queries_per_tenant', value: null, ceiling: 3, retryable: true },
  ],
];

describe('limit error details', () => {
  for (const [error, want] of CASES) {
    const label = error.kind === 'query_file_limit' ? `${error.kind} (${error.cap})` : error.kind;
    test(`${label} → ${want.limit}`, () => {
      assert.deepEqual(limitErrorDetails(error), want);
    });
  }

  test('every kind has a case, and retryable is exactly status 503', () => {
    assert.deepEqual([...new Set(CASES.map(([e]) => e.kind))].sort(), [...LIMIT_ERROR_KINDS].sort());
    for (const [error] of CASES) {
      assert.equal(limitErrorDetails(error).retryable, limitErrorStatus(error.kind) === 503, error.kind);
    }
  });
});
