/**
 * @module memory-pool.test
 * The shared pool and per-query reservations (docs/design/query-governance.md; scenario RFC0058.2): refusal classification,
 * reserve/shrink/release accounting, releaseAll idempotence, release of a dead worker's reservation from the main
 * thread, top consumers, multi-GiB sizes, and a single-thread model property.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { attachMemoryPool, createMemoryPool } from './memory-pool.js';
import type { MemoryPool } from './memory-pool.js';
import { classifyRefusal } from './grow-outcome.js';
import type { GrowOutcome } from './grow-outcome.js';
import { setBeforeGrowCommitHook } from './testing/index.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

function sumHeld(pool: MemoryPool): number {
  return pool.consumers().reduce((s, c) => s + c.heldBytes, 0);
}

function refused(o: GrowOutcome): Extract<GrowOutcome, { status: 'refused' }> {
  if (o.status !== 'refused') assert.fail('expected a refusal');
  return o;
}

describe('refusal classification', () => {
  test('needed > pool is query_memory_limit, needed ≤ pool is query_memory_contended', () => {
    assert.equal(classifyRefusal(101, 100), 'query_memory_limit');
    assert.equal(classifyRefusal(100, 100), 'query_memory_contended');
    assert.equal(classifyRefusal(1, 100), 'query_memory_contended');
  });

  test('RFC0058.2: B is contended while A holds its reservation; a lone over-pool request is a limit', () => {
    const pool = createMemoryPool({ sizeBytes: 100 * MiB });
    const a = pool.createQuery('A');
    const b = pool.createQuery('B');
    assert.equal(a.tryGrow(60 * MiB).status, 'ok');
    // B alone fits (50 MiB ≤ 100 MiB) but not beside A: retry later, not "ask for less".
    const rb = refused(b.tryGrow(50 * MiB));
    assert.deepEqual(
      { kind: rb.kind, needed: rb.needed, held: rb.held, requested: rb.requested, poolSize: rb.poolSize },
      { kind: 'query_memory_contended', needed: 50 * MiB, held: 0, requested: 50 * MiB, poolSize: 100 * MiB },
    );
    assert.equal(b.lastRefusal, rb);
    a.releaseAll();
    // B run again after A finishes succeeds.
    assert.equal(b.tryGrow(50 * MiB).status, 'ok');
    b.releaseAll();
    // A lone query whose first reservation exceeds the pool: 422.
    const lone = pool.createQuery('lone');
    assert.equal(refused(lone.tryGrow(100 * MiB + 1)).kind, 'query_memory_limit');
    lone.releaseAll();
    assert.equal(pool.reserved(), 0);
  });

  test('held plus requested over the pool is a limit even when the request alone would fit', () => {
    const pool = createMemoryPool({ sizeBytes: 100 });
    const q = pool.createQuery('q');
    assert.equal(q.tryGrow(60).status, 'ok');
    const r = refused(q.tryGrow(50));
    assert.equal(r.kind, 'query_memory_limit');
    assert.equal(r.needed, 110);
    assert.equal(q.held, 60, 'a refusal reserves nothing');
    assert.equal(pool.reserved(), 60);
    // A later refusal overwrites the recorded one.
    const other = pool.createQuery('other');
    assert.equal(other.tryGrow(30).status, 'ok');
    assert.equal(refused(q.tryGrow(20)).kind, 'query_memory_contended');
    assert.equal(q.lastRefusal?.needed, 80);
  });
});

describe('per-query ceiling (maxBytes)', () => {
  test('a grow past the query ceiling is a query_memory_limit naming the query ceiling; the pool total is untouched', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const other = pool.createQuery('other');
    assert.equal(other.tryGrow(100).status, 'ok');
    const q = pool.createQuery('q', { maxBytes: 300 });
    assert.equal(q.tryGrow(200).status, 'ok');
    let hookRan = false;
    setBeforeGrowCommitHook(() => (hookRan = true));
    let r;
    try {
      r = refused(q.tryGrow(101));
    } finally {
      setBeforeGrowCommitHook(null);
    }
    assert.equal(hookRan, false, 'the refusal never reached the pool total’s compare-and-swap');
    assert.deepEqual(
      { ...r },
      {
        status: 'refused',
        kind: 'query_memory_limit',
        needed: 301,
        held: 200,
        requested: 101,
        poolSize: 1000,
        ceiling: 'query',
        ceilingBytes: 300,
      },
    );
    assert.equal(q.lastRefusal, r);
    assert.equal(q.held, 200);
    assert.equal(pool.reserved(), 300);
    assert.equal(sumHeld(pool), pool.reserved());
    assert.equal(q.tryGrow(100).status, 'ok', 'exactly the ceiling fits');
    assert.equal(q.held, 300);
    q.shrink(50);
    assert.equal(q.tryGrow(50).status, 'ok', 'room given back under the ceiling is usable again');
  });

  test('under its ceiling, a query refused by a full pool is contended (needed ≤ maxBytes ≤ pool)', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const hog = pool.createQuery('hog');
    assert.equal(hog.tryGrow(900).status, 'ok');
    const q = pool.createQuery('q', { maxBytes: 1000 });
    const r = refused(q.tryGrow(1000));
    assert.deepEqual([r.kind, r.ceiling, r.ceilingBytes], ['query_memory_contended', 'pool', 1000]);
    const capped = pool.createQuery('capped', { maxBytes: 500 });
    assert.deepEqual(
      [refused(capped.tryGrow(501)).ceiling, refused(capped.tryGrow(500)).kind],
      ['query', 'query_memory_contended'],
      'the query ceiling is checked first; within it the pool decides',
    );
    // Without a ceiling the pool is the only one, and its refusals say so.
    hog.releaseAll();
    const lone = pool.createQuery('lone');
    const over = refused(lone.tryGrow(1001));
    assert.deepEqual([over.kind, over.ceiling, over.ceilingBytes], ['query_memory_limit', 'pool', 1000]);
  });

  test('maxBytes outside (0, pool size] or not an integer is a wiring bug, and claims no slot', () => {
    const pool = createMemoryPool({ sizeBytes: 1000, maxQueries: 1 });
    for (const maxBytes of [0, -1, 1.5, Number.NaN, 1001, Number.MAX_SAFE_INTEGER + 1]) {
      assert.throws(() => pool.createQuery('q', { maxBytes }), RangeError, String(maxBytes));
    }
    const q = pool.createQuery('q', { maxBytes: 1000 }); // the only slot is still free
    assert.equal(q.tryGrow(1000).status, 'ok');
  });

  test('a ceiling set in a worker refuses there and leaves the shared total alone', async () => {
    const pool = createMemoryPool({ sizeBytes: 10 * MiB });
    const worker = new Worker(new URL('./testing/pool-hold-worker.js', import.meta.url), {
      workerData: { pool: pool.shared, queryId: 'capped', bytes: 3 * MiB, maxBytes: 2 * MiB },
    });
    const [report] = await Promise.all([
      new Promise<{ threadId: number; status: string; held: number; ceiling: string | null }>((resolve) =>
        worker.once('message', resolve),
      ),
      new Promise<number>((resolve) => worker.once('exit', resolve)),
    ]);
    assert.deepEqual([report.status, report.ceiling, report.held], ['refused', 'query', 0]);
    assert.equal(pool.reserved(), 0);
    assert.equal(pool.releaseThread(report.threadId), 0);
  });

  test('property: with random ceilings, the query ceiling refuses first, and only the pool ever moves the total', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }),
        fc.array(fc.record({ q: fc.nat(2), bytes: fc.nat(700), shrink: fc.boolean() }), { maxLength: 100 }),
        (size, fractions, ops) => {
          const pool = createMemoryPool({ sizeBytes: size, maxQueries: 3 });
          const caps = fractions.map((f) => Math.max(1, Math.floor(f * size)));
          const rs = caps.map((maxBytes, q) => pool.createQuery(`q${q}`, { maxBytes }));
          const model = [0, 0, 0];
          for (const o of ops) {
            const held = model[o.q] ?? 0;
            const cap = caps[o.q] ?? 0;
            const r = rs[o.q];
            if (!r) continue;
            if (o.shrink) {
              const bytes = Math.min(held, o.bytes);
              r.shrink(bytes);
              model[o.q] = held - bytes;
              continue;
            }
            const total = model.reduce((s, h) => s + h, 0);
            const out = r.tryGrow(o.bytes);
            if (o.bytes > 0 && held + o.bytes > cap && cap < size) {
              const x = refused(out);
              assert.deepEqual([x.kind, x.ceiling, x.ceilingBytes], ['query_memory_limit', 'query', cap]);
            } else if (o.bytes > 0 && held + o.bytes > size) {
              // A ceiling at the pool size is the pool rule, in its words.
              const x = refused(out);
              assert.deepEqual([x.kind, x.ceiling], ['query_memory_limit', 'pool']);
            } else if (total + o.bytes > size) {
              const x = refused(out);
              assert.deepEqual([x.kind, x.ceiling], ['query_memory_contended', 'pool'], 'needed ≤ cap ≤ pool');
            } else {
              assert.equal(out.status, 'ok');
              model[o.q] = held + o.bytes;
            }
            assert.equal(
              pool.reserved(),
              model.reduce((s, h) => s + h, 0),
            );
            assert.ok(r.held <= cap);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('leaving pool bytes free for others (leaveFreeBytes)', () => {
  test('a query that must leave 300 of 1000 free is refused contended at 701, while one without the rule takes them', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const general = pool.createQuery('general', { leaveFreeBytes: 300 });
    assert.equal(general.tryGrow(700).status, 'ok');
    const refused = general.tryGrow(1);
    assert.equal(refused.status, 'refused');
    assert.equal(refused.status === 'refused' && refused.kind, 'query_memory_contended');
    assert.equal(pool.reserved(), 700, 'the refused grow left the total alone');
    const light = pool.createQuery('light');
    assert.equal(light.tryGrow(300).status, 'ok', 'the bytes left free are there for a query without the rule');
    assert.equal(pool.reserved(), 1000);
  });

  test('a query that could not fit the pool even alone is still told to ask for less', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const general = pool.createQuery('general', { leaveFreeBytes: 300 });
    const refused = general.tryGrow(1001);
    assert.equal(refused.status === 'refused' && refused.kind, 'query_memory_limit');
  });

  test('leaveFreeBytes outside [0, pool size) is a wiring bug', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    assert.throws(() => pool.createQuery('a', { leaveFreeBytes: 1000 }), RangeError);
    assert.throws(() => pool.createQuery('b', { leaveFreeBytes: -1 }), RangeError);
    assert.throws(() => pool.createQuery('c', { leaveFreeBytes: 1.5 }), RangeError);
    assert.equal(pool.consumers().length, 0);
  });
});

describe('fencing a thread before it is terminated', () => {
  test('a fence waits out an update in progress, then the thread cannot start another; terminating it leaves the total equal to its slots', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const gateBuffer = new SharedArrayBuffer(4);
    const worker = new Worker(new URL('./testing/pool-guard-worker.js', import.meta.url), {
      workerData: { pool: pool.shared, gate: gateBuffer, first: 1000, second: 500 },
    });
    const messages: Array<Record<string, unknown>> = [];
    const next = (step: string): Promise<Record<string, unknown>> =>
      new Promise((resolve) => {
        const look = (): void => {
          const m = messages.find((x) => x['step'] === step);
          if (m) resolve(m);
          else setImmediate(look);
        };
        look();
      });
    worker.on('message', (m: Record<string, unknown>) => messages.push(m));
    const inside = await next('inside');
    const id = inside['threadId'] as number;
    // Paused between reading the total and committing: the fence must not go through now.
    assert.equal(pool.fenceThread(id), false, 'an update is in progress');
    const gate = new Int32Array(gateBuffer);
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    const grown = await next('grown');
    assert.deepEqual([grown['status'], grown['held']], ['ok', 1500]);
    assert.equal(pool.fenceThread(id), true, 'no update in progress: fenced');
    worker.postMessage('again');
    const again = await next('again');
    assert.match(String(again['error']), /fenced for stopping/, 'a fenced thread cannot start an update');
    assert.equal(pool.reserved(), 1500, 'the refused update touched nothing');
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    await worker.terminate();
    await exited;
    assert.equal(pool.releaseThread(id), 1500);
    assert.equal(pool.reserved(), 0, 'total == sum of the slots after the death');
  });
});

describe('repairing the total after a thread died inside an update', () => {
  test('a thread that dies between the total and its slot leaves the total high; repairTotal sets it back to the sum of the slots', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const other = pool.createQuery('other');
    assert.equal(other.tryGrow(300).status, 'ok');
    const worker = new Worker(new URL('./testing/pool-die-mid-grow-worker.js', import.meta.url), {
      workerData: { pool: pool.shared, first: 1000, second: 672 },
    });
    const id = worker.threadId;
    await new Promise((resolve) => worker.once('exit', resolve));
    assert.equal(pool.releaseThread(id), 1000, 'its slot held what it had committed to the slot');
    assert.equal(pool.reserved(), 300 + 672, 'the total still counts the half-done grow');
    assert.equal(pool.repairTotal(), 672);
    assert.equal(pool.reserved(), 300, 'total == sum of the live slots');
    assert.equal(other.tryGrow(100).status, 'ok', 'a paused slot was unpaused');
    assert.equal(pool.repairTotal(), 0, 'nothing to repair when the total is right');
  });

  test('a repair never runs while a reservation is inside an update', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const gateBuffer = new SharedArrayBuffer(4);
    const worker = new Worker(new URL('./testing/pool-guard-worker.js', import.meta.url), {
      workerData: { pool: pool.shared, gate: gateBuffer, first: 1000, second: 500 },
    });
    const inside = await new Promise<Record<string, unknown>>((resolve) =>
      worker.on('message', (m: Record<string, unknown>) => m['step'] === 'inside' && resolve(m)),
    );
    assert.ok(inside);
    assert.equal(pool.repairTotal(), null, 'busy: nothing changed');
    assert.equal(pool.reserved(), 1000);
    const gate = new Int32Array(gateBuffer);
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    await new Promise<void>((resolve) =>
      worker.on('message', (m: Record<string, unknown>) => m['step'] === 'grown' && resolve()),
    );
    assert.equal(pool.repairTotal(), 0);
    assert.equal(pool.reserved(), 1500);
    await worker.terminate();
  });
});

describe('reservation accounting', () => {
  test('RFC0058.2: a consumer dropped mid-query leaves neither the pool nor the per-query count stale', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const q = pool.createQuery('q');
    assert.equal(q.tryGrow(300).status, 'ok');
    assert.equal(q.tryGrow(200).status, 'ok');
    q.shrink(200); // one operator unregistered while holding its bytes
    assert.equal(q.held, 300);
    assert.equal(pool.reserved(), 300);
    assert.equal(sumHeld(pool), pool.reserved());
    assert.equal(q.releaseAll(), 300);
    assert.equal(q.held, 0);
    assert.equal(pool.reserved(), 0);
    assert.deepEqual(pool.consumers(), []);
  });

  test('releaseAll is idempotent and frees the slot exactly once', () => {
    const pool = createMemoryPool({ sizeBytes: 1000, maxQueries: 1 });
    const q = pool.createQuery('q');
    q.tryGrow(400);
    assert.equal(q.releaseAll(), 400);
    assert.equal(q.releaseAll(), 0);
    assert.equal(q.released, true);
    const next = pool.createQuery('next'); // the only slot is free again
    next.tryGrow(100);
    assert.equal(q.releaseAll(), 0, 'a stale reservation never touches the slot it used to own');
    assert.equal(next.held, 100);
    assert.equal(pool.reserved(), 100);
  });

  test('using a released reservation, shrinking more than held and bad byte counts are caller bugs', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const q = pool.createQuery('q');
    q.tryGrow(10);
    assert.throws(() => q.shrink(11), RangeError);
    assert.throws(() => q.tryGrow(-1), RangeError);
    assert.throws(() => q.tryGrow(1.5), RangeError);
    assert.throws(() => q.tryGrow(Number.NaN), RangeError);
    assert.equal(q.tryGrow(0).status, 'ok');
    q.releaseAll();
    assert.throws(() => q.tryGrow(1), /after its reservation was released/);
    assert.throws(() => createMemoryPool({ sizeBytes: 0 }), RangeError);
    assert.throws(() => createMemoryPool({ sizeBytes: 10, maxQueries: 0 }), RangeError);
  });

  test('a full slot table is reported, not silently shared', () => {
    const pool = createMemoryPool({ sizeBytes: 1000, maxQueries: 2 });
    pool.createQuery('a');
    pool.createQuery('b');
    assert.throws(() => pool.createQuery('c'), /no free query slot \(2 slots\)/);
  });

  test('sizes of several GiB are exact (64-bit counters)', () => {
    const pool = createMemoryPool({ sizeBytes: 6 * GiB });
    const q = pool.createQuery('big');
    assert.equal(q.tryGrow(5 * GiB).status, 'ok');
    const r = refused(q.tryGrow(GiB + 1));
    assert.equal(r.needed, 6 * GiB + 1);
    assert.equal(r.kind, 'query_memory_limit');
    assert.equal(q.tryGrow(GiB).status, 'ok');
    assert.equal(pool.reserved(), 6 * GiB);
    assert.equal(pool.available(), 0);
    assert.equal(q.releaseAll(), 6 * GiB);
  });

  test('topConsumers(5) lists the five largest holders, largest first, with their peaks', () => {
    const pool = createMemoryPool({ sizeBytes: 10_000 });
    const sizes = [100, 700, 300, 900, 500, 200, 800];
    const rs = sizes.map((s, i) => {
      const r = pool.createQuery(`q${i}`);
      r.tryGrow(s);
      return r;
    });
    rs[1]?.shrink(600); // q1 peaked at 700, holds 100
    const top = pool.topConsumers(5);
    assert.deepEqual(
      top.map((c) => [c.queryId, c.heldBytes]),
      [
        ['q3', 900],
        ['q6', 800],
        ['q4', 500],
        ['q2', 300],
        ['q5', 200],
      ],
    );
    assert.equal(pool.consumers().find((c) => c.queryId === 'q1')?.peakBytes, 700);
    assert.equal(top[0]?.threadId, 0);
  });

  test('a query id longer than the slot area is truncated at a character boundary and still releasable', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const id = `${'é'.repeat(60)}-tail`;
    pool.createQuery(id).tryGrow(10);
    const [c] = pool.consumers();
    assert.ok(c && id.startsWith(c.queryId) && c.queryId.length === 48);
    assert.equal(pool.releaseQuery(id), 10);
    assert.equal(pool.reserved(), 0);
  });
});

describe('a grow that loses the race for the pool total (pause hook between read and commit)', () => {
  // The 4-thread property below cannot force this interleaving on a 2-core machine; the hook does, every run.
  test("RFC0058.2: B reserves between A's read and A's commit → A's commit fails, A re-reads and is refused as contended; total == sum of holds", () => {
    const pool = createMemoryPool({ sizeBytes: 1_000_000 });
    const view = attachMemoryPool(pool.shared); // another thread's view of the same counters
    const a = pool.createQuery('A');
    const b = view.createQuery('B');
    let paused = 0;
    setBeforeGrowCommitHook(() => {
      paused++;
      if (paused !== 1) return;
      assert.equal(b.tryGrow(600_000).status, 'ok', 'B commits while A is paused');
    });
    try {
      const outcome = refused(a.tryGrow(600_000));
      assert.equal(outcome.kind, 'query_memory_contended', 'A alone fits: retry later, not "ask for less"');
      assert.equal(paused, 2, "A paused once and B passed the hook once; A's re-read stopped at the size check");
    } finally {
      setBeforeGrowCommitHook(null);
    }
    assert.equal(a.held, 0);
    assert.equal(b.held, 600_000);
    assert.equal(pool.reserved(), 600_000, "A's stale total did not overwrite B's");
    assert.equal(pool.reserved(), sumHeld(pool));
  });

  test('a lost race with room left commits on the retry, and both grows are counted', () => {
    const pool = createMemoryPool({ sizeBytes: 1_000_000 });
    const a = pool.createQuery('A');
    const b = attachMemoryPool(pool.shared).createQuery('B');
    let raced = false;
    setBeforeGrowCommitHook(() => {
      if (raced) return;
      raced = true;
      assert.equal(b.tryGrow(300_000).status, 'ok');
    });
    try {
      assert.equal(a.tryGrow(400_000).status, 'ok');
    } finally {
      setBeforeGrowCommitHook(null);
    }
    assert.equal(pool.reserved(), 700_000);
    assert.equal(pool.reserved(), sumHeld(pool));
    assert.deepEqual(
      pool.topConsumers(2).map((c) => [c.queryId, c.heldBytes, c.peakBytes]),
      [
        ['A', 400_000, 400_000],
        ['B', 300_000, 300_000],
      ],
    );
  });
});

describe('shared across threads', () => {
  test('a handle survives structured cloning and addresses the same counters', () => {
    const pool = createMemoryPool({ sizeBytes: 1000 });
    const other = attachMemoryPool(structuredClone(pool.shared));
    other.createQuery('via-clone').tryGrow(123);
    assert.equal(pool.reserved(), 123);
    assert.equal(pool.consumers()[0]?.queryId, 'via-clone');
    assert.throws(() => attachMemoryPool({ kind: 'sluice.memory_pool', buffer: new SharedArrayBuffer(8) }), TypeError);
  });

  test('the main thread releases the reservation of a worker that died holding it', async () => {
    const pool = createMemoryPool({ sizeBytes: 10 * MiB });
    const survivor = pool.createQuery('survivor');
    survivor.tryGrow(MiB);
    const worker = new Worker(new URL('./testing/pool-hold-worker.js', import.meta.url), {
      workerData: { pool: pool.shared, queryId: 'doomed', bytes: 3 * MiB },
    });
    const [report] = await Promise.all([
      new Promise<{ threadId: number; status: string; held: number }>((resolve) => worker.once('message', resolve)),
      new Promise<number>((resolve) => worker.once('exit', resolve)),
    ]);
    assert.equal(report.status, 'ok');
    assert.equal(pool.reserved(), 4 * MiB, 'the dead worker still holds its bytes');
    assert.deepEqual(
      pool.topConsumers(5).map((c) => [c.queryId, c.heldBytes, c.threadId]),
      [
        ['doomed', 3 * MiB, report.threadId],
        ['survivor', MiB, 0],
      ],
    );
    assert.equal(pool.releaseThread(report.threadId), 3 * MiB);
    assert.equal(pool.releaseThread(report.threadId), 0, 'released once');
    assert.equal(pool.reserved(), MiB);
    assert.equal(survivor.held, MiB, 'other queries are untouched');
    assert.equal(pool.releaseQuery('survivor'), MiB);
    assert.equal(pool.reserved(), 0);
  });
});

describe('the pool high-water mark (sluice.budget.peak for query_pool)', () => {
  test('peakReserved keeps the highest total after shrinks and releases; a refused grow does not move it', () => {
    const pool = createMemoryPool({ sizeBytes: 100 });
    assert.equal(pool.peakReserved(), 0);
    const a = pool.createQuery('a');
    const b = pool.createQuery('b');
    assert.equal(a.tryGrow(30).status, 'ok');
    assert.equal(b.tryGrow(50).status, 'ok');
    assert.equal(pool.peakReserved(), 80);
    b.shrink(40);
    assert.equal(pool.reserved(), 40);
    assert.equal(pool.peakReserved(), 80);
    assert.equal(a.tryGrow(70).status, 'refused');
    assert.equal(pool.peakReserved(), 80);
    a.releaseAll();
    b.releaseAll();
    assert.equal(pool.reserved(), 0);
    assert.equal(pool.peakReserved(), 80);
  });

  test('a grow in a worker thread moves the peak the main thread reads (one shared word)', async () => {
    const pool = createMemoryPool({ sizeBytes: 10 * MiB });
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       import(workerData.url).then(({ attachMemoryPool }) => {
         const r = attachMemoryPool(workerData.pool).createQuery('w');
         r.tryGrow(3 * 1024 * 1024); r.releaseAll(); parentPort.postMessage('done');
       });`,
      { eval: true, workerData: { pool: pool.shared, url: new URL('./memory-pool.js', import.meta.url).href } },
    );
    await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    assert.equal(pool.reserved(), 0);
    assert.equal(pool.peakReserved(), 3 * MiB);
  });
});

describe('single-thread model (fast-check)', () => {
  type Op =
    { op: 'grow'; q: number; bytes: number } | { op: 'shrink'; q: number; part: number } | { op: 'release'; q: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ op: fc.constant('grow' as const), q: fc.nat(3), bytes: fc.nat(700) }),
    fc.record({ op: fc.constant('shrink' as const), q: fc.nat(3), part: fc.double({ min: 0, max: 1, noNaN: true }) }),
    fc.record({ op: fc.constant('release' as const), q: fc.nat(3) }),
  );

  test('a grow is refused exactly when the total would pass the size; total == sum of holds after every call; peakReserved == the highest total so far', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(op, { maxLength: 200 }), (size, ops) => {
        const pool = createMemoryPool({ sizeBytes: size, maxQueries: 4 });
        const rs = [0, 1, 2, 3].map((q) => pool.createQuery(`q${q}`));
        const model = [0, 0, 0, 0];
        let modelPeak = 0;
        for (const o of ops) {
          const held = model[o.q] ?? 0;
          const total = model.reduce((s, h) => s + h, 0);
          if (o.op === 'grow') {
            const out = rs[o.q]?.tryGrow(o.bytes);
            const fits = total + o.bytes <= size;
            assert.equal(out?.status, fits ? 'ok' : 'refused');
            if (out?.status === 'refused')
              assert.equal(out.kind, held + o.bytes > size ? 'query_memory_limit' : 'query_memory_contended');
            if (fits) model[o.q] = held + o.bytes;
          } else if (o.op === 'shrink') {
            const bytes = Math.floor(held * o.part);
            rs[o.q]?.shrink(bytes);
            model[o.q] = held - bytes;
          } else {
            assert.equal(rs[o.q]?.releaseAll(), held);
            rs[o.q] = pool.createQuery(`q${o.q}`);
            model[o.q] = 0;
          }
          assert.equal(
            pool.reserved(),
            model.reduce((s, h) => s + h, 0),
          );
          assert.equal(sumHeld(pool), pool.reserved());
          assert.ok(pool.reserved() <= size);
          modelPeak = Math.max(modelPeak, pool.reserved());
          assert.equal(pool.peakReserved(), modelPeak);
        }
        for (const r of rs) r.releaseAll();
        assert.equal(pool.reserved(), 0);
      }),
      { numRuns: 200 },
    );
  });
});
