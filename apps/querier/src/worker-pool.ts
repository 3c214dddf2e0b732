/**
 * @module worker-pool
 * The query workers: a fixed set of `worker_threads` (one per admission permit), each running one query at a
 * time under V8 `resourceLimits` — the hard backstop behind the pool. A worker that dies mid-query (heap
 * exhausted, crash) fails only that query, has its reservations released from the slot table, and is replaced.
 *
 * Stopping a job (its deadline passed or its client went away: the caller aborts the `signal` it passed) is
 * cooperative first — the worker's engine checks its abort signal between row groups — and forced after
 * `stopGraceMs`: a worker that has not answered by then is busy in code that does not yield (a regex, a hung
 * read), so it is terminated, its reservations are released with the thread, and a fresh worker takes its place
 * (docs/design/query-governance.md, "Deadlines and cancellation").
 */
import { Worker } from 'node:worker_threads';
import type { WorkerHeapStart } from './worker-heap-start.js';
import type { CorruptObject } from '@sluice/engine';
import type { CeilingCrossed, MemoryPool } from '@sluice/limits';
import { createHelperWorkers } from './helper-workers.js';
import type { QueryError } from './query-error.js';
import type { StorageWaitReport } from './storage-watch.js';
import type { FromQueryWorker, QueryJobKind, QueryWorkerData } from './worker-protocol.js';

/**
 * The result of one job as the main thread sees it. `corrupt` lists the corrupt objects the job met, when the
 * worker answered (a terminated worker's are lost).
 */
export type JobResult =
  | {
      readonly status: 'ok';
      readonly body: Uint8Array;
      readonly rows: number;
      readonly rowGroupsScanned: number;
      readonly rowGroupsPruned: number;
      readonly peakBytes: number;
      readonly corrupt?: readonly CorruptObject[];
      /** Observe mode: the result ceilings the query went past and was served anyway. */
      readonly crossed?: readonly CeilingCrossed[];
      /** A streamed job: bytes of the batches handed to `onBatch` before the trailer (`body`). */
      readonly streamedBytes?: number;
    }
  | {
      readonly status: 'error';
      readonly error: QueryError;
      readonly peakBytes?: number;
      readonly corrupt?: readonly CorruptObject[];
    }
  /**
   * Stopped on the caller's abort; `terminated` when the worker did not yield and was replaced; `storage` is the
   * worker's account of the job's storage calls at the stop, when it could still send one.
   */
  | {
      readonly status: 'cancelled';
      readonly terminated?: boolean;
      readonly storage?: StorageWaitReport;
      readonly corrupt?: readonly CorruptObject[];
    };

/** Longest wait for a stopping worker's pool update to finish before it is terminated anyway. */
const FENCE_WAIT_MS = 100;

/** Default grace between asking a worker to stop and terminating it. */
export const DEFAULT_STOP_GRACE_MS = 50;

/** Options for {@link createWorkerPool}. */
export interface WorkerPoolOptions {
  readonly size: number;
  readonly data: QueryWorkerData;
  readonly pool: MemoryPool;
  /** V8 old-generation limit per worker, MiB (derived from the pool size). */
  readonly maxOldGenerationSizeMb: number;
  /** How workers are started under V8's first old-generation limit (default: V8's own sizing). */
  readonly heapStart?: WorkerHeapStart;
  /**
   * Test seam: the worker script. Default `./query-worker.js` (production never sets it); tests pass a script that
   * wraps the real worker to make it die mid-query.
   */
  readonly workerUrl?: URL;
  /** Grace between a stop request and termination, ms (default {@link DEFAULT_STOP_GRACE_MS}). */
  readonly stopGraceMs?: number;
  /** Called when the pool total had to be repaired after a worker died inside a pool update (for the server log). */
  readonly onTotalRepaired?: (bytes: number) => void;
  /** Called when that repair found a reservation busy for FENCE_WAIT_MS and gave up (for the server log). */
  readonly onRepairAbandoned?: () => void;
  /** Called when a worker dies (for the server log). */
  readonly onWorkerDeath?: (info: { threadId: number; queryId: string | null; reason: string }) => void;
  /**
   * Scan helpers besides the `size` query workers (`querier.limits.query_parallelism − 1`; default 0): an
   * aggregation may lend them a share of its files while `mayLend()` (docs/design/query-governance.md,
   * "Parallel scans").
   */
  readonly helpers?: number;
  /** True when lending a helper delays no one: no other query running or queued. Default: never lend. */
  readonly mayLend?: () => boolean;
}

