/**
 * @module sink-protocol
 * Messages between the receiver's main thread and its sink worker. The worker tails the WAL itself (the WAL is
 * the queue between them, so nothing unbounded sits in a message port); the main thread only tells it how far
 * the WAL is durable.
 */
import type { FlushTrigger, SinkEvent, SinkSettings } from '@sluice/sink';
import type { StorageSettings } from '@sluice/storage';
import type { WalPosition } from '@sluice/wal';

export type { FlushTrigger };

/** Settings the worker starts with (structured-clone safe): the sink's, plus the object store to build. */
export interface SinkWorkerData extends SinkSettings {
  readonly storage: StorageSettings;
}

/** Main → worker. */
export type ToSinkWorker =
  | { readonly type: 'durable'; readonly position: WalPosition }
  /** Consume through `position`, flush everything, checkpoint, then answer `stopped`. */
  | { readonly type: 'shutdown'; readonly position: WalPosition | null };

/** Worker → main: the sink's events, then `stopped` after a shutdown, or `fatal` when the sink failed. */
export type FromSinkWorker =
  SinkEvent | { readonly type: 'stopped' } | { readonly type: 'fatal'; readonly message: string };
