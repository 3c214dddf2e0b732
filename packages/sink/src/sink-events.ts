/**
 * @module sink-events
 * What the sink reports while it runs. The receiver forwards these from its sink worker to the composition
 * root, which turns them into metrics and log lines.
 */
import type { WalPosition } from '@sluice/wal';

/** Flush triggers (values of `sluice.sink.flush.trigger`). */
export type FlushTrigger = 'size' | 'age' | 'interval' | 'ceiling' | 'shutdown';

/** One event of a running sink. */
export type SinkEvent =
  /** The WAL present at startup has been consumed (`exports` frames were replayed). */
  | { readonly type: 'replayed'; readonly exports: number }
  /** A flush stored every buffered partition and advanced the checkpoint to `checkpoint`. */
  | {
      readonly type: 'flushed';
      readonly trigger: FlushTrigger;
      readonly records: number;
      readonly files: number;
      readonly bytes: number;
      readonly seconds: number;
      readonly checkpoint: WalPosition;
      readonly templates: number;
      /**
       * Seconds from the arrival of the flush's oldest record (the sink reads a record right after its WAL fsync,
       * which is when it is acknowledged) to the moment its file was stored and so visible to readers: the
       * `sluice.ingest.visibility_lag` of the flush, an upper bound for every record in it.
       */
      readonly visibilityLagSecs: number;
    }
  /**
   * A flush failed; the checkpoint did not move and the same flush is retried after a back-off. `code` is the
   * error's code when it has one (`ENOSPC` for a full local store volume, `EIO`, …), else `null`.
   */
  | {
      readonly type: 'flush_failed';
      readonly trigger: FlushTrigger;
      readonly message: string;
      readonly code: string | null;
    }
  /**
   * Buffer level: at most once a second while consuming or idle, and just before each flush takes the buffer.
   * `peakBytes` is the most the buffer has held since this sink started (it is checked after every WAL frame).
   */
  | { readonly type: 'buffer'; readonly bytes: number; readonly records: number; readonly peakBytes: number }
  /** WAL records that no longer decode (skipped). */
  | { readonly type: 'parse_failures'; readonly reason: string; readonly count: number };
