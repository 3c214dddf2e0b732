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
import { refusal } from './grow-outcome.js';

const SAMPLES: readonly LimitError[] = [
  { kind: 'query_memory_limit', neededBytes: 2000, poolBytes: 1000 },
  { kind: 'query_memory_contended', neededBytes: 500, poolBytes: 1000 },
  { kind: 'query_queue_full', maxQueued: 16 },
  { kind: 'query_queue_timeout', waitedMs: 10_000 },
  { kind: 'query_file_limit', cap: 'max_listed_objects', limit: 100_000 },
  { kind: 'query_file_limit', cap: 'max_files', limit: 10_000 },
  { kind: 'query_file_limit', cap: 'manifest_bytes', limit: 1_048_576 },
  { kind: 'query_result_limit', limitBytes: 67_108_864 },
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
    });
    assert.equal(isRetryableLimitError('query_memory_contended'), true);
    assert.equal(isRetryableLimitError('query_memory_limit'), false);
  });

  test('RFC0058.1: every message names its config key and a remedy, and no engine text', () => {
    const keys: Record<string, RegExp> = {
      query_memory_limit: /querier\.limits\.memory_pool_bytes.*narrow the time range/,
      query_memory_contended: /querier\.limits\.memory_pool_bytes.*retry later/,
      query_queue_full: /querier\.limits\.max_queued_queries.*retry later/,
      query_queue_timeout: /querier\.limits\.queue_timeout_ms.*retry later/,
      query_result_limit: /querier\.limits\.max_result_bytes.*smaller limit/,
    };
    for (const e of SAMPLES) {
      const m = describeLimitError(e);
      const want = keys[e.kind];
      if (want) assert.match(m, want);
      assert.doesNotMatch(m, /DataFusion|ResourcesExhausted|GroupedHashAggregate|Error|stack|at \w+ \(/);
    }
    assert.match(
      describeLimitError({ kind: 'query_memory_limit', neededBytes: 2000, poolBytes: 1000 }),
      /at least 2000 bytes.*pool of 1000 bytes/,
    );
    assert.match(describeLimitError(SAMPLES[4] as LimitError), /querier\.limits\.max_listed_objects/);
    assert.match(describeLimitError(SAMPLES[5] as LimitError), /querier\.limits\.max_files/);
  });

  test('refusals, admission rejections and budget failures map to their limit errors', () => {
    assert.deepEqual(limitErrorFromRefusal(refusal(60, 50, 100)), {
      kind: 'query_memory_limit',
      neededBytes: 110,
      poolBytes: 100,
    });
    assert.deepEqual(limitErrorFromAdmission({ status: 'rejected', kind: 'query_queue_full', maxQueued: 3 }), {
      kind: 'query_queue_full',
      maxQueued: 3,
    });
    assert.deepEqual(limitErrorFromAdmission({ status: 'rejected', kind: 'query_queue_timeout', waitedMs: 200 }), {
      kind: 'query_queue_timeout',
      waitedMs: 200,
    });
    assert.equal(limitErrorFromAdmission({ status: 'rejected', kind: 'cancelled' }), undefined);
    assert.deepEqual(
      limitErrorFromBudget({ status: 'over', kind: 'query_result_limit', limitBytes: 10, countedBytes: 11 }),
      { kind: 'query_result_limit', limitBytes: 10 },
    );
    assert.equal(limitErrorFromBudget(refusal(0, 5, 100)).kind, 'query_memory_contended');
  });
});
