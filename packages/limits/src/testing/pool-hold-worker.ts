/**
 * @module pool-hold-worker
 * Test worker that reserves bytes on the shared pool and then dies without releasing them (the "worker death"
 * path of docs/design/architecture.md): it posts its figures and exits with the reservation still held. With
 * `maxBytes` the reservation carries a per-query ceiling, so a test can see the ceiling refuse in another thread.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '../memory-pool.js';
import type { SharedMemoryPoolHandle } from '../memory-pool.js';

const data = workerData as { pool: SharedMemoryPoolHandle; queryId: string; bytes: number; maxBytes?: number };
const pool = attachMemoryPool(data.pool);
const reservation = pool.createQuery(
  data.queryId,
  data.maxBytes === undefined ? undefined : { maxBytes: data.maxBytes },
);
const outcome = reservation.tryGrow(data.bytes);
parentPort?.postMessage({
  threadId,
  status: outcome.status,
  held: reservation.held,
  ceiling: outcome.status === 'refused' ? outcome.ceiling : null,
});
process.exit(3); // dies holding the reservation
