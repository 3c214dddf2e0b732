/**
 * @module query-worker
 * A query worker thread: attaches the shared memory pool, runs one query at a time with @sluice/engine, and
 * posts the serialized response back. Any failure inside a query becomes a typed error for that query only.
 * Every storage call of a query carries its abort signal, so a stop (deadline or client) ends its storage waits
 * too; the store's retries and pending calls are watched, and reported the moment a stop is asked for.
 */
import { deserialize, getHeapStatistics, serialize, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parentPort, threadId, workerData, type MessagePort } from 'node:worker_threads';
import {
  executeQuery,
  executeScanShare,
  listTemplates,
  pollTail,
  type ExecuteOutcome,
  type LendResult,
  type LineSink,
  type PartialScan,
  type QueryFailure,
  type ScanHelpers,
  type ShareOutcome,
  type TailPollOutcome,
} from '@sluice/engine';
import {
  attachMemoryPool,
  describeLimitError,
  limitErrorDetails,
  type CeilingCrossed,
  type PoolReservation,
  type QueryReservation,
} from '@sluice/limits';
import type { Query } from '@sluice/query';
import { createHeapReclaimer } from './heap-reclaimer.js';
import type { QueryError } from './query-error.js';
import { storageCorruptError, storageUnavailableError } from './storage-failure-text.js';
import { createStorageWatch } from './storage-watch.js';
import { createWorkerFooterCache, relievingReservation } from './worker-footer-cache.js';
import type { FromQueryWorker, LendAnswer, QueryWorkerData, ShareRequest, ToQueryWorker } from './worker-protocol.js';
import { workerSeams } from './worker-seams.js';