/** How the caller steers one job. */
export interface RunControl {
  /** Aborting it stops the job (see {@link WorkerPool.run}). */
  readonly signal?: AbortSignal;
  /** Called when the job reaches a worker. */
  readonly onDispatch?: () => void;
  /** Pool bytes the job must leave free for other queries (the light lane's share); default 0. */
  readonly leaveFreeBytes?: number;
  /**
   * Stream the result (NDJSON): each batch of lines is handed to `onBatch` in order, and the worker may drop it
   * (and send more) only once the returned promise resolves — written to the client and drained.
   */
  readonly stream?: { onBatch(batch: Uint8Array): Promise<void> };
}

/** Runs jobs on the query workers. */
export interface WorkerPool {
  /**
   * Runs a job; the caller holds an admission permit, so a worker is free (or being replaced). Aborting `signal`
   * stops the job: cooperatively, else by terminating the worker after the grace; either way the result is
   * `cancelled` and, once it resolves, the job's thread no longer touches the pool. `onDispatch` is called when
   * the job reaches a worker (after any wait for a replacement worker to start), which is where its deadline
   * starts.
   */
  run(id: string, tenant: string, nowNs: bigint, job: QueryJobKind, control?: RunControl): Promise<JobResult>;
  /** Terminates every worker. */
  close(): Promise<void>;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  job: {
    id: string;
    tenant: string;
    nowNs: bigint;
    leaveFreeBytes: number;
    resolve: (r: JobResult) => void;
    storage?: StorageWaitReport;
    onBatch?: (batch: Uint8Array) => Promise<void>;
  } | null;
  recycling: boolean;
  /** Set when the current job's worker is terminated for not yielding to a stop request. */
  stopping: boolean;
}

