/**
 * @module pool-lender.test
 * The compactor's loan from the query pool: it is a real pool reservation (queries see less), a busy pool lends
 * nothing and keeps its count, a small pool lends at most half of itself, and a released loan gives it all back;
 * the lender's budget figures (used, peak, limit) follow its loans.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createMemoryPool } from '@sluice/limits';
import { createPoolLender } from './pool-lender.js';

const MiB = 1024 * 1024;

describe('pool lender', () => {
  test('a loan is held on the pool until released, and queries see only the rest', () => {
    const pool = createMemoryPool({ sizeBytes: 768 * MiB });
    const lender = createPoolLender(pool);
    assert.equal(lender.loanBytes(256 * MiB), 256 * MiB);
    const lease = lender.tryBorrow(256 * MiB);
    assert.ok(lease !== null);
    assert.equal(pool.reserved(), 256 * MiB);
    assert.ok(
      pool.consumers().some((c) => c.queryId.startsWith('compaction-') && c.heldBytes === 256 * MiB),
      'visible as a named consumer',
    );
    const q = pool.createQuery('q1');
    assert.equal(q.tryGrow(600 * MiB).status, 'refused', 'a query cannot take what the merge borrowed');
    assert.equal(q.tryGrow(512 * MiB).status, 'ok');
    q.releaseAll();
    assert.deepEqual(lender.figures(), { used: 256 * MiB, peak: 256 * MiB, limit: 384 * MiB });
    lease.release();
    lease.release();
    assert.equal(pool.reserved(), 0);
    assert.deepEqual(lender.figures(), { used: 0, peak: 256 * MiB, limit: 384 * MiB }, 'one release, peak kept');
  });
  test('a busy pool lends nothing and its count is unchanged', () => {
    const pool = createMemoryPool({ sizeBytes: 768 * MiB });
    const q = pool.createQuery('hog');
    assert.equal(q.tryGrow(700 * MiB).status, 'ok');
    const lender = createPoolLender(pool);
    assert.equal(lender.tryBorrow(256 * MiB), null);
    assert.equal(pool.reserved(), 700 * MiB);
    assert.deepEqual(lender.figures(), { used: 0, peak: 0, limit: 384 * MiB }, 'a refused loan lends nothing');
    assert.equal(pool.consumers().length, 1, 'the refused loan left no slot behind');
    q.releaseAll();
  });
  test('a small pool lends at most half of itself', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    assert.equal(createPoolLender(pool).loanBytes(256 * MiB), 50 * MiB);
  });
});
