/**
 * @module pool-guard-worker
 * Test worker for the slot guard: it reserves `first` bytes, then starts a grow of `second` bytes that pauses
 * (Atomics.wait on `gate[0]`) between reading the pool total and committing — inside the guarded update — until
 * the test lets it go. It then reports each step, and on request tries one more grow (which a fence refuses).
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '../memory-pool.js';
import type { SharedMemoryPoolHandle } from '../memory-pool.js';
import { setBeforeGrowCommitHook } from '../query-reservation.js';

const data = workerData as { pool: SharedMemoryPoolHandle; gate: SharedArrayBuffer; first: number; second: number };
const pool = attachMemoryPool(data.pool);
const gate = new Int32Array(data.gate);
const reservation = pool.createQuery('guarded');
reservation.tryGrow(data.first);
let paused = false;
setBeforeGrowCommitHook(() => {
  if (paused) return;
  paused = true;
  parentPort?.postMessage({ step: 'inside', threadId });
  Atomics.wait(gate, 0, 0); // until the test stores 1 and notifies
});
const outcome = reservation.tryGrow(data.second);
setBeforeGrowCommitHook(null);
parentPort?.postMessage({ step: 'grown', status: outcome.status, held: reservation.held });
parentPort?.on('message', () => {
  try {
    reservation.tryGrow(1);
    parentPort?.postMessage({ step: 'again', error: null });
  } catch (error) {
    parentPort?.postMessage({ step: 'again', error: (error as Error).message });
  }
});
