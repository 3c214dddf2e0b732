/**
 * @module compaction-worker-protocol
 * Messages between the compactor's sweep (main thread) and its compaction worker.
 */
import type { StorageSettings } from '@sluice/storage';
import type { PartitionOutcome } from '@sluice/compaction';

/** Settings the worker starts with. */
export interface CompactionWorkerData {
  readonly storage: StorageSettings;
  readonly graceSecs: number;
  /** `compaction.open_hour_min_file_age_secs` (absent or 0 = open hours are not compacted). */
  readonly openHourMinFileAgeSecs?: number;
  readonly memoryBudgetBytes: number;
  readonly scratchDir?: string;
  readonly rowGroupRows?: number;
}

/** Main → worker: compact one partition; or the memory the worker asked for before merging it is granted. */
export type ToCompactionWorker =
  | { readonly type: 'compact'; readonly id: number; readonly prefix: string }
  | { readonly type: 'memory_granted'; readonly id: number };

/** Worker → main. */
export type FromCompactionWorker =
  | { readonly type: 'ready' }
  /** Partition `id` needs a merge: the worker waits for `memory_granted` before decoding anything. */
  | { readonly type: 'need_memory'; readonly id: number }
  | { readonly type: 'done'; readonly id: number; readonly status: 'ok'; readonly outcome: PartitionOutcome }
  | { readonly type: 'done'; readonly id: number; readonly status: 'error'; readonly message: string };
