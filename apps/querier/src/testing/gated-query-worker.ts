/**
 * @module testing/gated-query-worker
 * Test-only worker script: the real query worker over a store whose range reads of tenant `gated` wait until the
 * worker is asked to stop that query (a `cancel` message) — a scan held mid-flight that stays responsive, so
 * the cooperative stop (the engine's abort check before its next row group) is exercised without termination.
 */
import { parentPort } from 'node:worker_threads';
import type { ObjectStore } from '@sluice/storage';
import type { ToQueryWorker } from '../worker-protocol.js';
import { workerSeams } from '../worker-seams.js';

let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
parentPort?.on('message', (message: ToQueryWorker) => {
  if (message.type === 'cancel') openGate();
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
    if (key.includes('tenant_id=gated/')) await gate;
    return store.getRange(key, start, end, opts);
  },
});
await import('../query-worker.js');
