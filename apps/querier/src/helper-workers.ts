/**
 * @module helper-workers
 * The scan helpers (docs/design/query-governance.md, "Parallel scans"): `querier.limits.query_parallelism − 1`
 * worker threads, apart from the query workers, that scan a share of one big aggregation's files when the
 * querier is otherwise idle. They hold no admission permit and are lent only when `mayLend()` says no other
 * query is running or queued, so a query never waits for one, and admission and the queue are what they were.
 *
 * A helper reserves on its own slot of the shared pool, joined to the query's group (its bytes count with the
 * query's for its ceiling and the 422/503 rule). Its partial's reservation is held until the coordinating query
 * ends (`finish`). A stop of the query stops its helper the way a query worker is stopped: cooperatively, else
 * terminated after the grace. A helper that dies fails only the query it was lent to (`lost`), and is replaced.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerHeapStart } from './worker-heap-start.js';
import type { MemoryPool } from '@sluice/limits';
import type { QueryError } from './query-error.js';
import type { FromQueryWorker, LendAnswer, QueryWorkerData, ShareRequest } from './worker-protocol.js';

/** Longest wait for a stopping helper's pool update to finish before it is terminated anyway (as worker-pool.ts). */
const FENCE_WAIT_MS = 100;

/** Options for {@link createHelperWorkers}. */
export interface HelperWorkersOptions {
  /** Helper threads (`query_parallelism − 1`); 0 = none, every query scans on its own worker. */
  readonly size: number;
  readonly data: QueryWorkerData;
  readonly pool: MemoryPool;
  /** V8 old-generation limit per helper, MiB (the query workers' own). */
  readonly maxOldGenerationSizeMb: number;
  /** How helpers are started under V8's first old-generation limit (the query workers' own). */
  readonly heapStart?: WorkerHeapStart;
  /** True when lending now delays no one: no other query is running or queued. */
  readonly mayLend: () => boolean;
  /** Grace between a stop request and termination, ms. */
  readonly stopGraceMs: number;
  /** Test seam: the worker script (default `./query-worker.js`). */
  readonly workerUrl?: URL;
  /** Called when a helper dies (for the server log). */
  readonly onWorkerDeath?: (info: { threadId: number; queryId: string | null; reason: string }) => void;
  /** Sets the pool total back to the sum of the slots after a death (the query workers' repair). */
  readonly repairTotal: () => void;
}

/** The helper threads. */
export interface HelperWorkers {
  /**
   * Lends an idle helper to the share, when one is idle and `mayLend()`; `answer` then receives the lend's one
   * answer. Returns false (nothing lent, `answer` never called) otherwise.
   */
  lend(request: ShareRequest, answer: (a: LendAnswer) => void): boolean;
  /**
   * The query `id` has ended (answered, failed, stopped, or its worker died): its helper is stopped if still
   * scanning, or gives back its partial's reservation, and is then idle again. Resolves once the helper no longer
   * touches the query's slots (released, stopped, or its thread gone), so the caller may then release the query.
   */
  finish(id: string): Promise<void>;
  /** Terminates every helper. */
  close(): Promise<void>;
}

interface Helper {
  worker: Worker;
  threadId: number;
  ready: boolean;
  /** The share this helper works on, until its query finishes. */
  share: {
    id: string;
    /** The coordinator's callback, until the share has answered (or was given up). */
    answer: ((a: LendAnswer) => void) | null;
    /** The share answered `ok`: its partial's reservation is held in the helper. */
    held: boolean;
    /** The query has ended; `settled` resolves `finish` once the helper is idle. */
    finished: boolean;
    settled: (() => void)[];
    grace?: ReturnType<typeof setTimeout>;
  } | null;
  stopping: boolean;
  /** Terminated on its own `recycle` request while idle. */
  recycling: boolean;
}

