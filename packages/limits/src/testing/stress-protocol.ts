/**
 * @module stress-protocol
 * What the pool concurrency test and its worker share: the generated operations, the `workerData` shape and the
 * control words (Int32Array: 0 = round released by the main thread, 1 = workers arrived, 2 = failure flag).
 */
import type { SharedMemoryPoolHandle } from '../memory-pool.js';

/** One generated operation on query `q` of this worker. */
export type StressOp =
  | { readonly op: 'grow'; readonly q: number; readonly bytes: number }
  | { readonly op: 'shrink'; readonly q: number; readonly part: number }
  | { readonly op: 'release'; readonly q: number };

/** What the main thread passes in `workerData`. */
export interface StressWorkerData {
  readonly pool: SharedMemoryPoolHandle;
  readonly control: SharedArrayBuffer;
  /** Float64Array: this worker's model of held bytes per query, at index worker × queries + q. */
  readonly model: SharedArrayBuffer;
  readonly worker: number;
  readonly queries: number;
  readonly rounds: ReadonlyArray<readonly StressOp[]>;
}

export const C_ROUND = 0;
export const C_ARRIVED = 1;
export const C_FAILED = 2;

/** Query id of query `q` of worker `w`. */
export function stressQueryId(w: number, q: number): string {
  return `w${w}-q${q}`;
}
