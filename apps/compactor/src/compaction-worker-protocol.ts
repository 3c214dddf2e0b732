/**
 * @module compaction-worker-protocol
 * Messages between the compactor's sweep (main thread) and its compaction worker.
 */
import type { StorageSettings } from '@sluice/storage';
import type { PartitionOutcome } from './compact-partition.js';

/** Settings the worker starts with. */
export interface CompactionWorkerData {
  readonly storage: StorageSettings;
  readonly graceSecs: number;
  readonly memoryBudgetBytes: number;
  readonly scratchDir?: string;
  readonly rowGroupRows?: number;
}

/** Main → worker: compact one partition. */
export interface ToCompactionWorker {
  readonly id: number;
  readonly prefix: string;
}

/** Worker → main. */
export type FromCompactionWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'done'; readonly id: number; readonly status: 'ok'; readonly outcome: PartitionOutcome }
  | { readonly type: 'done'; readonly id: number; readonly status: 'error'; readonly message: string };
