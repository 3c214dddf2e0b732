/**
 * @module pool-die-mid-grow-worker
 * Test worker that dies inside a pool update, between committing the pool total and adding to its slot — what a
 * V8 heap exhausted at the wrong allocation does — so the total is left `second` bytes above the slots.
 */
import { workerData } from 'node:worker_threads';
import { attachMemoryPool } from '../memory-pool.js';
import type { SharedMemoryPoolHandle } from '../memory-pool.js';
import { setAfterTotalCommitHook } from '../query-reservation.js';

const data = workerData as { pool: SharedMemoryPoolHandle; first: number; second: number };
const reservation = attachMemoryPool(data.pool).createQuery('dies-mid-grow');
reservation.tryGrow(data.first);
setAfterTotalCommitHook(() => process.exit(5));
reservation.tryGrow(data.second);
