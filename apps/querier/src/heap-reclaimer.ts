/**
 * @module heap-reclaimer
 * Keeps a query worker's V8 heap close to what the shared pool accounts for. The engine reserves each row group's
 * decoded columns before decoding them and gives the reservation back when it moves on, but the columns stay in
 * the heap as garbage until V8 collects — and V8 lets garbage grow to a multiple of the live set. With several
 * workers that slack multiplies: measured under a 1.5 GiB cgroup, four workers' garbage on top of a full pool
 * got the process OOM-killed after ~5 minutes. So before each decode the worker compares its used heap with the
 * pool's count for the query and, past a slack, runs a full collection.
 */
import type { HeapReclaimer } from '@sluice/engine';

/** What the reclaimer needs from the runtime (injected so the policy is testable without V8). */
export interface HeapReclaimerOptions {
  /** A full, synchronous collection. */
  collect(): void;
  /** Bytes in use in this isolate's heap now (V8 `used_heap_size`; includes uncollected garbage). */
  usedHeapBytes(): number;
  /** Garbage allowed beyond what the pool holds before a collection is forced. */
  readonly slackBytes: number;
}

/** A {@link HeapReclaimer} plus what it has done, for the worker's idle point and for tests. */
export interface HeapReclaimerState {
  readonly reclaim: HeapReclaimer;
  /** Full collections this reclaimer forced. */
  readonly collections: number;
  /** Re-measures the live baseline after a collection made elsewhere (the worker's idle GC), with `heldBytes` still on the pool. */
  rebase(heldBytes: number): void;
  /**
   * The idle point after a query: collects only when the used heap exceeds the worker's own floor (what survived
   * its first collection) plus `heldBytes` (what the worker still holds on the pool between queries, its footer
   * cache) plus the slack. Under that threshold the garbage is left for V8: a forced full collection after every
   * query made the next query slower (docs/design/query-governance.md, "Idle collection"). Returns whether it
   * collected; a collection re-measures the baseline.
   */
  idle(heldBytes: number): boolean;
}

/**
 * Creates the policy: collect when `used > held + unaccounted + slack`, where `unaccounted` is what survived the
 * last collection beyond the pool's count (the worker's own code and caches, estimator error). Tracking it keeps a
 * heap whose live set is simply larger than the estimate from being collected before every row group.
 */
export function createHeapReclaimer(options: HeapReclaimerOptions): HeapReclaimerState {
  const floor = Math.max(0, options.usedHeapBytes());
  let unaccounted = floor;
  let collections = 0;
  const rebase = (heldBytes: number): void => {
    unaccounted = Math.max(0, options.usedHeapBytes() - heldBytes);
  };
  return {
    reclaim(heldBytes) {
      if (options.usedHeapBytes() <= heldBytes + unaccounted + options.slackBytes) return;
      options.collect();
      collections++;
      rebase(heldBytes);
    },
    get collections() {
      return collections;
    },
    rebase,
    idle(heldBytes) {
      if (options.usedHeapBytes() <= floor + heldBytes + options.slackBytes) return false;
      options.collect();
      collections++;
      rebase(heldBytes);
      return true;
    },
  };
}
