/**
 * @module query-reservation
 * One query's view of the shared pool (a per-query wrapper): every grow and shrink goes to the
 * pool total and to this query's slot in the same call, so a refusal can be classified from what the query held,
 * and the main thread can see (and, after a worker's death, release) what each query holds.
 */
import { GROW_OK, queryCeilingRefusal, refusal } from './grow-outcome.js';
import type { GrowOutcome, GrowRefused } from './grow-outcome.js';
import {
  GUARD_BUSY,
  GUARD_PAUSED,
  H_PEAK,
  H_RESERVED,
  S_GROUP,
  S_GROUP_PEAK,
  S_GUARD,
  S_HELD,
  S_OWNER,
  S_PEAK,
  checkBytes,
  fenceMark,
  releaseSlot,
  slotWord,
} from './pool-layout.js';
import type { PoolCells } from './pool-layout.js';

/**
 * A query's reservation on the shared pool. Reserve before retain: call `tryGrow` before holding bytes, `shrink`
 * when dropping them, `releaseAll` when the query ends (success, failure, cancellation). Used from one thread.
 */
export interface QueryReservation {
  /** The query id given to `createQuery`. */
  readonly queryId: string;
  /** Bytes this query holds now (0 once released). */
  readonly held: number;
  /** The most recent refusal, overwritten by a later one; `undefined` if none. */
  readonly lastRefusal: GrowRefused | undefined;
  /** True after `releaseAll` (or after the main thread released this query's slot). */
  readonly released: boolean;
  /**
   * Reserves `bytes` more if the query stays within its own ceiling (when it has one) and the pool has room; never
   * waits. 0 bytes always succeeds. A request past the query's ceiling is refused before the pool is consulted.
   * @throws RangeError when `bytes` is not a non-negative safe integer; Error when used after release.
   */
  tryGrow(bytes: number): GrowOutcome;
  /**
   * Gives back `bytes` of what this query holds.
   * @throws RangeError when `bytes` is negative, not an integer, or more than `held`.
   */
  shrink(bytes: number): void;
  /** Releases everything this query holds and frees its slot. Idempotent. @returns the bytes released. */
  releaseAll(): number;
}

/**
 * One query's group of slots (docs/design/query-governance.md, "Parallel scans"): a query whose scan is shared
 * with helper workers holds one slot per worker, all carrying the leading slot's ticket. Structured-clone-able:
 * the coordinating worker posts it to its helpers, which join it with `createQuery(id, { group })`.
 */
export interface QueryGroup {
  readonly kind: 'sluice.query_group';
  readonly ticket: bigint;
}

/** A reservation as the pool creates it: a {@link QueryReservation} that can share its query with helpers. */
export interface PoolReservation extends QueryReservation {
  /**
   * Makes this reservation the leading slot of a query group and returns the group for helpers to join. From
   * then on every grow of any member checks the query ceiling and classifies refusals on the group's summed
   * held bytes. Idempotent.
   */
  openGroup(): QueryGroup;
  /**
   * The most this query held at once as this slot saw it: the slot's own peak, or for a group member the largest
   * group sum seen at its own grows (the query's peak is the largest of its members' figures).
   */
  readonly peakBytes: number;
}

/**
 * Test seam (a deterministic pause hook): when set, runs in this thread after a grow has read the
 * pool total and before its compare-exchange, so a test can move the total in between and prove the lost race is
 * retried. Per thread (module state); never set in production.
 */
let beforeGrowCommit: (() => void) | null = null;

/** Sets or clears {@link beforeGrowCommit}; exported to tests through `@sluice/limits/testing`. */
export function setBeforeGrowCommitHook(hook: (() => void) | null): void {
  beforeGrowCommit = hook;
}

/**
 * Test seam: when set, runs in this thread after a grow has committed the pool total and before it adds to the
 * slot — where a thread that dies leaves the two apart (what `repairTotal` mends). Never set in production.
 */
let afterTotalCommit: (() => void) | null = null;

/** Sets or clears {@link afterTotalCommit}; exported to tests through `@sluice/limits/testing`. */
export function setAfterTotalCommitHook(hook: (() => void) | null): void {
  afterTotalCommit = hook;
}

/**
 * Implementation: owns slot `slot` while the slot carries `ticket`. The per-query ceiling lives here, not in the
 * shared buffer: only `tryGrow` reads it, and that runs in the thread that created this object, the one thread
 * that grows this slot.
 */
