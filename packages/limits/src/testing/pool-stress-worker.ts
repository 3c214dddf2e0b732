/**
 * @module pool-stress-worker
 * Test worker for the pool concurrency property (memory-pool.concurrency.test.ts): runs its share of a generated reserve/release
 * sequence against the shared pool, one round at a time, and meets the main thread at a barrier after each round.
 * It checks its own model after every call (only this thread changes its queries' held bytes) and the
 * classification of every refusal, and publishes its model so the main thread can compare the slot table.
 */
import { workerData } from 'node:worker_threads';
import { attachMemoryPool } from '../memory-pool.js';
import type { QueryReservation } from '../query-reservation.js';
import { C_ARRIVED, C_FAILED, C_ROUND, stressQueryId } from './stress-protocol.js';
import type { StressWorkerData } from './stress-protocol.js';

function run(data: StressWorkerData): void {
  const pool = attachMemoryPool(data.pool);
  const control = new Int32Array(data.control);
  const model = new Float64Array(data.model);
  const reservations: Array<QueryReservation | undefined> = [];
  const held: number[] = new Array<number>(data.queries).fill(0);
  const check = (ok: boolean, what: string): void => {
    if (!ok) throw new Error(`worker ${data.worker}: ${what}`);
  };
  for (let round = 0; round < data.rounds.length; round++) {
    while (Atomics.load(control, C_ROUND) <= round) Atomics.wait(control, C_ROUND, round, 1000);
    if (Atomics.load(control, C_FAILED) !== 0) return;
    for (const op of data.rounds[round] ?? []) {
      const r = (reservations[op.q] ??= pool.createQuery(stressQueryId(data.worker, op.q)));
      const before = held[op.q] ?? 0;
      if (op.op === 'grow') {
        const out = r.tryGrow(op.bytes);
        if (out.status === 'ok') held[op.q] = before + op.bytes;
        else {
          check(
            out.held === before && out.requested === op.bytes && out.needed === before + op.bytes,
            'refusal figures',
          );
          check(
            out.kind === (before + op.bytes > pool.size ? 'query_memory_limit' : 'query_memory_contended'),
            'classification',
          );
          check(op.bytes > 0, 'a 0-byte grow was refused');
        }
      } else if (op.op === 'shrink') {
        const bytes = Math.floor(before * op.part);
        r.shrink(bytes);
        held[op.q] = before - bytes;
      } else {
        check(r.releaseAll() === before, 'releaseAll returned other than held');
        check(r.releaseAll() === 0, 'second releaseAll released bytes');
        reservations[op.q] = undefined;
        held[op.q] = 0;
      }
      check(r.released || r.held === held[op.q], `held ${r.held} != model ${held[op.q]}`);
      check(pool.reserved() <= pool.size, 'reserved above size');
    }
    for (let q = 0; q < data.queries; q++) model[data.worker * data.queries + q] = held[q] ?? 0;
    Atomics.add(control, C_ARRIVED, 1);
    Atomics.notify(control, C_ARRIVED);
  }
  // Release everything only once the main thread has checked the last barrier.
  const end = data.rounds.length;
  while (Atomics.load(control, C_ROUND) <= end) Atomics.wait(control, C_ROUND, end, 1000);
  for (const r of reservations) r?.releaseAll();
}

const data = workerData as StressWorkerData;
try {
  run(data);
} catch (e) {
  Atomics.store(new Int32Array(data.control), C_FAILED, 1);
  Atomics.add(new Int32Array(data.control), C_ARRIVED, 1);
  throw e;
}