function requirePort(): MessagePort {
  if (parentPort === null) throw new Error('query-worker must run in a worker thread');
  return parentPort;
}
const port = requirePort();
const settings = workerData as QueryWorkerData;
const pool = attachMemoryPool(settings.pool);
const watch = createStorageWatch();
// The watch is outermost: a call held by a test seam counts as pending, as a hung call does in production.
const store = watch.wrap(
  workerSeams.wrapStore(
    workerSeams.createStore(settings.storage, { onRetry: watch.onRetry, maxOpenDataFiles: settings.maxOpenFiles }),
  ),
);
// Files are immutable, so parsed footers stay valid across queries (docs/design/query-governance.md, "Footer cache").
const footers = createWorkerFooterCache({ pool, capacityBytes: settings.footerCacheBytes, threadId });
const idleHeldBytes = (): number => footers.cache.heldBytes;
const running = new Map<string, AbortController>();
/** Per coordinated query: its lend waiting for the main thread's `lent` (docs/design/query-governance.md, "Parallel scans"). */
const lends = new Map<string, (answer: LendAnswer) => void>();
/** Per helper share answered `ok`: its reservation (the partial's group table), held until `release_share`. */
const shares = new Map<string, QueryReservation>();
/** Per streamed query: its batches sent and not yet taken by the main thread, by sequence number. */
const untaken = new Map<string, Map<number, { resolve(): void; reject(e: Error): void }>>();
// Workers cannot be started with --expose-gc; this is the supported way to get a `gc` function inside one.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (() => void) | undefined;
gc?.();
const reclaimer = createHeapReclaimer({
  collect: () => gc?.(),
  usedHeapBytes: () => getHeapStatistics().used_heap_size,
  slackBytes: settings.heapSlackBytes,
});
const post = (message: FromQueryWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

/**
 * The sink of a streamed query: each batch is transferred to the main thread, and `send` resolves when the main
 * thread says it was taken (written and drained), or rejects when the query is stopped (the engine then unwinds
 * as cancelled, its batches released with its reservation).
 */
function lineSink(id: string, signal: AbortSignal): LineSink {
  const pending = new Map<number, { resolve(): void; reject(e: Error): void }>();
  untaken.set(id, pending);
  signal.addEventListener(
    'abort',
    () => {
      for (const p of pending.values()) p.reject(new Error('query stopped'));
      pending.clear();
    },
    { once: true },
  );
  let seq = 0;
  return {
    send(batch) {
      if (signal.aborted) return Promise.reject(new Error('query stopped'));
      const n = ++seq;
      // A batch smaller than Node's buffer pool slab may share its ArrayBuffer: only a whole buffer is transferred.
      const own = batch.byteOffset === 0 && batch.byteLength === batch.buffer.byteLength ? batch : batch.slice();
      return new Promise<void>((resolve, reject) => {
        pending.set(n, { resolve, reject });
        post({ type: 'batch', id, seq: n, batch: own }, [own.buffer as ArrayBuffer]);
      });
    },
  };
}

/** A tail poll's outcome in the shape every job answers with (its trailer is the body; no row-group figures). */
function asExecuteOutcome(outcome: TailPollOutcome): ExecuteOutcome {
  if (outcome.status !== 'ok') return outcome;
  return {
    status: 'ok',
    body: outcome.body,
    budget: outcome.budget,
    rows: outcome.rows,
    stats: { bytes_read: 0, row_groups_scanned: 0, row_groups_pruned: 0, rows_excluded: 0 },
    corrupt: outcome.corrupt,
    streamedBytes: outcome.streamedBytes,
  };
}

/** A failure as the user-facing error (limit kinds carry their own message). */
/** What a query (or a lent share) that threw answers: no library text reaches the client. */
const INTERNAL_FAILURE: Extract<ExecuteOutcome, { status: 'error' }> = {
  status: 'error',
  error: { kind: 'internal', message: 'the query failed inside the querier' },
  corrupt: [],
};

function toQueryError(failure: Exclude<QueryFailure, { kind: 'cancelled' }>): QueryError {
  switch (failure.kind) {
    case 'invalid_query':
    case 'internal':
      return { kind: failure.kind, message: failure.message };
    case 'storage_corrupt':
      return storageCorruptError(failure.key, failure.reason);
    case 'storage_unavailable':
      return storageUnavailableError(failure.operation, failure.key, failure.attempts, failure.reason);
    default:
      return { kind: failure.kind, message: describeLimitError(failure), details: limitErrorDetails(failure) };
  }
}

async function run(message: Extract<ToQueryWorker, { type: 'run' }>): Promise<void> {
  const controller = new AbortController();
  running.set(message.id, controller);
  watch.reset();
  // The per-query ceiling (querier.limits.max_query_memory_bytes) is checked by the reservation itself; in observe
  // mode its ceiling is only what the pool leaves this lane, and the configured one is compared with the peak after.
  // Before a pool refusal stands, this worker's cached footers are given back and the grow is tried once more.
  const raw = pool.createQuery(message.id, {
    maxBytes: settings.maxQueryBytes,
    leaveFreeBytes: message.leaveFreeBytes,
  });
  const reservation = relievingReservation(raw, footers.relieve);
  let outcome: ExecuteOutcome;
  const job = message.job;
  const lent: { loss?: QueryError; peakBytes: number } = { peakBytes: 0 };
  const helpers =
    message.mayLend === true && job.kind === 'query'
      ? lendingHelpers(message.id, job.query, raw, controller.signal, lent)
      : undefined;
  try {
    outcome =
      job.kind === 'tail_poll'
        ? asExecuteOutcome(
            await pollTail({
              store,
              tenant: message.tenant,
              predicate: job.predicate,
              ...(job.projectKeys !== undefined ? { projectKeys: new Set(job.projectKeys) } : {}),
              partitions: job.partitions,
              read: job.read,
              emitFromNs: job.emitFromNs,
              limits: settings.limits,
              reservation,
              sink: lineSink(message.id, controller.signal),
              ...(settings.streamBatchBytes !== undefined ? { batchBytes: settings.streamBatchBytes } : {}),
              signal: controller.signal,
              onCorruptObject: settings.onCorruptObject,
              reclaim: reclaimer.reclaim,
            }),
          )
        : job.kind === 'list_templates'
          ? await listTemplates({
              store,
              tenant: message.tenant,
              reservation,
              limits: settings.limits,
              signal: controller.signal,
              onCorruptObject: settings.onCorruptObject,
              reclaim: reclaimer.reclaim,
            })
          : await executeQuery({
              store,
              tenant: message.tenant,
              query: job.query,
              nowNs: message.nowNs,
              defaultWindowSecs: settings.defaultWindowSecs,
              limits: settings.limits,
              reservation,
              ...(job.rowCap !== undefined ? { rowCap: job.rowCap } : {}),
              ...(job.format !== undefined ? { format: job.format } : {}),
              signal: controller.signal,
              onCorruptObject: settings.onCorruptObject,
              reclaim: reclaimer.reclaim,
              footers: footers.cache,
              ...(helpers !== undefined ? { helpers } : {}),
              ...(message.stream === true
                ? {
                    stream: {
                      sink: lineSink(message.id, controller.signal),
                      ...(settings.streamBatchBytes !== undefined ? { batchBytes: settings.streamBatchBytes } : {}),
                    },
                  }
                : {}),
            });
  } catch {
    // A bug or an unexpected I/O failure: scrubbed, and everything this query held is released.
    outcome = INTERNAL_FAILURE;
  } finally {
    running.delete(message.id);
    untaken.delete(message.id);
    // A query that failed on its own share before its lend was answered no longer waits for the answer.
    lends.delete(message.id);
  }
  // A query that lent a share peaked where the sum of its slots did, as either side saw it.
  const peakBytes = Math.max(raw.peakBytes, lent.peakBytes);
  if (outcome.status === 'ok') {
    const crossed: CeilingCrossed[] = [...(outcome.crossed ?? [])];
    const observed = settings.observedQueryBytes;
    if (observed !== undefined && peakBytes > observed)
      crossed.push({ limit: 'max_query_memory_bytes', value: peakBytes, ceiling: observed });
    // The body stays reserved (under this query's id) until the main thread has sent it and releases it.
    const body = new Uint8Array(outcome.body.buffer, outcome.body.byteOffset, outcome.body.byteLength);
    const copy = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice();
    post(
      {
        type: 'done',
        id: message.id,
        status: 'ok',
        body: copy,
        rows: outcome.rows,
        rowGroupsScanned: outcome.stats.row_groups_scanned,
        rowGroupsPruned: outcome.stats.row_groups_pruned,
        peakBytes,
        corrupt: outcome.corrupt,
        crossed,
        ...(outcome.streamedBytes !== undefined ? { streamedBytes: outcome.streamedBytes } : {}),
      },
      [copy.buffer as ArrayBuffer],
    );
    return;
  }
  reservation.releaseAll();
  const { corrupt } = outcome;
  if (outcome.error.kind === 'cancelled') post({ type: 'done', id: message.id, status: 'cancelled', corrupt });
  else {
    // A helper that died fails the query as a dying worker fails its own (the engine only saw an internal failure);
    // an error the coordinator met on its own files is its own answer.
    const error =
      lent.loss !== undefined && outcome.error.kind === 'internal' ? lent.loss : toQueryError(outcome.error);
    post({ type: 'done', id: message.id, status: 'error', error, peakBytes, corrupt });
  }
}

/**
 * The coordinating side of a parallel scan (docs/design/query-governance.md, "Parallel scans"): a lend goes to
 * the main thread, which hands the share to an idle helper (or answers `refused`); the query's stop settles it
 * at once as cancelled (the main thread stops the helper).
 */
function lendingHelpers(
  id: string,
  query: Query,
  raw: PoolReservation,
  signal: AbortSignal,
  lent: { loss?: QueryError; peakBytes: number },
): ScanHelpers {
  return {
    lend(files) {
      return new Promise<LendResult>((resolve) => {
        const onAbort = (): void => {
          lends.delete(id);
          resolve({ status: 'failed', failure: { kind: 'cancelled' } });
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        lends.set(id, (answer) => {
          lends.delete(id);
          signal.removeEventListener('abort', onAbort);
          if (answer.status === 'refused') return resolve(answer);
          if (answer.status === 'failed') return resolve(answer);
          if (answer.status === 'lost') {
            lent.loss = answer.error;
            return resolve({ status: 'failed', failure: { kind: 'internal', message: answer.error.message } });
          }
          lent.peakBytes = answer.peakBytes;
          resolve({ status: 'ok', partial: deserialize(Buffer.from(answer.partial)) as PartialScan });
        });
        post({ type: 'lend', id, query, files, group: raw.openGroup() });
      });
    },
  };
}

/** A partial as one transferable buffer of its own (a serializer's buffer may be a view into a larger one). */
function partialBytes(partial: PartialScan): ArrayBuffer {
  const bytes = serialize(partial);
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer)
    return bytes.buffer;
  const own = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(own).set(bytes);
  return own;
}

/**
 * The helper side: scans the share under its own slot in the query's group, answers with the partial, and keeps
 * the partial's reservation until the coordinator is done (`release_share`).
 */
async function runShare(message: ShareRequest): Promise<void> {
  const controller = new AbortController();
  running.set(message.id, controller);
  watch.reset();
  const raw = pool.createQuery(message.id, {
    maxBytes: settings.maxQueryBytes,
    leaveFreeBytes: message.leaveFreeBytes,
    group: message.group,
  });
  const reservation = relievingReservation(raw, footers.relieve);
  let outcome: ShareOutcome;
  try {
    outcome =
      message.query.kind !== 'logs'
        ? { status: 'error', error: { kind: 'internal', message: 'a scan share must be a log query' }, corrupt: [] }
        : await executeScanShare({
            store,
            tenant: message.tenant,
            query: message.query,
            files: message.files,
            nowNs: message.nowNs,
            defaultWindowSecs: settings.defaultWindowSecs,
            limits: settings.limits,
            reservation,
            signal: controller.signal,
            onCorruptObject: settings.onCorruptObject,
            reclaim: reclaimer.reclaim,
            footers: footers.cache,
          });
  } catch {
    outcome = INTERNAL_FAILURE;
  } finally {
    running.delete(message.id);
  }
  if (outcome.status === 'ok') {
    shares.set(message.id, reservation);
    // The partial's reservation stays held: it covered the table's objects, and now covers the bytes, which are
    // smaller (no object headers), then the coordinator's copy of the table.
    const partial = partialBytes(outcome.partial);
    post({ type: 'share_done', id: message.id, answer: { status: 'ok', partial, peakBytes: raw.peakBytes } }, [
      partial,
    ]);
    return;
  }
  reservation.releaseAll();
  post({
    type: 'share_done',
    id: message.id,
    answer: outcome.error.kind === 'cancelled' ? { status: 'cancelled' } : { status: 'failed', failure: outcome.error },
  });
}

port.on('message', (message: ToQueryWorker) => {
  if (message.type === 'taken') {
    const pending = untaken.get(message.id);
    const batch = pending?.get(message.seq);
    pending?.delete(message.seq);
    batch?.resolve();
    return;
  }
  if (message.type === 'cancel') {
    const controller = running.get(message.id);
    if (controller === undefined) return;
    // Taken before the abort settles the pending calls: what the query was waiting on when the stop came.
    post({ type: 'stopping', id: message.id, storage: watch.report() });
    controller.abort();
    return;
  }
  if (message.type === 'lent') {
    lends.get(message.id)?.(message.answer);
    return;
  }
  if (message.type === 'release_share') {
    shares.get(message.id)?.releaseAll();
    shares.delete(message.id);
    post({ type: 'share_released', id: message.id });
    return;
  }
  if (message.type === 'scan_share') {
    void runShare(message).finally(collectGarbage);
    return;
  }
  void run(message).finally(collectGarbage);
});

/**
 * The idle point after each query, once its result has been posted. V8 otherwise keeps a worker's heap at the
 * high-water mark of its largest query, and N idle workers holding N high-water marks is memory the pool never
 * sees (measured under a 1.5 GiB cgroup: RSS climbed past the limit with the pool well inside it). A full
 * collection after every query made the next one slower, though, so it runs only above the reclaimer's idle
 * threshold (docs/design/query-governance.md, "Idle collection").
 */
function collectGarbage(): void {
  if (running.size !== 0) return;
  let collected = reclaimer.idle(idleHeldBytes());
  // What a collection cannot give back (wasm linear memory never shrinks, fragmented heap pages) goes back by
  // replacing the worker; the main thread decides, so a job already dispatched here is never lost. The figure
  // counts only after a collection: uncollected garbage is no reason to replace a worker.
  const over = (): boolean => {
    const heap = getHeapStatistics();
    return heap.total_heap_size + heap.external_memory > settings.recycleBytes;
  };
  if (over() && !collected) {
    gc?.();
    reclaimer.rebase(idleHeldBytes());
    collected = true;
  }
  if (collected && over()) post({ type: 'recycle' });
}
post({ type: 'ready' });
