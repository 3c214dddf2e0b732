/**
 * @module sink-protocol
 * Messages between the receiver's main thread and its sink worker. The worker tails the WAL itself (the WAL is
 * the queue between them, so nothing unbounded sits in a message port); the main thread only tells it how far
 * the WAL is durable.
 */
import type { StorageSettings } from '@sluice/storage';
import type { WalPosition } from '@sluice/wal';

/** Flush triggers (values of `sluice.sink.flush.trigger`). */
export type FlushTrigger = 'size' | 'age' | 'ceiling' | 'shutdown';

/** Settings the worker starts with (structured-clone safe). */
export interface SinkWorkerData {
  readonly walDir: string;
  readonly storage: StorageSettings;
  readonly flushAgeSecs: number;
  readonly flushBytes: number;
  readonly ceilingBytes: number;
  readonly miner: Readonly<Record<string, number>>;
  /** The durable WAL position at startup: replay is finished when the worker has consumed it. */
  readonly replayTarget: WalPosition | null;
}

/** Main → worker. */
export type ToSinkWorker =
  | { readonly type: 'durable'; readonly position: WalPosition }
  /** Consume through `position`, flush everything, checkpoint, then answer `stopped`. */
  | { readonly type: 'shutdown'; readonly position: WalPosition | null };

/** Worker → main. */
export type FromSinkWorker =
  | { readonly type: 'replayed'; readonly exports: number }
  | {
      readonly type: 'flushed';
      readonly trigger: FlushTrigger;
      readonly records: number;
      readonly files: number;
      readonly bytes: number;
      readonly seconds: number;
      readonly checkpoint: WalPosition;
      readonly templates: number;
    }
  | { readonly type: 'flush_failed'; readonly trigger: FlushTrigger; readonly message: string }
  | { readonly type: 'buffer'; readonly bytes: number; readonly records: number }
  | { readonly type: 'parse_failures'; readonly reason: string; readonly count: number }
  | { readonly type: 'stopped' }
  | { readonly type: 'fatal'; readonly message: string };
