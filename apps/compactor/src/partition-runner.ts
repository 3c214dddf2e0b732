/**
 * @module partition-runner
 * Runs {@link compactPartition} for the sweep, either in-process (tests that inject a store, a clock or commit
 * hooks) or in a compaction worker thread under a heap cap derived from `compaction.memory_budget_bytes`. One
 * worker serves a whole sweep and is terminated after it, so nothing it grew (heap, wasm memory) outlives the
 * sweep. A worker that dies (heap exhausted, crash) fails only its partition — unchanged, retried next sweep —
 * and the next partition gets a new worker.
 */
import { Worker } from 'node:worker_threads';
import type { PartitionOutcome } from '@sluice/compaction';
import type { CompactionWorkerData, FromCompactionWorker, ToCompactionWorker } from './compaction-worker-protocol.js';

/** A partition's result as the sweep sees it: an outcome, or a failure message (the partition is unchanged). */
export type RunResult =
  | { readonly status: 'ok'; readonly outcome: PartitionOutcome }
  | { readonly status: 'error'; readonly message: string };

/** Compacts partitions for one sweep. */
export interface PartitionRunner {
  /** `beforeMerge` is awaited only when the partition is really merged, before anything is decoded. */
  run(prefix: string, beforeMerge?: () => Promise<void>): Promise<RunResult>;
  /** Ends the sweep: terminates the worker (an in-flight partition is abandoned; nothing of it is committed). */
  close(): Promise<void>;
}

/** Heap headroom of the compaction worker beyond 3 × its budget: module code, footers, the output bytes. */
const WORKER_HEAP_BASE_MB = 64;

/**
 * The worker's V8 old-generation cap for a merge budget: 3 × budget + 64 MiB. The budget counts decoded columns
 * (footer estimate); the row objects built from them and uncollected garbage come on top — measured: a 64 MiB
 * budget merge of 2 KiB-body rows peaked at 157 MiB used heap and passes under a 192 MiB cap, with no margin.
 */
export function compactionHeapLimitMb(memoryBudgetBytes: number): number {
  return Math.ceil((3 * memoryBudgetBytes) / 1_048_576) + WORKER_HEAP_BASE_MB;
}

/** Options of {@link createWorkerPartitionRunner}. */
export interface WorkerRunnerOptions {
  readonly data: CompactionWorkerData;
  /** Default {@link compactionHeapLimitMb} of the budget; tests lower it to exhaust the heap on purpose. */
  readonly maxOldGenerationSizeMb?: number;
}

/** A runner that compacts in a worker thread (started lazily, replaced after a death). */
export function createWorkerPartitionRunner(options: WorkerRunnerOptions): PartitionRunner {
  const limitMb = options.maxOldGenerationSizeMb ?? compactionHeapLimitMb(options.data.memoryBudgetBytes);
  let worker: Worker | undefined;
  let nextId = 0;
  const start = (): Worker =>
    new Worker(new URL('./compaction-worker.js', import.meta.url), {
      workerData: options.data,
      resourceLimits: { maxOldGenerationSizeMb: limitMb },
    });
  return {
    run(prefix, beforeMerge) {
      const w = (worker ??= start());
      const id = nextId++;
      return new Promise<RunResult>((resolve) => {
        const onMessage = (m: FromCompactionWorker): void => {
          if (m.type === 'need_memory' && m.id === id) {
            // A rejected grant (the compactor stopping) leaves the worker waiting; close() terminates it.
            void (beforeMerge ?? (() => Promise.resolve()))().then(
              () => w.postMessage({ type: 'memory_granted', id } satisfies ToCompactionWorker),
              () => undefined,
            );
            return;
          }
          if (m.type !== 'done' || m.id !== id) return;
          cleanup();
          resolve(m.status === 'ok' ? { status: 'ok', outcome: m.outcome } : { status: 'error', message: m.message });
        };
        const onExit = (code: number): void => {
          cleanup();
          worker = undefined;
          resolve({ status: 'error', message: `the compaction worker exited (code ${code}) before finishing` });
        };
        const onError = (e: Error & { code?: string }): void => {
          cleanup();
          worker = undefined;
          void w.terminate();
          resolve({
            status: 'error',
            message:
              e.code === 'ERR_WORKER_OUT_OF_MEMORY'
                ? `the merge exhausted the compaction worker's ${limitMb} MiB heap (compaction.memory_budget_bytes ${options.data.memoryBudgetBytes}); nothing was committed`
                : 'the compaction worker failed',
          });
        };
        const cleanup = (): void => {
          w.off('message', onMessage);
          w.off('exit', onExit);
          w.off('error', onError);
        };
        w.on('message', onMessage);
        w.once('exit', onExit);
        w.once('error', onError);
        w.postMessage({ type: 'compact', id, prefix } satisfies ToCompactionWorker);
      });
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w !== undefined) await w.terminate();
    },
  };
}
