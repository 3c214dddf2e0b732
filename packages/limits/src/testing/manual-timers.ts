/**
 * @module manual-timers
 * Paused time for admission tests (timeouts are tested on paused time, never on wall-clock waits): timers fire only when a test
 * calls `advance`, in deadline order, so no test depends on the wall clock.
 */
import type { GateTimers } from '../admission-gate.js';

/** A clock and timer queue that moves only when told to. */
export class ManualTimers implements GateTimers {
  #now = 0;
  #next = 1;
  #timers = new Map<number, { at: number; callback: () => void }>();

  /** Current paused time in milliseconds. */
  now = (): number => this.#now;

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers still armed. */
  pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, firing every timer due on the way, earliest first. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      let dueId: number | undefined;
      let dueAt = Infinity;
      for (const [id, t] of this.#timers) if (t.at <= target && t.at < dueAt) [dueId, dueAt] = [id, t.at];
      if (dueId === undefined) break;
      const t = this.#timers.get(dueId);
      this.#timers.delete(dueId);
      this.#now = dueAt;
      t?.callback();
    }
    this.#now = target;
  }
}
