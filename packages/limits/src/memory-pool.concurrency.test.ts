/**
 * @module memory-pool.concurrency.test
 * The property over the shared pool (its total equals the sum of the per-query holds, never above the size), with real threads: 4 `worker_threads` run fast-check-generated
 * reserve/shrink/release sequences against one pool at the same time. While they run, the main thread samples the
 * pool in a loop (never above its size); at the barrier after each round it checks the pool total equals the sum
 * of the slot table and each slot equals the owning worker's own model; at the end every query is released and the
 * pool reads 0. The workers check every refusal's classification against `held + requested > size`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { createMemoryPool } from './memory-pool.js';
import { C_ARRIVED, C_FAILED, C_ROUND, stressQueryId } from './testing/stress-protocol.js';
import type { StressOp, StressWorkerData } from './testing/stress-protocol.js';

const WORKERS = 4;
const QUERIES = 3;
const POOL_BYTES = 1_000_000;

const opArb: fc.Arbitrary<StressOp> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant('grow' as const), q: fc.nat(QUERIES - 1), bytes: fc.nat(350_000) }),
  },
  // Rare requests above the whole pool exercise the 422 class under contention.
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('grow' as const),
      q: fc.nat(QUERIES - 1),
      bytes: fc.integer({ min: 900_000, max: 1_200_000 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('shrink' as const),
      q: fc.nat(QUERIES - 1),
      part: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('release' as const), q: fc.nat(QUERIES - 1) }) },
);
/** Per worker: rounds of operations. */
const planArb = fc.array(
  fc.array(fc.array(opArb, { minLength: 2000, maxLength: 5000 }), { minLength: 2, maxLength: 4 }),
  {
    minLength: WORKERS,
    maxLength: WORKERS,
  },
);

interface RunStats {
  samples: number;
  maxSeen: number;
}

async function runPlan(plan: ReadonlyArray<ReadonlyArray<readonly StressOp[]>>, stats: RunStats): Promise<void> {
  const pool = createMemoryPool({ sizeBytes: POOL_BYTES, maxQueries: WORKERS * QUERIES + 4 });
  const rounds = Math.max(...plan.map((p) => p.length));
  const control = new SharedArrayBuffer(16);
  const ctl = new Int32Array(control);
  const modelBuf = new SharedArrayBuffer(8 * WORKERS * QUERIES);
  const model = new Float64Array(modelBuf);
  const errors: unknown[] = [];
  const workers = plan.map((mine, w) => {
    // Every worker runs the same number of rounds (a short plan gets empty rounds) so barriers line up.
    const padded = Array.from({ length: rounds }, (_, r) => mine[r] ?? []);
    const data: StressWorkerData = {
      pool: pool.shared,
      control,
      model: modelBuf,
      worker: w,
      queries: QUERIES,
      rounds: padded,
    };
    const worker = new Worker(new URL('./testing/pool-stress-worker.js', import.meta.url), { workerData: data });
    worker.on('error', (e) => errors.push(e));
    return worker;
  });
  const exited = workers.map((w) => new Promise<void>((resolve) => w.once('exit', () => resolve())));
  try {
    for (let round = 0; round < rounds; round++) {
      Atomics.store(ctl, C_ARRIVED, 0);
      Atomics.store(ctl, C_ROUND, round + 1);
      Atomics.notify(ctl, C_ROUND);
      // Sample while the workers run. The deadline only turns a hung worker into a failure; no result depends on it.
      const deadline = Date.now() + 20_000;
      while (Atomics.load(ctl, C_ARRIVED) < WORKERS) {
        const reserved = pool.reserved();
        stats.samples++;
        stats.maxSeen = Math.max(stats.maxSeen, reserved);
        assert.ok(reserved >= 0 && reserved <= POOL_BYTES, `pool total ${reserved} outside [0, ${POOL_BYTES}]`);
        for (const c of pool.consumers()) assert.ok(c.heldBytes <= POOL_BYTES, `${c.queryId} holds ${c.heldBytes}`);
        if (Date.now() > deadline) assert.fail('workers did not reach the barrier');
      }
      assert.equal(Atomics.load(ctl, C_FAILED), 0, 'a worker failed its own checks');
      // Barrier: nobody is mid-call, so the invariant must hold exactly.
      const consumers = pool.consumers();
      assert.equal(
        pool.reserved(),
        consumers.reduce((s, c) => s + c.heldBytes, 0),
        'pool total == sum of per-query holds',
      );
      for (let w = 0; w < WORKERS; w++) {
        for (let q = 0; q < QUERIES; q++) {
          const held = consumers.find((c) => c.queryId === stressQueryId(w, q))?.heldBytes ?? 0;
          assert.equal(held, model[w * QUERIES + q], `slot of ${stressQueryId(w, q)} vs its worker's model`);
        }
      }
    }
    Atomics.store(ctl, C_ROUND, rounds + 1); // workers release everything and exit
    Atomics.notify(ctl, C_ROUND);
    await Promise.all(exited);
    assert.deepEqual(errors, []);
    assert.equal(pool.reserved(), 0, 'pool reads 0 once every query released');
    assert.deepEqual(pool.consumers(), []);
  } finally {
    Atomics.store(ctl, C_FAILED, 1);
    Atomics.store(ctl, C_ROUND, rounds + 1);
    Atomics.notify(ctl, C_ROUND);
    await Promise.all(workers.map((w) => w.terminate()));
  }
  assert.deepEqual(errors, [], 'no worker failed');
}

describe('shared pool under 4 worker threads (property)', () => {
  test('RFC0058.2: pool total == sum of per-query holds, never above the size, 0 after every release', async () => {
    const stats: RunStats = { samples: 0, maxSeen: 0 };
    await fc.assert(
      fc.asyncProperty(planArb, (plan) => runPlan(plan, stats)),
      { numRuns: 8, endOnFailure: true },
    );
    // The run must have exercised contention, or the property proved nothing.
    assert.ok(stats.samples > 0, 'sampled while workers ran');
    assert.ok(stats.maxSeen > POOL_BYTES / 2, `pool never got busy (max ${stats.maxSeen})`);
  });
});
