/**
 * @module tracker
 * Bookkeeping over a {@link QueryReservation}: every grow the engine makes goes through {@link MemoryTracker}, so a
 * failure path can give back exactly what the engine took (and nothing the caller took), and a refusal unwinds as a
 * typed {@link QueryAbort}.
 */
import type { QueryReservation } from '@sluice/limits';
import { limitErrorFromRefusal } from '@sluice/limits';
import { QueryAbort } from './failures.js';

/**
 * Called before each decode with the bytes the whole query holds on the pool. What a decode leaves behind (the
 * previous row group's columns) is garbage the pool no longer counts; the query worker uses this seam to collect
 * it when its heap has grown past what the pool accounts for, so the process total tracks the pool.
 */
export type HeapReclaimer = (heldBytes: number) => void;

/** Reserve-before-retain helper: grows throw a typed failure on refusal; `releaseAll` gives back everything held. */
export class MemoryTracker {
  #held = 0;
  #peak = 0;
  constructor(
    readonly reservation: QueryReservation,
    private readonly reclaimer?: HeapReclaimer,
  ) {}

  /** Lets the owner reclaim unaccounted garbage before the next decode is reserved. */
  beforeDecode(): void {
    this.reclaimer?.(this.reservation.held);
  }

  /** Bytes the engine holds on the reservation through this tracker. */
  get held(): number {
    return this.#held;
  }

  /** Most bytes held at once through this tracker. */
  get peak(): number {
    return this.#peak;
  }

  /** Reserves `bytes` (rounded up to an integer) or throws a `query_memory_*` {@link QueryAbort}. */
  grow(bytes: number): number {
    const n = Math.max(0, Math.ceil(bytes));
    const out = this.reservation.tryGrow(n);
    if (out.status !== 'ok') throw new QueryAbort(limitErrorFromRefusal(out));
    this.#held += n;
    if (this.#held > this.#peak) this.#peak = this.#held;
    return n;
  }

  /** Gives back `bytes` previously grown. */
  shrink(bytes: number): void {
    const n = Math.min(bytes, this.#held);
    if (n <= 0) return;
    this.#held -= n;
    if (!this.reservation.released) this.reservation.shrink(Math.min(n, this.reservation.held));
  }

  /** Gives back everything held through this tracker. */
  releaseAll(): void {
    this.shrink(this.#held);
  }
}
