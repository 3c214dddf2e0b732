/**
 * @module heap-reclaimer.test
 * The collection policy with an injected heap (when it collects, and that it does not thrash when the live set
 * is larger than the pool's count), then against the real V8 heap: uncollected garbage is given back.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createHeapReclaimer } from './heap-reclaimer.js';

const MiB = 1024 * 1024;

function fakeHeap(startUsed: number): { used: number; liveAfterGc: number; collect(): void; usedHeapBytes(): number } {
  const h = {
    used: startUsed,
    liveAfterGc: startUsed,
    collect() {
      h.used = h.liveAfterGc;
    },
    usedHeapBytes: () => h.used,
  };
  return h;
}

describe('heap reclaimer policy', () => {
  test('collects only when used heap exceeds held + unaccounted + slack', () => {
    const h = fakeHeap(12 * MiB);
    const r = createHeapReclaimer({ collect: h.collect, usedHeapBytes: h.usedHeapBytes, slackBytes: 64 * MiB });
    h.used = 12 * MiB + 100 * MiB + 64 * MiB; // exactly at the threshold with 100 MiB held
    r.reclaim(100 * MiB);
    assert.equal(r.collections, 0);
    h.used += 1;
    h.liveAfterGc = 12 * MiB + 100 * MiB;
    r.reclaim(100 * MiB);
    assert.equal(r.collections, 1);
    assert.equal(h.used, 112 * MiB);
  });
  test('a live set larger than the pool count raises the baseline instead of collecting before every decode', () => {
    const h = fakeHeap(10 * MiB);
    const r = createHeapReclaimer({ collect: h.collect, usedHeapBytes: h.usedHeapBytes, slackBytes: 8 * MiB });
    h.liveAfterGc = 60 * MiB; // 50 MiB live that the pool does not count (estimator error, caches)
    h.used = 80 * MiB;
    r.reclaim(0);
    assert.equal(r.collections, 1);
    h.used = 66 * MiB; // within the re-measured baseline + slack
    r.reclaim(0);
    assert.equal(r.collections, 1);
    h.used = 69 * MiB;
    r.reclaim(0);
    assert.equal(r.collections, 2);
  });
  test('rebase after an idle collection lowers the baseline again', () => {
    const h = fakeHeap(10 * MiB);
    const r = createHeapReclaimer({ collect: h.collect, usedHeapBytes: h.usedHeapBytes, slackBytes: 8 * MiB });
    h.liveAfterGc = 60 * MiB;
    h.used = 80 * MiB;
    r.reclaim(0);
    h.used = 10 * MiB; // the query ended and the idle GC gave it back
    r.rebase(0);
    h.liveAfterGc = 10 * MiB;
    h.used = 30 * MiB;
    r.reclaim(0);
    assert.equal(r.collections, 2, '20 MiB over a 10 MiB baseline exceeds the 8 MiB slack');
  });
});

describe('the idle point after a query', () => {
  test('no full collection after a query while the heap is within floor + cache + slack; one above it', () => {
    const h = fakeHeap(12 * MiB); // the floor: what survived the worker's first collection
    const r = createHeapReclaimer({ collect: h.collect, usedHeapBytes: h.usedHeapBytes, slackBytes: 64 * MiB });
    h.used = 12 * MiB + 4 * MiB + 64 * MiB; // a small query's garbage, 4 MiB of cached footers
    assert.equal(r.idle(4 * MiB), false, 'left for V8: the next query is not slowed by a forced collection');
    assert.equal(r.collections, 0);
    h.used += 1;
    h.liveAfterGc = 16 * MiB;
    assert.equal(r.idle(4 * MiB), true, 'a big query left more than the slack: collected');
    assert.equal(r.collections, 1);
    assert.equal(h.used, 16 * MiB);
  });
  test('the idle threshold does not ratchet up with a large live set seen during a query', () => {
    const h = fakeHeap(12 * MiB);
    const r = createHeapReclaimer({ collect: h.collect, usedHeapBytes: h.usedHeapBytes, slackBytes: 8 * MiB });
    h.liveAfterGc = 200 * MiB; // mid-query: a big live set the pool does not count
    h.used = 300 * MiB;
    r.reclaim(0);
    h.liveAfterGc = 12 * MiB; // the query ended; its live set is garbage now
    h.used = 100 * MiB;
    assert.equal(r.idle(0), true, 'measured against the floor, not the mid-query baseline');
  });
});

describe('heap reclaimer on the real V8 heap', () => {
  test('garbage left by a decoded batch is collected before the next decode', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const used = (): number => getHeapStatistics().used_heap_size;
    const r = createHeapReclaimer({ collect: gc, usedHeapBytes: used, slackBytes: 16 * MiB });
    // ~60 MiB of strings, like a decoded body column: measured while live, then dropped — garbage from that moment.
    let batch: number[][] | undefined = Array.from({ length: 8_000 }, (_, i) => new Array<number>(1024).fill(i)); // 8 KiB each
    const before = used();
    assert.ok(before > 50 * MiB, `the batch is in the heap (${(before / MiB).toFixed(0)} MiB used)`);
    assert.equal(batch.length, 8_000);
    batch = undefined;
    r.reclaim(0);
    assert.equal(r.collections, 1);
    assert.ok(used() < before - 30 * MiB, `collected: ${(before / MiB).toFixed(0)} → ${(used() / MiB).toFixed(0)} MiB`);
  });
});
