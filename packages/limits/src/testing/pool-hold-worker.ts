/**
 * @module pool-hold-worker
 * Test worker that reserves bytes on the shared pool and then dies without releasing them (the "worker death"
 * path of docs/design/architecture.md): it posts its figures and exits with the reservation still held.
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '../memory-pool.js';
import type { SharedMemoryPoolHandle } from '../memory-pool.js';

const data = workerData as { pool: SharedMemoryPoolHandle; queryId: string; bytes: number };
const pool = attachMemoryPool(data.pool);
const reservation = pool.createQuery(data.queryId);
const outcome = reservation.tryGrow(data.bytes);
parentPort?.postMessage({ threadId, status: outcome.status, held: reservation.held });
process.exit(3); // dies holding the reservation
