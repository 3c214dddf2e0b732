/**
 * @module testing/exhausting-query-worker
 * Test-only worker script (passed as `createWorkerPool({ workerUrl })`): the real query worker, plus a listener
 * that, for tenant `exhaust`, reserves 1 MiB for the query and then allocates live objects until V8 kills the
 * thread for exceeding its `resourceLimits` — the heap-exhaustion path of the worker backstop, for real.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '@sluice/limits';
import type { QueryWorkerData, ToQueryWorker } from '../worker-protocol.js';
import '../query-worker.js';

const pool = attachMemoryPool((workerData as QueryWorkerData).pool);
const hoard: number[][] = [];
parentPort?.on('message', (message: ToQueryWorker) => {
  if (message.type !== 'run' || message.tenant !== 'exhaust') return;
  const extra = pool.createQuery(`${message.id}-extra`);
  if (extra.tryGrow(1 << 20).status !== 'ok') throw new Error('test pool too small');
  // Bounded only by the heap cap: the thread is terminated with ERR_WORKER_OUT_OF_MEMORY long before 2^31 arrays.
  for (let i = 0; i < 2 ** 31; i++) hoard.push(new Array<number>(4096).fill(i));
});