/** Starts `size` query workers. */
export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  const stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  const slots: Slot[] = [];
  let closing = false;
  const waiting: ((slot: Slot) => void)[] = [];

  const spawn = (): Slot => {
    const create = (): Worker =>
      new Worker(options.workerUrl ?? new URL('./query-worker.js', import.meta.url), {
        workerData: options.data,
        resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb },
      });
    const worker = options.heapStart !== undefined ? options.heapStart.start(create) : create();
    let markReady!: () => void;
    const slot: Slot = {
      worker,
      ready: new Promise((r) => (markReady = r)),
      job: null,
      recycling: false,
      stopping: false,
    };
    worker.on('message', (message: FromQueryWorker) => {
      if (message.type === 'ready') return markReady();
      if (message.type === 'recycle') {
        // Only an idle worker is replaced; one that already has its next job asks again after it.
        const at = idle.indexOf(slot);
        if (slot.job === null && at >= 0 && !closing) {
          idle.splice(at, 1);
          slot.recycling = true;
          void worker.terminate();
        }
        return;
      }
      const job = slot.job;
      if (job === null || job.id !== message.id) return;
      if (message.type === 'stopping') {
        job.storage = message.storage;
        return;
      }
      if (message.type === 'lend') {
        const { id } = message;
        const lent = helpers?.lend(
          {
            type: 'scan_share',
            id,
            tenant: job.tenant,
            nowNs: job.nowNs,
            query: message.query,
            files: message.files,
            group: message.group,
            leaveFreeBytes: job.leaveFreeBytes,
          },
          (answer) => {
            // An `ok` partial is a buffer handed on (transferred), never rebuilt into objects on this thread.
            if (slot.job?.id === id)
              worker.postMessage({ type: 'lent', id, answer }, answer.status === 'ok' ? [answer.partial] : []);
          },
        );
        if (lent !== true) worker.postMessage({ type: 'lent', id, answer: { status: 'refused' } });
        return;
      }
      if (message.type === 'share_done' || message.type === 'share_released') return;
      if (message.type === 'batch') {
        const { id, seq } = message;
        // Taken once written and drained; a batch the client never takes is released when the query stops.
        void job.onBatch?.(message.batch).then(
          () => {
            if (slot.job?.id === id) worker.postMessage({ type: 'taken', id, seq });
          },
          () => undefined,
        );
        return;
      }
      slot.job = null;
      const { corrupt } = message;
      if (message.status === 'ok') {
        const { body, rows, rowGroupsScanned, rowGroupsPruned, peakBytes, crossed, streamedBytes } = message;
        job.resolve({
          status: 'ok',
          body,
          rows,
          rowGroupsScanned,
          rowGroupsPruned,
          peakBytes,
          corrupt,
          crossed,
          ...(streamedBytes !== undefined ? { streamedBytes } : {}),
        });
      } else if (message.status === 'error') {
        job.resolve({ status: 'error', error: message.error, peakBytes: message.peakBytes, corrupt });
      } else {
        job.resolve({ status: 'cancelled', ...(job.storage ? { storage: job.storage } : {}), corrupt });
      }
      release(slot);
    });
    let deathReason = 'the query worker stopped';
    worker.on('error', (error: Error & { code?: string }) => {
      deathReason = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'out_of_memory' : 'crash';
    });
    // Read now: once the thread has stopped, `worker.threadId` is -1 (already in the 'exit' handler), and
    // releaseThread(-1) would release nothing.
    const threadId = worker.threadId;
    worker.on('exit', () => {
      // Whatever the dead thread had reserved goes back to the pool. A thread that died on its own (its heap
      // exhausted) may have died between the pool total and its slot: the total is repaired from the slots.
      options.pool.releaseThread(threadId);
      if (!closing && !slot.recycling) repairTotal();
      const job = slot.job;
      slot.job = null;
      // close() terminates every worker on purpose: that is a shutdown, not a death to report.
      if (!closing)
        options.onWorkerDeath?.({
          threadId,
          queryId: job?.id ?? null,
          reason: slot.recycling ? 'recycled' : slot.stopping ? 'stopped' : deathReason,
        });
      if (job !== null && slot.stopping) {
        job.resolve({ status: 'cancelled', terminated: true, ...(job.storage ? { storage: job.storage } : {}) });
      } else if (job !== null) {
        const error: QueryError =
          deathReason === 'out_of_memory'
            ? {
                kind: 'query_memory_limit',
                message:
                  'the query ran out of query-worker heap (a backstop behind querier.limits.memory_pool_bytes); narrow the time range, add filters or reduce the group cardinality',
              }
            : { kind: 'internal', message: 'the query worker failed while running this query' };
        job.resolve({ status: 'error', error });
      }
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      const idleAt = idle.indexOf(slot);
      if (idleAt >= 0) idle.splice(idleAt, 1);
      if (!closing) {
        const fresh = spawn();
        slots.push(fresh);
        void fresh.ready.then(() => release(fresh));
      }
    });
    return slot;
  };

  /**
   * Terminates a worker once its reservations are fenced (limits' pool-layout: a thread stopped between the two
   * words of a pool update would leave the total wrong). A fence waits out an update in progress — nanoseconds,
   * unless the thread is descheduled — so it is retried on the next turns, for at most FENCE_WAIT_MS.
   */
  const terminateFenced = (slot: Slot, since = performance.now()): void => {
    const threadId = slot.worker.threadId;
    if (threadId >= 0 && !options.pool.fenceThread(threadId) && performance.now() - since < FENCE_WAIT_MS) {
      setImmediate(() => terminateFenced(slot, since));
      return;
    }
    void slot.worker.terminate();
  };

  /** Sets the pool total back to the sum of the slots; retried on the next turns while a slot is mid-update. */
  const repairTotal = (since = performance.now()): void => {
    const drift = options.pool.repairTotal();
    if (drift === null) {
      if (performance.now() - since < FENCE_WAIT_MS) setImmediate(() => repairTotal(since));
      else options.onRepairAbandoned?.();
      return;
    }
    if (drift !== 0) options.onTotalRepaired?.(drift);
  };

  const idle: Slot[] = [];
  const release = (slot: Slot): void => {
    // A slot being terminated is never handed out again, even if its last answer raced the termination.
    if (!slots.includes(slot) || slot.stopping) return;
    const next = waiting.shift();
    if (next !== undefined) next(slot);
    else idle.push(slot);
  };
  const helpers =
    (options.helpers ?? 0) > 0
      ? createHelperWorkers({
          size: options.helpers ?? 0,
          data: options.data,
          pool: options.pool,
          maxOldGenerationSizeMb: options.maxOldGenerationSizeMb,
          ...(options.heapStart !== undefined ? { heapStart: options.heapStart } : {}),
          mayLend: options.mayLend ?? (() => false),
          stopGraceMs,
          ...(options.workerUrl !== undefined ? { workerUrl: options.workerUrl } : {}),
          ...(options.onWorkerDeath !== undefined ? { onWorkerDeath: options.onWorkerDeath } : {}),
          repairTotal: () => repairTotal(),
        })
      : undefined;
  for (let i = 0; i < options.size; i++) {
    const slot = spawn();
    slots.push(slot);
    void slot.ready.then(() => release(slot));
  }

  const acquire = (): Promise<Slot> => {
    const slot = idle.shift();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise((resolve) => waiting.push(resolve));
  };

  return {
    async run(id, tenant, nowNs, job, control = {}) {
      const { signal, onDispatch } = control;
      if (signal?.aborted) return { status: 'cancelled' };
      const slot = await acquire();
      if (signal?.aborted) {
        release(slot);
        return { status: 'cancelled' };
      }
      return new Promise<JobResult>((resolve) => {
        let grace: ReturnType<typeof setTimeout> | undefined;
        const onAbort = (): void => {
          slot.worker.postMessage({ type: 'cancel', id });
          grace = setTimeout(() => {
            if (slot.job?.id !== id) return;
            // Still running after the grace: the worker is in code that does not yield. Terminate it; the exit
            // handler releases its reservations and resolves this job as cancelled.
            slot.stopping = true;
            const at = idle.indexOf(slot);
            if (at >= 0) idle.splice(at, 1);
            terminateFenced(slot);
          }, stopGraceMs);
        };
        const leaveFreeBytes = control.leaveFreeBytes ?? 0;
        slot.job = {
          id,
          tenant,
          nowNs,
          leaveFreeBytes,
          resolve: (result) => {
            clearTimeout(grace);
            signal?.removeEventListener('abort', onAbort);
            // However the query ended, its helper stops or gives back its partial, and the job resolves only
            // once the helper no longer touches the query's slots (the caller then releases the query by id).
            if (helpers === undefined) resolve(result);
            else void helpers.finish(id).then(() => resolve(result));
          },
          ...(control.stream ? { onBatch: control.stream.onBatch } : {}),
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        slot.worker.postMessage({
          type: 'run',
          id,
          tenant,
          nowNs,
          job,
          leaveFreeBytes,
          ...(control.stream ? { stream: true } : {}),
          ...(helpers !== undefined ? { mayLend: true } : {}),
        });
        onDispatch?.();
      });
    },
    async close() {
      closing = true;
      await Promise.all([...slots.map((s) => s.worker.terminate()), helpers?.close()]);
    },
  };
}
