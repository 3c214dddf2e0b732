/**
 * @module worker-protocol
 * Messages between the querier's main thread and its query workers. The main thread parses and admits; a
 * worker lists, reads, evaluates and serializes one query at a time, reserving every byte it holds on the shared
 * pool; the serialized body comes back (transferred, not copied) with its reservation still held, and the main
 * thread releases it once the response has been sent.
 *
 * A streamed job (NDJSON) also sends `batch` messages while it runs; each batch stays reserved in the worker until
 * the main thread answers `taken` (written to the socket and drained), and the worker has at most
 * `STREAM_BATCHES_IN_FLIGHT` batches not yet taken: the flow control that keeps a slow reader from making the
 * querier buffer the result.
 */
import type { CorruptObject, CorruptObjectPolicy, LiveFile, QueryFailure, ResultFormat } from '@sluice/engine';
import type { Predicate, Query, TimeWindow } from '@sluice/query';
import type { CeilingCrossed, CeilingEnforcement, QueryGroup, SharedMemoryPoolHandle } from '@sluice/limits';
import type { StorageSettings } from '@sluice/storage';
import type { QueryError } from './query-error.js';
import type { StorageWaitReport } from './storage-watch.js';

/** Settings every query worker starts with. */
export interface QueryWorkerData {
  readonly pool: SharedMemoryPoolHandle;
  readonly storage: StorageSettings;
  readonly defaultWindowSecs: number;
  /** An idle worker whose V8 heap plus external (wasm, ArrayBuffer) memory still exceeds this after a full GC asks to be replaced. */
  readonly recycleBytes: number;
  /** The most one query may hold on the pool: `max_query_memory_bytes` as resolved, or what observe mode leaves. */
  readonly maxQueryBytes: number;
  /**
   * Observe mode (general lane): `max_query_memory_bytes` as resolved, not enforced by the reservation; a query
   * whose peak goes past it is reported `crossed`. Absent: nothing observed (enforce mode, the light lane).
   */
  readonly observedQueryBytes?: number;
  /** Test seam: the NDJSON batch size in bytes (default the engine's `STREAM_BATCH_BYTES`). */
  readonly streamBatchBytes?: number;
  /** Uncollected garbage a worker's heap may carry beyond what the pool holds for its query before it forces a full GC. */
  readonly heapSlackBytes: number;
  /** This worker's footer cache capacity: `footer_cache_bytes` capped at pool / (8 x max_concurrent_queries); 0 = off. */
  readonly footerCacheBytes: number;
  /** `querier.limits.max_open_files`: data files this worker keeps open (local backend); 0 = none. */
  readonly maxOpenFiles: number;
  /** `querier.on_corrupt_object`. */
  readonly onCorruptObject: CorruptObjectPolicy;
  readonly limits: {
    readonly defaultRows: number;
    readonly maxRows: number;
    readonly maxListedObjects: number;
    readonly maxFiles: number;
    readonly maxResultBytes: number;
    /** `querier.limits.enforcement` (default `enforce`). */
    readonly enforcement?: CeilingEnforcement;
  };
}

/**
 * One poll of a live tail (docs/design/query-governance.md, "Live tail"): the records of the files of `partitions`
 * that are not in `read`, streamed; the trailer names the files it read (see `pollTail` in @sluice/engine).
 */
export interface TailPollJob {
  readonly kind: 'tail_poll';
  readonly predicate: Predicate;
  /** The statement's `project` keys; absent = whole records. */
  readonly projectKeys?: readonly string[];
  readonly partitions: TimeWindow;
  readonly read: readonly string[];
  /** Records older than this are not sent (the first poll's look-back); `null` = every record of a new file. */
  readonly emitFromNs: bigint | null;
}

/** What a job asks for. */
export type QueryJobKind =
  | {
      readonly kind: 'query';
      readonly query: Query;
      readonly rowCap?: number;
      /** The body's format: JSON (default) or an Arrow IPC stream (a log query, not streamed). */
      readonly format?: ResultFormat;
    }
  | { readonly kind: 'list_templates' }
  | TailPollJob;

/** A helper's share of one query's scan: the coordinator's request, completed by the main thread. */
export interface ShareRequest {
  readonly type: 'scan_share';
  readonly id: string;
  readonly tenant: string;
  readonly nowNs: bigint;
  readonly query: Query;
  readonly files: readonly LiveFile[];
  readonly group: QueryGroup;
  readonly leaveFreeBytes: number;
}

