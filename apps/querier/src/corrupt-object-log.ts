/**
 * @module corrupt-object-log
 * The main thread's record of corrupt or foreign objects met by queries (under either `on_corrupt_object` policy):
 * each meeting is counted on `sluice.storage.corrupt_objects` (reason, seen by the querier), and logged as a warn
 * with its key and reason at most once per key per {@link CORRUPT_OBJECT_LOG_WINDOW_MS}. A dashboard polling a
 * damaged partition every few seconds would otherwise write the same line thousands of times an hour; the next
 * line after a quiet window says how many meetings went unlogged (`repeats`).
 */
import type { Meter } from '@opentelemetry/api';
import type { CorruptObject, CorruptObjectPolicy } from '@sluice/engine';
import {
  ATTR_SLUICE_STORAGE_CORRUPT_REASON,
  ATTR_SLUICE_STORAGE_SEEN_BY,
  METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS,
  SLUICE_STORAGE_SEEN_BY_VALUE_QUERIER,
  createInstrument,
  type Logger,
} from '@sluice/telemetry';

/** A key already logged is not logged again until this long after its last line: 10 minutes. */
export const CORRUPT_OBJECT_LOG_WINDOW_MS = 10 * 60 * 1000;

/**
 * Keys remembered for the window. Past it the oldest line's key is forgotten (at worst it is logged again early),
 * so a store full of damaged objects cannot grow this without bound.
 */
export const CORRUPT_OBJECT_LOG_KEYS = 4096;

/** Options of {@link createCorruptObjectLog}. */
export interface CorruptObjectLogOptions {
  readonly log: Logger;
  /** The meter of `sluice.storage.corrupt_objects`; absent = no metric (tests, embedders without telemetry). */
  readonly meter?: Meter;
  /** `querier.on_corrupt_object`, for the log line. */
  readonly policy: CorruptObjectPolicy;
  /** Millisecond clock (injectable for tests). Default `performance.now`. */
  readonly now?: () => number;
}

/** Who met the objects, for the log line. */
export interface CorruptObjectContext {
  readonly query: string;
  readonly tenant: string;
}

/** Records meetings. */
export interface CorruptObjectLog {
  /** One query met these objects (each counted once for that query). */
  met(objects: readonly CorruptObject[], context: CorruptObjectContext): void;
}

/** Creates the log. */
export function createCorruptObjectLog(options: CorruptObjectLogOptions): CorruptObjectLog {
  const now = options.now ?? (() => performance.now());
  const counter =
    options.meter === undefined ? undefined : createInstrument(options.meter, METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS);
  /** Per key: when its last line was written, and the meetings since that were only counted. */
  const lines = new Map<string, { at: number; repeats: number }>();
  return {
    met(objects, context) {
      for (const { key, reason } of objects) {
        counter?.add(1, {
          [ATTR_SLUICE_STORAGE_CORRUPT_REASON]: reason,
          [ATTR_SLUICE_STORAGE_SEEN_BY]: SLUICE_STORAGE_SEEN_BY_VALUE_QUERIER,
        });
        const at = now();
        const last = lines.get(key);
        if (last !== undefined && at - last.at < CORRUPT_OBJECT_LOG_WINDOW_MS) {
          last.repeats++;
          continue;
        }
        lines.delete(key); // re-inserted last: the map stays in order of lines written
        lines.set(key, { at, repeats: 0 });
        if (lines.size > CORRUPT_OBJECT_LOG_KEYS) lines.delete(lines.keys().next().value as string);
        options.log.warn('corrupt object in storage', {
          key,
          reason,
          on_corrupt_object: options.policy,
          query: context.query,
          tenant: context.tenant,
          ...(last !== undefined ? { repeats: last.repeats } : {}),
        });
      }
    },
  };
}
