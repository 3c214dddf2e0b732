/**
 * @module result-budget.test
 * Scenario RFC0058.7 (docs/design/query-governance.md): the result ceiling is counted while rows are serialized, every chunk is
 * reserved on the pool before it is kept, and a failure releases what was held so no partial body is ever sent.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMemoryPool } from './memory-pool.js';
import { createResultBudget } from './result-budget.js';

describe('RFC0058.7: result byte budget', () => {
  test('RFC0058.7: rows whose rendered size exceeds max_result_bytes are rejected query_result_limit', () => {
    const pool = createMemoryPool({ sizeBytes: 10_000 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 25, reservation: q });
    assert.equal(budget.append('{"a":1}\n').status, 'ok'); // 8
    assert.equal(budget.append('{"b":"é"}\n').status, 'ok'); // 11 (UTF-8), 19 in all
    assert.equal(q.held, 19, 'counted bytes are reserved on the pool');
    const over = budget.append('{"c":3}\n'); // 27 > 25
    assert.deepEqual(over, { status: 'over', kind: 'query_result_limit', limitBytes: 25, countedBytes: 27 });
    assert.equal(q.held, 0, 'a failed budget releases its reservation at once');
    assert.equal(budget.append('x').status, 'over', 'the failure is sticky');
    assert.throws(() => budget.body(), /after query_result_limit/);
  });

  test('RFC0058.7: the same rows under a larger max_result_bytes are served, whole', () => {
    const pool = createMemoryPool({ sizeBytes: 10_000 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 27, reservation: q });
    for (const row of ['{"a":1}\n', '{"b":"é"}\n', '{"c":3}\n']) assert.equal(budget.append(row).status, 'ok');
    assert.equal(budget.body().toString('utf8'), '{"a":1}\n{"b":"é"}\n{"c":3}\n');
    assert.equal(budget.countedBytes, 27);
    assert.equal(pool.reserved(), 27, 'the body stays reserved until it has been sent');
    budget.release();
    budget.release();
    assert.equal(pool.reserved(), 0);
  });

  test('observe mode: a body past max_result_bytes is kept whole and reported as crossed, not refused', () => {
    const pool = createMemoryPool({ sizeBytes: 10_000 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 25, reservation: q, enforcement: 'observe' });
    for (const row of ['{"a":1}\n', '{"b":"é"}\n']) assert.equal(budget.append(row).status, 'ok');
    assert.equal(budget.crossed, undefined, 'under the ceiling nothing is reported');
    assert.equal(budget.append('{"c":3}\n').status, 'ok'); // 27 > 25: served
    assert.deepEqual(budget.crossed, { limit: 'max_result_bytes', value: 27, ceiling: 25 });
    assert.equal(budget.body().toString('utf8'), '{"a":1}\n{"b":"é"}\n{"c":3}\n');
    assert.equal(q.held, 27, 'every byte is still reserved on the pool');
    budget.release();
  });

  test('observe mode still refuses what the pool cannot hold', () => {
    const pool = createMemoryPool({ sizeBytes: 20 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 10, reservation: q, enforcement: 'observe' });
    assert.equal(budget.append('0123456789ab').status, 'ok');
    const refused = budget.append('0123456789');
    assert.equal(refused.status, 'refused');
    assert.equal(q.held, 0);
  });

  test('RFC0058.7: a pool smaller than the result but larger than the scan rejects as a memory limit', () => {
    const pool = createMemoryPool({ sizeBytes: 100 });
    const q = pool.createQuery('q');
    assert.equal(q.tryGrow(40).status, 'ok'); // the scan
    const budget = createResultBudget({ maxResultBytes: 1000, reservation: q });
    assert.equal(budget.append('x'.repeat(50)).status, 'ok');
    const refused = budget.append('y'.repeat(20)); // 40 + 50 + 20 > 100
    assert.equal(refused.status, 'refused');
    if (refused.status === 'refused') assert.equal(refused.kind, 'query_memory_limit');
    assert.equal(q.held, 40, 'the budget gave back its own bytes, not the scan’s');
  });

  test('count() reserves bytes held elsewhere and counts them against the ceiling', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const q = pool.createQuery('q');
    const other = pool.createQuery('other');
    other.tryGrow(900);
    const budget = createResultBudget({ maxResultBytes: 500, reservation: q });
    const contended = budget.count(200);
    assert.equal(contended.status === 'refused' && contended.kind, 'query_memory_contended');
    assert.throws(() => createResultBudget({ maxResultBytes: 0, reservation: q }), RangeError);
  });

  test('sealing reserves the body buffer before writing it, while the chunks still exist; then the body is held once', () => {
    const pool = createMemoryPool({ sizeBytes: 10_000 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 100, reservation: q });
    for (const row of ['{"a":1}\n', '{"b":"é"}\n']) assert.equal(budget.append(row).status, 'ok');
    assert.equal(budget.seal().status, 'ok');
    assert.equal(q.peakBytes, 38, 'for the write the chunks and the body were both reserved');
    assert.equal(q.held, 19, 'after the write only the body is');
    assert.equal(budget.body().toString('utf8'), '{"a":1}\n{"b":"é"}\n');
    assert.equal(budget.seal().status, 'ok', 'sealing twice is harmless');
    assert.equal(q.held, 19);
    assert.throws(() => budget.append('more'), /after the body was sealed/);
    budget.release();
    assert.equal(q.held, 0);
  });

  test('a pool that holds the body once but not twice refuses at the seal, and the budget releases everything', () => {
    const pool = createMemoryPool({ sizeBytes: 30 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 100, reservation: q });
    for (const row of ['{"a":1}\n', '{"b":"é"}\n']) assert.equal(budget.append(row).status, 'ok');
    const refused = budget.seal();
    assert.equal(refused.status, 'refused');
    assert.equal(q.held, 0, 'a refused seal releases the chunks’ reservation at once');
    assert.throws(() => budget.body(), /after query_memory/);
  });

  test('a body of one byte chunk is that chunk: sealing copies nothing and reserves nothing more', () => {
    const pool = createMemoryPool({ sizeBytes: 8 });
    const q = pool.createQuery('q');
    const budget = createResultBudget({ maxResultBytes: 100, reservation: q });
    const bytes = Uint8Array.from([1, 2, 3, 4, 5, 6]);
    assert.equal(budget.append(bytes).status, 'ok');
    assert.equal(budget.seal().status, 'ok', 'six bytes twice would not fit a pool of eight');
    const body = budget.body();
    assert.equal(body.buffer, bytes.buffer);
    assert.equal(q.held, 6);
  });
});
