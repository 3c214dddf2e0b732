/**
 * @module corrupt-objects
 * What a query does when it meets a corrupt or foreign object (`querier.on_corrupt_object`): under `fail` the
 * query fails `storage_corrupt` naming the key; under `skip` the object is left out (a manifest: its whole
 * partition; a data file: the file, or the rest of it from the row group that failed) and the response says so.
 * Either way every object met is remembered, so the querier can log and count it.
 */
import type { CorruptReason } from '@sluice/storage';
import { StorageCorruptError } from '@sluice/storage';
import { QueryAbort } from './failures.js';

/** `querier.on_corrupt_object`. */
export type CorruptObjectPolicy = 'fail' | 'skip';

/** A corrupt or foreign object a query met. */
export interface CorruptObject {
  readonly key: string;
  readonly reason: CorruptReason;
}

/**
 * Most skipped objects a response names in `stats.skipped_objects` (the first ones met); `stats.objects_skipped`
 * counts them all. Enough to find the damage, small enough that a badly damaged window cannot bloat the body.
 */
export const MAX_SKIPPED_OBJECTS_LISTED = 10;

/** One query's ledger of corrupt objects. */
export interface CorruptObjects {
  readonly policy: CorruptObjectPolicy;
  /** Every corrupt object met so far, in the order met, each key once. */
  readonly met: readonly CorruptObject[];
  /**
   * Meets `key`: under `fail` throws the `storage_corrupt` failure; under `skip` returns, and the caller leaves
   * the object out.
   */
  meet(key: string, reason: CorruptReason): void;
  /**
   * For a `catch`: a {@link StorageCorruptError} is met (see {@link CorruptObjects.meet}) and `true` is returned
   * (skip: leave the object out); anything else is not the ledger's and gives `false` (rethrow it).
   */
  absorb(e: unknown): boolean;
}

/** A fresh ledger for one query. */
export function createCorruptObjects(policy: CorruptObjectPolicy = 'fail'): CorruptObjects {
  const met: CorruptObject[] = [];
  const seen = new Set<string>();
  const meet = (key: string, reason: CorruptReason): void => {
    if (!seen.has(key)) {
      seen.add(key);
      met.push({ key, reason });
    }
    if (policy === 'fail') throw new QueryAbort({ kind: 'storage_corrupt', key, reason });
  };
  return {
    policy,
    met,
    meet,
    absorb(e) {
      if (!(e instanceof StorageCorruptError)) return false;
      meet(e.key, e.reason);
      return true;
    },
  };
}
