/**
 * @module worker-protocol
 * Messages between the querier's main thread and its query workers. The main thread parses and admits; a
 * worker lists, reads, evaluates and serializes one query at a time, reserving every byte it holds on the shared
 * pool; the serialized body comes back (transferred, not copied) with its reservation still held, and the main
 * thread releases it once the response has been sent.
 */
import type { CorruptObject, CorruptObjectPolicy } from '@sluice/engine';
import type { Query } from '@sluice/query';
import type { SharedMemoryPoolHandle } from '@sluice/limits';
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
  /** `querier.limits.max_query_memory_bytes` as resolved: the most one query may hold on the pool. */
  readonly maxQueryBytes: number;
  /** Uncollected garbage a worker's heap may carry beyond what the pool holds for its query before it forces a full GC. */
  readonly heapSlackBytes: number;
  /** `querier.on_corrupt_object`. */
  readonly onCorruptObject: CorruptObjectPolicy;
  readonly limits: {
    readonly defaultRows: number;
    readonly maxRows: number;
    readonly maxListedObjects: number;
    readonly maxFiles: number;
    readonly maxResultBytes: number;
  };
}

/** What a job asks for. */
export type QueryJobKind =
  { readonly kind: 'query'; readonly query: Query; readonly rowCap?: number } | { readonly kind: 'list_templates' };

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
    }
  | { readonly type: 'cancel'; readonly id: string };

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
