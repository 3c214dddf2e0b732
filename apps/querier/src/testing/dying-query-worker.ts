/**
 * @module testing/dying-query-worker
 * Test-only worker script (passed as `createWorkerPool({ workerUrl })`): the real query worker, plus a listener
 * that makes the thread die mid-query for tenant `die` — after the real worker has created the query's
 * reservation and a further 1 MiB is reserved from this thread — so the worker backstop (death → typed error,
 * `releaseThread`, replacement) is exercised deterministically, without exhausting a heap.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '@sluice/limits';
import type { QueryWorkerData, ToQueryWorker } from '../worker-protocol.js';
import '../query-worker.js';

/** Bytes the dying thread reserves just before it exits (admission-release-and-backstop.test.ts mirrors this figure). */
const DYING_EXTRA_BYTES = 1 << 20;

const pool = attachMemoryPool((workerData as QueryWorkerData).pool);
parentPort?.on('message', (message: ToQueryWorker) => {
  if (message.type !== 'run' || message.tenant !== 'die') return;
  const extra = pool.createQuery(`${message.id}-extra`);
  if (extra.tryGrow(DYING_EXTRA_BYTES).status !== 'ok') throw new Error('test pool too small');
  process.exit(3);
});
