/**
 * @module testing/helper-seams-query-worker
 * Test-only worker script: the real query worker, with two seams that act only while this thread scans a share
 * for a coordinator (a `scan_share` message), so the coordinating worker is never affected: a share of tenant
 * `die` reserves 1 MiB more in the query's group and then the thread exits (a helper dying mid-share); a share of
 * tenant `gated` holds its range reads until the share is stopped (a `cancel`), so the stop of a scanning helper
 * is exercised without timing.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { attachMemoryPool } from '@sluice/limits';
import type { ObjectStore } from '@sluice/storage';
import type { QueryWorkerData, ToQueryWorker } from '../worker-protocol.js';
import { workerSeams } from '../worker-seams.js';

/** Bytes a dying helper reserves in its query's group just before it exits (parallel-scan.test.ts mirrors it). */
const DYING_EXTRA_BYTES = 1 << 20;

const pool = attachMemoryPool((workerData as QueryWorkerData).pool);
let gatedShare = false;
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
parentPort?.on('message', (message: ToQueryWorker) => {
  if (message.type === 'cancel') openGate();
  if (message.type !== 'scan_share') return;
  if (message.tenant === 'gated') gatedShare = true;
  if (message.tenant !== 'die') return;
  const extra = pool.createQuery(message.id, { group: message.group });
  if (extra.tryGrow(DYING_EXTRA_BYTES).status !== 'ok') throw new Error('test pool too small');
  process.exit(3);
});

workerSeams.wrapStore = (store: ObjectStore): ObjectStore => ({
  put: (key, bytes, opts) => store.put(key, bytes, opts),
  putConditional: (key, bytes, condition, opts) => store.putConditional(key, bytes, condition, opts),
  get: (key, opts) => store.get(key, opts),
  getVersioned: (key, opts) => store.getVersioned(key, opts),
  head: (key, opts) => store.head(key, opts),
  list: (options) => store.list(options),
  delete: (key, opts) => store.delete(key, opts),
  async getRange(key, start, end, opts) {
    if (gatedShare && key.includes('tenant_id=gated/')) await gate;
    return store.getRange(key, start, end, opts);
  },
});
await import('../query-worker.js');