/** Starts `size` helper threads. */
export function createHelperWorkers(options: HelperWorkersOptions): HelperWorkers {
  const helpers: Helper[] = [];
  let closing = false;

  /** The helper is done with its share: nothing of the query is held in it any more. */
  const idle = (h: Helper): void => {
    const share = h.share;
    h.share = null;
    if (share === null) return;
    if (share.grace !== undefined) clearTimeout(share.grace);
    for (const settle of share.settled) settle();
  };

  const spawn = (): Helper => {
    const create = (): Worker =>
      new Worker(options.workerUrl ?? new URL('./query-worker.js', import.meta.url), {
        workerData: options.data,
        resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb },
      });
    const worker = options.heapStart !== undefined ? options.heapStart.start(create) : create();
    const h: Helper = {
      worker,
      threadId: worker.threadId,
      ready: false,
      share: null,
      stopping: false,
      recycling: false,
    };
    worker.on('message', (message: FromQueryWorker) => {
      if (message.type === 'ready') {
        h.ready = true;
        return;
      }
      if (message.type === 'recycle') {
        // As a query worker: an idle helper whose heap stays high after a full GC is replaced.
        if (h.share === null && !closing) {
          h.recycling = true;
          void worker.terminate();
        }
        return;
      }
      if (h.share === null || !('id' in message) || h.share.id !== message.id) return;
      const share = h.share;
      if (message.type === 'share_released') return idle(h);
      if (message.type !== 'share_done') return;
      const a = message.answer;
      if (a.status !== 'cancelled') share.answer?.(a);
      share.answer = null;
      share.held = a.status === 'ok';
      if (!share.finished) return;
      // The query ended while the share was scanning: a partial that raced the stop goes back now.
      if (share.held) worker.postMessage({ type: 'release_share', id: share.id });
      else idle(h);
    });
    let deathReason = 'crash';
    worker.on('error', (error: Error & { code?: string }) => {
      deathReason = error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'out_of_memory' : 'crash';
    });
    worker.on('exit', () => {
      options.pool.releaseThread(h.threadId);
      if (closing) return;
      if (!h.stopping && !h.recycling) options.repairTotal();
      const share = h.share;
      options.onWorkerDeath?.({
        threadId: h.threadId,
        queryId: share?.id ?? null,
        reason: h.recycling ? 'recycled' : h.stopping ? 'stopped' : deathReason,
      });
      if (share !== null) {
        share.answer?.({ status: 'lost', error: lostError(deathReason) });
        share.answer = null;
        idle(h);
      }
      const at = helpers.indexOf(h);
      if (at >= 0) helpers.splice(at, 1, spawn());
    });
    return h;
  };
  for (let i = 0; i < options.size; i++) helpers.push(spawn());

  /** Terminates a helper once its slots are fenced (as worker-pool.ts does for a query worker). */
  const terminateFenced = (h: Helper, since = performance.now()): void => {
    if (!options.pool.fenceThread(h.threadId) && performance.now() - since < FENCE_WAIT_MS) {
      setImmediate(() => terminateFenced(h, since));
      return;
    }
    void h.worker.terminate();
  };

  return {
    lend(request, answer) {
      if (closing) return false;
      const h = helpers.find((x) => x.ready && x.share === null && !x.stopping && !x.recycling);
      if (h === undefined || !options.mayLend()) return false;
      h.share = { id: request.id, answer, held: false, finished: false, settled: [] };
      h.worker.postMessage(request);
      return true;
    },
    finish(id) {
      const h = helpers.find((x) => x.share?.id === id);
      const share = h?.share;
      if (h === undefined || share === null || share === undefined) return Promise.resolve();
      const settled = new Promise<void>((resolve) => share.settled.push(resolve));
      if (share.finished) return settled;
      share.finished = true;
      if (share.answer === null) {
        // Answered: an `ok` partial is still held until the helper says it gave it back; a failure held nothing.
        if (share.held) h.worker.postMessage({ type: 'release_share', id });
        else idle(h);
        return settled;
      }
      // Still scanning: the query no longer wants its share. Stopped like a query worker: cooperatively, then
      // terminated (its slot released with the thread, and a fresh helper takes its place).
      share.answer = null;
      h.worker.postMessage({ type: 'cancel', id });
      share.grace = setTimeout(() => {
        if (h.share !== share) return;
        h.stopping = true;
        terminateFenced(h);
      }, options.stopGraceMs);
      return settled;
    },
    async close() {
      closing = true;
      for (const h of helpers) idle(h);
      await Promise.all(helpers.map((h) => h.worker.terminate()));
    },
  };
}

/** What the query of a helper that died is answered (the query worker's own words for its death). */
function lostError(reason: string): QueryError {
  return reason === 'out_of_memory'
    ? {
        kind: 'query_memory_limit',
        message:
          'the query ran out of query-worker heap (a backstop behind querier.limits.memory_pool_bytes); narrow the time range, add filters or reduce the group cardinality',
      }
    : { kind: 'internal', message: 'the query worker failed while running this query' };
}
