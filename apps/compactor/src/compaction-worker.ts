/**
 * @module compaction-worker
 * A worker thread that compacts partitions one at a time with {@link compactPartition}. Running the merge here,
 * under V8 `resourceLimits`, keeps its decode/encode churn off the main thread (which acknowledges exports) and
 * puts a hard cap on its heap: measured on a 500k-row partition with 2 KiB bodies, the same merge on the main
 * thread peaked at 926 MiB RSS (V8 let garbage grow); capped at 256 MiB it peaked at 390 MiB.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createObjectStore } from '@sluice/storage';
import { compactPartition } from '@sluice/compaction';
import type { CompactionWorkerData, FromCompactionWorker, ToCompactionWorker } from './compaction-worker-protocol.js';

function requirePort(): MessagePort {
  if (parentPort === null) throw new Error('compaction-worker must run in a worker thread');
  return parentPort;
}
const port = requirePort();
const settings = workerData as CompactionWorkerData;
const store = createObjectStore(settings.storage);
const post = (message: FromCompactionWorker): void => port.postMessage(message);

/** Grants the main thread has not answered yet, by partition id. */
const waiting = new Map<number, () => void>();

port.on('message', (message: ToCompactionWorker) => {
  if (message.type === 'memory_granted') {
    waiting.get(message.id)?.();
    waiting.delete(message.id);
    return;
  }
  void (async () => {
    try {
      const outcome = await compactPartition(store, message.prefix, {
        now: Date.now,
        graceSecs: settings.graceSecs,
        openHourMinFileAgeSecs: settings.openHourMinFileAgeSecs ?? 0,
        memoryBudgetBytes: settings.memoryBudgetBytes,
        ...(settings.scratchDir !== undefined ? { scratchDir: settings.scratchDir } : {}),
        ...(settings.rowGroupRows !== undefined ? { rowGroupRows: settings.rowGroupRows } : {}),
        beforeMerge: () =>
          new Promise<void>((resolve) => {
            waiting.set(message.id, resolve);
            post({ type: 'need_memory', id: message.id });
          }),
      });
      post({ type: 'done', id: message.id, status: 'ok', outcome });
    } catch (e) {
      // CompactionError messages are ours (they name keys and counts); anything else is scrubbed to its message.
      post({ type: 'done', id: message.id, status: 'error', message: e instanceof Error ? e.message : String(e) });
    }
  })();
});
post({ type: 'ready' });
