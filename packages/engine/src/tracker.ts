/**
 * @module tracker
 * Bookkeeping over a {@link QueryReservation}: every grow the engine makes goes through {@link MemoryTracker}, so a
 * failure path can give back exactly what the engine took (and nothing the caller took), and a refusal unwinds as a
 * typed {@link QueryAbort}.
 */
import type { QueryReservation } from '@sluice/limits';
import { limitErrorFromRefusal } from '@sluice/limits';
import { QueryAbort } from './failures.js';

/** Reserve-before-retain helper: grows throw a typed failure on refusal; `releaseAll` gives back everything held. */
export class MemoryTracker {
  #held = 0;
  #peak = 0;
  constructor(readonly reservation: QueryReservation) {}

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