export class SlotReservation implements PoolReservation {
  readonly queryId: string;
  #cells: PoolCells;
  #slot: number;
  #ticket: bigint;
  #maxBytes: bigint | undefined;
  /** The pool total this query may grow to: the size less what it must leave free for others. */
  #limit: bigint;
  #released = false;
  #lastRefusal: GrowRefused | undefined;
  /** The group ticket when this slot shares its query (0n: alone). */
  #group: bigint;

  constructor(
    cells: PoolCells,
    slot: number,
    ticket: bigint,
    queryId: string,
    maxBytes: number | undefined,
    leaveFreeBytes = 0,
    group = 0n,
  ) {
    this.#group = group;
    this.#cells = cells;
    this.#limit = cells.size - BigInt(leaveFreeBytes);
    this.#slot = slot;
    this.#ticket = ticket;
    this.queryId = queryId;
    // A ceiling at the pool size is no ceiling of its own: such a query is refused by the pool rule, in its words.
    this.#maxBytes = maxBytes === undefined || BigInt(maxBytes) >= cells.size ? undefined : BigInt(maxBytes);
  }

  get held(): number {
    if (!this.#owned()) return 0;
    return Number(Atomics.load(this.#cells.words, slotWord(this.#slot, S_HELD)));
  }

  get peakBytes(): number {
    if (!this.#owned()) return 0;
    const field = this.#group === 0n ? S_PEAK : S_GROUP_PEAK;
    return Number(Atomics.load(this.#cells.words, slotWord(this.#slot, field)));
  }

  openGroup(): QueryGroup {
    this.#assertOwned('openGroup');
    if (this.#group === 0n) {
      const { words } = this.#cells;
      this.#group = this.#ticket;
      // Alone until now, so the group's peak so far is this slot's own.
      Atomics.store(words, slotWord(this.#slot, S_GROUP_PEAK), Atomics.load(words, slotWord(this.#slot, S_PEAK)));
      Atomics.store(words, slotWord(this.#slot, S_GROUP), this.#ticket);
    }
    return { kind: 'sluice.query_group', ticket: this.#group };
  }

  /** Bytes held now by every live slot of this slot's group (this slot's own when it is alone). */
  #queryHeld(): bigint {
    const { words, slots } = this.#cells;
    if (this.#group === 0n) return Atomics.load(words, slotWord(this.#slot, S_HELD));
    let sum = 0n;
    for (let slot = 0; slot < slots; slot++) {
      if (Atomics.load(words, slotWord(slot, S_OWNER)) <= 0n) continue;
      if (Atomics.load(words, slotWord(slot, S_GROUP)) !== this.#group) continue;
      sum += Atomics.load(words, slotWord(slot, S_HELD));
    }
    return sum;
  }

  get lastRefusal(): GrowRefused | undefined {
    return this.#lastRefusal;
  }

  get released(): boolean {
    return !this.#owned();
  }

  tryGrow(bytes: number): GrowOutcome {
    checkBytes(bytes, 'tryGrow bytes');
    this.#assertOwned('tryGrow');
    if (bytes === 0) return GROW_OK;
    this.#enter('tryGrow');
    try {
      return this.#grow(bytes);
    } finally {
      this.#leave();
    }
  }

  #grow(bytes: number): GrowOutcome {
    const { words, size } = this.#cells;
    const add = BigInt(bytes);
    // A query whose scan is shared is one query: its ceiling and the 422/503 rule see the sum of its slots.
    const queryHeld = this.#queryHeld();
    if (this.#maxBytes !== undefined) {
      // Checked before the pool total is read, so a query over its own ceiling never moves the total.
      const held = queryHeld;
      if (held + add > this.#maxBytes) {
        const refused = queryCeilingRefusal(Number(held), bytes, Number(size), Number(this.#maxBytes));
        this.#lastRefusal = refused;
        return refused;
      }
    }
    // Greedy pool: first come, first served, refused only on the process total.
    let total: bigint;
    for (;;) {
      const current = Atomics.load(words, H_RESERVED);
      const next = current + add;
      if (next > this.#limit) {
        const refused = refusal(Number(queryHeld), bytes, Number(size));
        this.#lastRefusal = refused;
        return refused;
      }
      beforeGrowCommit?.();
      if (Atomics.compareExchange(words, H_RESERVED, current, next) === current) {
        total = next;
        break;
      }
    }
    afterTotalCommit?.();
    // The total first, then the slot: the total never reads below the sum of the slots.
    const held = Atomics.add(words, slotWord(this.#slot, S_HELD), add) + add;
    let groupHeld = queryHeld + add;
    if (this.#group !== 0n && this.#maxBytes !== undefined) {
      // The other members grow on other threads, so one may have committed between this slot's check and its
      // commit. Read the sum again now that these bytes are visible to them, and undo a grow that took the query
      // over its ceiling: of two racing members both may undo, neither passes the ceiling.
      groupHeld = this.#queryHeld();
      if (groupHeld > this.#maxBytes) {
        Atomics.sub(words, slotWord(this.#slot, S_HELD), add);
        Atomics.sub(words, H_RESERVED, add);
        const refused = queryCeilingRefusal(Number(groupHeld - add), bytes, Number(size), Number(this.#maxBytes));
        this.#lastRefusal = refused;
        return refused;
      }
    }
    // The pool's high-water mark (sluice.budget.peak): one load on a grow that sets no new peak.
    for (let peak = Atomics.load(words, H_PEAK); total > peak;) {
      const seen = Atomics.compareExchange(words, H_PEAK, peak, total);
      if (seen === peak) break;
      peak = seen;
    }
    const peakIndex = slotWord(this.#slot, S_PEAK);
    for (let peak = Atomics.load(words, peakIndex); held > peak;) {
      const seen = Atomics.compareExchange(words, peakIndex, peak, held);
      if (seen === peak) break;
      peak = seen;
    }
    if (this.#group !== 0n) {
      // Only this thread writes this slot's group peak.
      const groupPeak = slotWord(this.#slot, S_GROUP_PEAK);
      if (groupHeld > Atomics.load(words, groupPeak)) Atomics.store(words, groupPeak, groupHeld);
    }
    return GROW_OK;
  }

  shrink(bytes: number): void {
    checkBytes(bytes, 'shrink bytes');
    this.#assertOwned('shrink');
    if (bytes === 0) return;
    this.#enter('shrink');
    try {
      this.#shrink(bytes);
    } finally {
      this.#leave();
    }
  }

  #shrink(bytes: number): void {
    const { words } = this.#cells;
    const heldIndex = slotWord(this.#slot, S_HELD);
    const held = Atomics.load(words, heldIndex);
    const sub = BigInt(bytes);
    if (sub > held)
      throw new RangeError(`shrink of ${bytes} bytes exceeds the ${held} bytes query ${this.queryId} holds`);
    // The slot first, then the total (same ordering rule as tryGrow).
    Atomics.sub(words, heldIndex, sub);
    Atomics.sub(words, H_RESERVED, sub);
  }

  releaseAll(): number {
    if (this.#released) return 0;
    // Released by the main thread already (nothing to do), or fenced: the main thread releases it once this thread
    // has stopped (releaseThread).
    const owned = this.#owned();
    this.#released = true;
    if (!owned || !this.#tryEnter()) return 0;
    const released = releaseSlot(this.#cells, this.#slot, this.#ticket);
    if (released === null) this.#leave();
    return released ?? 0;
  }

  /** Enters an update (waiting out a repair of the total); false when the slot is fenced (this thread is stopping). */
  #tryEnter(): boolean {
    const { words } = this.#cells;
    const guard = slotWord(this.#slot, S_GUARD);
    for (;;) {
      const seen = Atomics.compareExchange(words, guard, 0n, GUARD_BUSY);
      if (seen === 0n) return true;
      if (seen < 0n) {
        if (seen === fenceMark(this.#ticket)) return false;
        // A fence meant for this slot's previous owner landed after it was released: stale, cleared here.
        Atomics.compareExchange(words, guard, seen, 0n);
        continue;
      }
      if (seen !== GUARD_PAUSED) return false;
      // The main thread is repairing the total (a few microseconds); Atomics.wait is allowed in workers, and on
      // the main thread, where a repair never runs concurrently, the slot is never paused.
      Atomics.wait(words, guard, GUARD_PAUSED, 1);
    }
  }

  #enter(op: string): void {
    if (!this.#tryEnter()) throw new Error(`${op} on query ${this.queryId} after its thread was fenced for stopping`);
  }

  #leave(): void {
    Atomics.store(this.#cells.words, slotWord(this.#slot, S_GUARD), 0n);
  }

  #owned(): boolean {
    return !this.#released && Atomics.load(this.#cells.words, slotWord(this.#slot, S_OWNER)) === this.#ticket;
  }

  #assertOwned(op: string): void {
    if (!this.#owned()) throw new Error(`${op} on query ${this.queryId} after its reservation was released`);
  }
}
