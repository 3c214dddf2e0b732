/**
 * @module limit-errors.test
 * Each rejection kind's HTTP status (422 "ask for less", 503 "busy") and a message that names the
 * limit's config key and the remedy, without engine or library text.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LIMIT_ERROR_KINDS,
  describeLimitError,
  isRetryableLimitError,
  limitErrorFromAdmission,
  limitErrorFromBudget,
  limitErrorFromRefusal,
  limitErrorStatus,
} from './limit-errors.js';
import type { LimitError } from './limit-errors.js';
import { queryCeilingRefusal, refusal } from './grow-outcome.js';

const POOL_LIMIT: LimitError = {
  kind: 'query_memory_limit',
  neededBytes: 2000,
  poolBytes: 1000,
  ceiling: 'pool',
  ceilingBytes: 1000,
};
const QUERY_LIMIT: LimitError = {
  kind: 'query_memory_limit',
  neededBytes: 600,
  poolBytes: 1000,
  ceiling: 'query',
  ceilingBytes: 500,
};
const SERVER_TIMEOUT: LimitError = {
  kind: 'query_time_limit',
  timeoutMs: 30_000,
  elapsedMs: 30_004.6,
  clientShortened: false,
};
const CLIENT_TIMEOUT: LimitError = { kind: 'query_time_limit', timeoutMs: 500, elapsedMs: 501, clientShortened: true };

const SAMPLES: readonly LimitError[] = [
  POOL_LIMIT,
  QUERY_LIMIT,
  { kind: 'query_memory_contended', neededBytes: 500, poolBytes: 1000 },
  { kind: 'query_queue_full', maxQueued: 16 },
  { kind: 'query_queue_timeout', waitedMs: 10_000, queueTimeoutMs: 10_000 },
  { kind: 'query_file_limit', cap: 'max_listed_objects', limit: 100_000 },
  { kind: 'query_file_limit', cap: 'max_files', limit: 10_000 },
  { kind: 'query_file_limit', cap: 'manifest_bytes', limit: 1_048_576 },
  { kind: 'query_result_limit', limitBytes: 67_108_864 },
  SERVER_TIMEOUT,
  CLIENT_TIMEOUT,
  { kind: 'query_time_contended', timeoutMs: 30_000, elapsedMs: 30_001, clientShortened: false },
  { kind: 'query_time_contended', timeoutMs: 500, elapsedMs: 500, clientShortened: true },
  { kind: 'query_tenant_busy', maxPerTenant: 3 },
];

describe('limit errors: status and message', () => {
  test('RFC0058.1/.2/.5/.6/.7: 422 for ask-for-less kinds, 503 for capacity kinds', () => {
    const statuses = Object.fromEntries(LIMIT_ERROR_KINDS.map((k) => [k, limitErrorStatus(k)]));
    assert.deepEqual(statuses, {
      query_memory_limit: 422,
      query_memory_contended: 503,
      query_queue_full: 503,
      query_queue_timeout: 503,
      query_file_limit: 422,
      query_result_limit: 422,
      query_time_limit: 422,
      query_time_contended: 503,
      query_tenant_busy: 503,
    });
    assert.equal(isRetryableLimitError('query_memory_contended'), true);
    assert.equal(isRetryableLimitError('query_memory_limit'), false);
    assert.equal(isRetryableLimitError('query_tenant_busy'), true);
    assert.equal(isRetryableLimitError('query_time_limit'), false);
  });

  test('RFC0058.1: every message names its config key and a remedy, and no engine text', () => {
    const keys: Record<string, RegExp> = {
      query_memory_limit: /querier\.limits\.(memory_pool_bytes|max_query_memory_bytes).*narrow the time range/,
      query_memory_contended: /querier\.limits\.memory_pool_bytes.*retry later/,
      query_queue_full: /querier\.limits\.max_queued_queries.*retry later/,
      query_queue_timeout: /querier\.limits\.queue_timeout_ms.*retry later/,
      query_result_limit: /querier\.limits\.max_result_bytes.*smaller limit/,
      query_time_limit:
        /(querier\.limits\.query_timeout_ms|the request asked for).*narrow the time range or simplify the predicate/,
      query_time_contended:
        /(querier\.limits\.query_timeout_ms|the request asked for).*other queries were running at the same time; retry later/,
      query_tenant_busy: /querier\.limits\.max_concurrent_queries_per_tenant.*retry later/,
    };
    assert.deepEqual(Object.keys(keys).sort(), LIMIT_ERROR_KINDS.filter((k) => k !== 'query_file_limit').sort());
    for (const e of SAMPLES) {
      const m = describeLimitError(e);
      const want = keys[e.kind];
      if (want) assert.match(m, want);
      assert.doesNotMatch(m, /DataFusion|ResourcesExhausted|GroupedHashAggregate|Error|stack|at \w+ \(/);
    }
    assert.match(describeLimitError(POOL_LIMIT), /at least 2000 bytes.*pool of 1000 bytes/);
    assert.match(describeLimitError(SAMPLES[5] as LimitError), /querier\.limits\.max_listed_objects/);
    assert.match(describeLimitError(SAMPLES[6] as LimitError), /querier\.limits\.max_files/);
  });

  test('the pool-ceiling message is unchanged; the per-query ceiling names its own key', () => {
    assert.equal(
      describeLimitError(POOL_LIMIT),
      'query needs at least 2000 bytes of query memory, more than the whole pool of 1000 bytes ' +
        '(querier.limits.memory_pool_bytes); narrow the time range, add filters or reduce the group cardinality, ' +
        'or raise querier.limits.memory_pool_bytes',
    );
    assert.equal(
      describeLimitError(QUERY_LIMIT),
      'query needs at least 600 bytes of query memory, more than the per-query ceiling of 500 bytes ' +
        '(querier.limits.max_query_memory_bytes); narrow the time range, add filters or reduce the group cardinality, ' +
        'or raise querier.limits.max_query_memory_bytes',
    );
    assert.doesNotMatch(describeLimitError(QUERY_LIMIT), /memory_pool_bytes/);
  });

  test('a time limit names the server key, or the request parameters when the request set the deadline', () => {
    const server = describeLimitError(SERVER_TIMEOUT);
    assert.match(
      server,
      /ran for 30005 ms and reached the query timeout of 30000 ms \(querier\.limits\.query_timeout_ms\)/,
    );
    assert.doesNotMatch(server, /X-Sluice-Query-Timeout-Ms/);
    const client = describeLimitError(CLIENT_TIMEOUT);
    assert.match(client, /timeout of 500 ms the request asked for \(timeout_ms \/ X-Sluice-Query-Timeout-Ms\)/);
    assert.match(client, /narrow the time range or simplify the predicate, or ask for a longer timeout/);
    assert.match(describeLimitError(SAMPLES[12] as LimitError), /the request asked for.*retry later/);
  });

  test('refusals, admission rejections and budget failures map to their limit errors', () => {
    assert.deepEqual(limitErrorFromRefusal(refusal(60, 50, 100)), {
      kind: 'query_memory_limit',
      neededBytes: 110,
      poolBytes: 100,
      ceiling: 'pool',
      ceilingBytes: 100,
    });
    assert.deepEqual(limitErrorFromRefusal(queryCeilingRefusal(30, 40, 100, 50)), {
      kind: 'query_memory_limit',
      neededBytes: 70,
      poolBytes: 100,
      ceiling: 'query',
      ceilingBytes: 50,
    });
    assert.deepEqual(limitErrorFromRefusal(refusal(10, 20, 100)), {
      kind: 'query_memory_contended',
      neededBytes: 30,
      poolBytes: 100,
    });
    assert.deepEqual(limitErrorFromAdmission({ status: 'rejected', kind: 'query_queue_full', maxQueued: 3 }), {
      kind: 'query_queue_full',
      maxQueued: 3,
    });
    assert.deepEqual(
      limitErrorFromAdmission({ status: 'rejected', kind: 'query_queue_timeout', waitedMs: 200, queueTimeoutMs: 200 }),
      { kind: 'query_queue_timeout', waitedMs: 200, queueTimeoutMs: 200 },
    );
    assert.deepEqual(limitErrorFromAdmission({ status: 'rejected', kind: 'query_tenant_busy', maxPerTenant: 2 }), {
      kind: 'query_tenant_busy',
      maxPerTenant: 2,
    });
    assert.equal(limitErrorFromAdmission({ status: 'rejected', kind: 'cancelled' }), undefined);
    assert.deepEqual(
      limitErrorFromBudget({ status: 'over', kind: 'query_result_limit', limitBytes: 10, countedBytes: 11 }),
      { kind: 'query_result_limit', limitBytes: 10 },
    );
    assert.equal(limitErrorFromBudget(refusal(0, 5, 100)).kind, 'query_memory_contended');
  });
});
