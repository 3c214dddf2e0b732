/**
 * @module sink
 * Main-thread side of the sink: starts the sink worker, tells it how far the WAL is durable, tracks the
 * checkpoint (for the WAL backlog cap) and replay progress (for readiness), restarts it if it dies, and drives
 * the final flush at shutdown.
 */
import { Worker } from 'node:worker_threads';
import type { WalPosition } from '@sluice/wal';
import type { FromSinkWorker, SinkWorkerData, ToSinkWorker } from './sink-protocol.js';

/** Events the sink reports to the composition root (metrics and logs). */
export interface SinkObserver {
  message(message: FromSinkWorker): void;
  workerExited(code: number): void;
}

/** Main-thread handle on the sink worker. */
export interface Sink {
  /** Tells the worker the WAL is durable through `position`. */
  durable(position: WalPosition): void;
  /** True once the WAL that existed at startup has been replayed into the sink. */
  readonly replayed: boolean;
  /** Resolves when replay has finished. */
  whenReplayed(): Promise<void>;
  /** The last checkpoint the worker committed (null before the first flush of this process). */
  readonly checkpoint: WalPosition | null;
  /** Consumes through `finalPosition`, flushes everything, checkpoints, and stops the worker. */
  stop(finalPosition: WalPosition | null): Promise<void>;
  /**
   * Bytes the sink buffers (as last reported by the worker: at most a second old while it consumes, and 0 once a
   * flush has been stored) and the most it has buffered since the receiver started.
   */
  bufferFigures(): { readonly used: number; readonly peak: number };
}

/** Creates and starts the sink worker. */
export function startSink(data: SinkWorkerData, observer: SinkObserver): Sink {
  let replayed = false;
  let checkpoint: WalPosition | null = null;
  let latest: WalPosition | null = data.replayTarget;
  let stopping = false;
  let onStopped: (() => void) | null = null;
  let replayWaiters: (() => void)[] = [];
  let worker: Worker;
  let bufferBytes = 0;
  let bufferPeak = 0;

  const spawn = (): void => {
    worker = new Worker(new URL('./sink-worker.js', import.meta.url), {
      workerData: { ...data, replayTarget: latest },
    });
    worker.on('message', (message: FromSinkWorker) => {
      if (message.type === 'replayed') {
        replayed = true;
        for (const resolve of replayWaiters) resolve();
        replayWaiters = [];
      } else if (message.type === 'flushed') {
        checkpoint = message.checkpoint;
        bufferBytes = 0;
      } else if (message.type === 'buffer') {
        bufferBytes = message.bytes;
        // A restarted worker counts its peak from 0; the receiver's is the highest of them all.
        bufferPeak = Math.max(bufferPeak, message.peakBytes);
      }
      observer.message(message);
    });
    worker.on('error', () => {
      // 'exit' follows; the restart happens there.
    });
    worker.on('exit', (code) => {
      if (stopping) {
        onStopped?.();
        return;
      }
      observer.workerExited(code);
      bufferBytes = 0; // a dead worker's buffer is gone (the WAL still holds its rows)
      // A dead sink loses nothing (the WAL holds every record past the checkpoint): restart it from there.
      setTimeout(spawn, 1000).unref();
    });
  };
  spawn();

  const send = (message: ToSinkWorker): void => worker.postMessage(message);

  return {
    durable(position) {
      latest = position;
      send({ type: 'durable', position });
    },
    get replayed() {
      return replayed;
    },
    whenReplayed() {
      return replayed ? Promise.resolve() : new Promise((resolve) => replayWaiters.push(resolve));
    },
    get checkpoint() {
      return checkpoint;
    },
    bufferFigures: () => ({ used: bufferBytes, peak: bufferPeak }),
    async stop(finalPosition) {
      stopping = true;
      const stopped = new Promise<void>((resolve) => (onStopped = resolve));
      send({ type: 'shutdown', position: finalPosition });
      // The worker flushes, checkpoints, answers `stopped` and exits on its own.
      await stopped;
    },
  };
}
