/**
 * @module sink-settings
 * The sink's settings, taken from `receiver.*` configuration keys. Structured-clone safe, so the receiver can
 * hand them to its sink worker as they are.
 */
import type { WalPosition } from '@sluice/wal';

/** Settings of one sink. */
export interface SinkSettings {
  /** `receiver.wal_dir`: the WAL the sink tails and the directory of its checkpoint. */
  readonly walDir: string;
  /** `receiver.sink.flush_age_secs`: flush once the oldest buffered row is this old. */
  readonly flushAgeSecs: number;
  /**
   * `receiver.sink.flush_interval_ms`: the freshness cadence, flush once the oldest buffered row has waited this
   * long (docs/design/freshness.md); 0 = off. Absent = off, for callers that predate it.
   */
  readonly flushIntervalMs?: number;
  /** `receiver.sink.flush_bytes`: flush once the buffer holds this many (wire) bytes. */
  readonly flushBytes: number;
  /** `receiver.sink.ceiling_bytes`: the buffer's hard ceiling (flushes as `ceiling`). */
  readonly ceilingBytes: number;
  /** `receiver.miner.*` options of the template miner. */
  readonly miner: Readonly<Record<string, number>>;
  /** The durable WAL position at startup: replay is finished when the sink has consumed it. */
  readonly replayTarget: WalPosition | null;
}