/**
 * How a lend ended, as the coordinating worker hears it: no helper was free (`refused`: it scans the files
 * itself), the helper's partial with the peak the query's group reached as the helper saw it, the helper's
 * failure (which fails the query), or the helper's death (`lost`: the query fails with `error`).
 */
export type LendAnswer =
  | { readonly status: 'refused' }
  /**
   * `partial`: the helper's `PartialScan` (`@sluice/engine`), serialized (`node:v8`) into a buffer that is transferred, not
   * copied, helper → main → coordinator, so the main thread relays bytes and never builds the table's objects.
   */
  | { readonly status: 'ok'; readonly partial: ArrayBuffer; readonly peakBytes: number }
  | { readonly status: 'failed'; readonly failure: QueryFailure }
  | { readonly status: 'lost'; readonly error: QueryError };

/** Main → worker. */
export type ToQueryWorker =
  | {
      readonly type: 'run';
      readonly id: string;
      readonly tenant: string;
      readonly nowNs: bigint;
      readonly job: QueryJobKind;
      /** Pool bytes this job must leave free for others (the light lane's share; 0 in the light lane). */
      readonly leaveFreeBytes: number;
      /** Stream the result as NDJSON `batch` messages (a log query); the `done` body is then the trailer line. */
      readonly stream?: boolean;
      /** Helper workers exist: an aggregation may ask to lend a share of its scan (`lend`). */
      readonly mayLend?: boolean;
    }
  | { readonly type: 'cancel'; readonly id: string }
  /** To a helper worker: scan `files` of query `id` under a slot joined to `group` (docs/design/query-governance.md, "Parallel scans"). */
  | ShareRequest
  /** To a helper worker: the coordinator of query `id` is done; give back the share's reservation. */
  | { readonly type: 'release_share'; readonly id: string }
  /** To a coordinating worker: the answer to its `lend`. */
  | { readonly type: 'lent'; readonly id: string; readonly answer: LendAnswer }
  /** Batch `seq` of job `id` has been written to the client and drained: the worker may drop it. */
  | { readonly type: 'taken'; readonly id: string; readonly seq: number };

/**
 * Worker → main. On `ok` the body's reservation is still held under `id` until the main thread releases it. Every
 * `done` carries the corrupt objects the query met (for the main thread's log and metric).
 */
export type FromQueryWorker =
  | { readonly type: 'ready' }
  /** Idle and over `recycleBytes` after a full GC: the pool replaces this worker unless a job is already on its way. */
  | { readonly type: 'recycle' }
  /**
   * Sent the moment a `cancel` arrives, before the query unwinds: its storage account at the stop (so it arrives
   * even when the worker is then terminated for not yielding).
   */
  | { readonly type: 'stopping'; readonly id: string; readonly storage: StorageWaitReport }
  /** A coordinating worker offers `files` of its query `id` to a helper (answered by `lent`). */
  | {
      readonly type: 'lend';
      readonly id: string;
      readonly query: Query;
      readonly files: readonly LiveFile[];
      readonly group: QueryGroup;
    }
  /** A helper gave back its share's reservation after `release_share`: it holds nothing of query `id`. */
  | { readonly type: 'share_released'; readonly id: string }
  /** A helper's share is done (its reservation stays held until `release_share` on `ok`). */
  | { readonly type: 'share_done'; readonly id: string; readonly answer: LendAnswer | { readonly status: 'cancelled' } }
  /** One batch of NDJSON lines of a streamed job (transferred); reserved in the worker until `taken`. */
  | { readonly type: 'batch'; readonly id: string; readonly seq: number; readonly batch: Uint8Array }
  | {
      readonly type: 'done';
      readonly id: string;
      readonly status: 'ok';
      readonly body: Uint8Array;
      readonly rows: number;
      readonly rowGroupsScanned: number;
      readonly rowGroupsPruned: number;
      /** The most this query held on the pool at once. */
      readonly peakBytes: number;
      readonly corrupt: readonly CorruptObject[];
      /** Observe mode: the result ceilings the query went past (empty otherwise). */
      readonly crossed: readonly CeilingCrossed[];
      /** A streamed job: bytes of the batches sent before this trailer. */
      readonly streamedBytes?: number;
    }
  | {
      readonly type: 'done';
      readonly id: string;
      readonly status: 'error';
      readonly error: QueryError;
      readonly peakBytes: number;
      readonly corrupt: readonly CorruptObject[];
    }
  | {
      readonly type: 'done';
      readonly id: string;
      readonly status: 'cancelled';
      readonly corrupt: readonly CorruptObject[];
    };
