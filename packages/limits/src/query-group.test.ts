/**
 * @module query-group.test
 * A query whose scan is shared with helper workers holds one slot per worker in one group
 * (docs/design/query-governance.md, "Parallel scans"): its ceiling, its 422/503 classification and its peak are
 * the sum of its slots, while a slot outside the group is not counted.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMemoryPool } from './memory-pool.js';
import type { GrowOutcome } from './grow-outcome.js';
import { setBeforeGrowCommitHook } from './query-reservation.js';

const MiB = 1024 * 1024;

function refused(o: GrowOutcome): Extract<GrowOutcome, { status: 'refused' }> {
  if (o.status !== 'refused') assert.fail('expected a refusal');
  return o;
}

describe('query groups', () => {
  test('a helper refused by the pool is told to ask for less when the sum of the query slots exceeds the pool', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    const leader = pool.createQuery('q');
    assert.equal(leader.tryGrow(60 * MiB).status, 'ok');
    const helper = pool.createQuery('q', { group: leader.openGroup() });
    // Alone the helper would need 50 MiB ≤ the pool (busy, 503); with its leader's 60 MiB the query needs 110.
    const r = refused(helper.tryGrow(50 * MiB));
    assert.equal(r.kind, 'query_memory_limit');
    assert.equal(r.needed, 110 * MiB);
    assert.equal(r.held, 60 * MiB);
  });

  test('a slot of another query is not counted: the same request is contended, not a limit', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    const other = pool.createQuery('other');
    assert.equal(other.tryGrow(60 * MiB).status, 'ok');
    const leader = pool.createQuery('q');
    const helper = pool.createQuery('q', { group: leader.openGroup() });
    const r = refused(helper.tryGrow(50 * MiB));
    assert.equal(r.kind, 'query_memory_contended');
    assert.equal(r.needed, 50 * MiB);
  });

  test('the per-query ceiling bounds the sum of the slots', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    const leader = pool.createQuery('q', { maxBytes: 40 * MiB });
    assert.equal(leader.tryGrow(30 * MiB).status, 'ok');
    const helper = pool.createQuery('q', { maxBytes: 40 * MiB, group: leader.openGroup() });
    const r = refused(helper.tryGrow(20 * MiB));
    assert.equal(r.ceiling, 'query');
    assert.equal(r.kind, 'query_memory_limit');
    assert.equal(helper.tryGrow(10 * MiB).status, 'ok');
    // Now the leader is at the ceiling too, by the helper's bytes.
    assert.equal(refused(leader.tryGrow(1)).ceiling, 'query');
  });

  test('the query peak is the largest sum any member saw, and a released helper leaves the group', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    const leader = pool.createQuery('q');
    assert.equal(leader.tryGrow(10 * MiB).status, 'ok');
    const helper = pool.createQuery('q', { group: leader.openGroup() });
    assert.equal(helper.tryGrow(30 * MiB).status, 'ok');
    leader.shrink(10 * MiB);
    assert.equal(leader.tryGrow(5 * MiB).status, 'ok');
    assert.equal(helper.peakBytes, 40 * MiB);
    assert.equal(leader.peakBytes, 35 * MiB);
    helper.releaseAll();
    // The helper's slot no longer counts: 90 more fit beside the leader's 5.
    assert.equal(leader.tryGrow(90 * MiB).status, 'ok');
    assert.equal(leader.peakBytes, 95 * MiB);
  });

  test('a slot reused after a group member released it does not join the group', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB, maxQueries: 2 });
    const leader = pool.createQuery('q');
    const group = leader.openGroup();
    pool.createQuery('q', { group }).releaseAll();
    const stranger = pool.createQuery('s');
    assert.equal(stranger.tryGrow(60 * MiB).status, 'ok');
    assert.equal(refused(leader.tryGrow(50 * MiB)).kind, 'query_memory_contended');
  });

  test('two members growing at once never take the query over its ceiling: the grow that committed second is undone', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    const leader = pool.createQuery('q', { maxBytes: 40 * MiB });
    const helper = pool.createQuery('q', { maxBytes: 40 * MiB, group: leader.openGroup() });
    // The helper's grow lands between the leader's ceiling check and its commit, as on two threads.
    let helperOutcome: GrowOutcome | undefined;
    setBeforeGrowCommitHook(() => {
      setBeforeGrowCommitHook(null);
      helperOutcome = helper.tryGrow(30 * MiB);
    });
    try {
      const r = refused(leader.tryGrow(30 * MiB));
      assert.equal(r.ceiling, 'query');
      assert.equal(r.kind, 'query_memory_limit');
    } finally {
      setBeforeGrowCommitHook(null);
    }
    assert.equal(helperOutcome?.status, 'ok', 'the helper checked and committed first');
    assert.equal(leader.held + helper.held, 30 * MiB, 'the query holds no more than its ceiling');
    assert.equal(pool.reserved(), 30 * MiB, 'the undone grow left the pool total');
    assert.equal(leader.tryGrow(10 * MiB).status, 'ok', 'what still fits under the ceiling is served');
  });
});
