/**
 * @module testing/footer-cache-holder
 * Test-only worker script: another query worker's footer cache, idle, holding `bytes` on the shared pool — what a
 * refused query on a different worker must get back (worker-footer-cache.ts `relieve`).
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { attachMemoryPool, type SharedMemoryPoolHandle } from '@sluice/limits';
import { createWorkerFooterCache } from '../worker-footer-cache.js';

const { pool: shared, bytes } = workerData as { pool: SharedMemoryPoolHandle; bytes: number };
const pool = attachMemoryPool(shared);
const footers = createWorkerFooterCache({ pool, capacityBytes: bytes, threadId });
if (!footers.cache.offer('data/held.parquet', 1, { metadata_length: 1 } as never, bytes)) throw new Error('not kept');
parentPort?.on('message', (m: string) => {
  if (m === 'stop') {
    footers.close();
    parentPort?.close();
  }
});
parentPort?.postMessage({ held: footers.cache.heldBytes });
