/**
 * @module testing/spinning-query-worker
 * Test-only worker script (passed as `createWorkerPool({ workerUrl })`): the real query worker, plus a listener
 * that, for tenant `spin`, reserves 1 MiB for the query and then spins without ever yielding — what a
 * backtracking regex or a synchronous hang does. The thread never reads its next message (the stop request), so
 * only termination can end the query: the backstop behind the deadline and cancellation, exercised for real.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '@sluice/limits';
import type { QueryWorkerData, ToQueryWorker } from '../worker-protocol.js';
import '../query-worker.js';

/** Bytes the spinning query holds (the test checks they go back to the pool). */
export const SPINNING_BYTES = 1 << 20;

const pool = attachMemoryPool((workerData as QueryWorkerData).pool);
parentPort?.on('message', (message: ToQueryWorker) => {
  if (message.type !== 'run' || message.tenant !== 'spin') return;
  const held = pool.createQuery(`${message.id}-spin`);
  if (held.tryGrow(SPINNING_BYTES).status !== 'ok') throw new Error('test pool too small');
  // Busy forever: Worker.terminate() interrupts this loop (V8 TerminateExecution), as it does a running regex.
  for (let spins = 0; ; spins++) if (spins === Number.MAX_SAFE_INTEGER) spins = 0;
});
