/**
 * @module sink-worker
 * The sink worker thread: runs `@sluice/sink`'s loop off the thread that acknowledges exports, wired to the
 * main thread's messages (`durable`, `shutdown`) and forwarding the sink's events. Mining, Parquet encoding and
 * uploads are CPU-heavy, so they must not share the main thread.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createSinkLoop } from '@sluice/sink';
import { createObjectStore } from '@sluice/storage';
import type { FromSinkWorker, SinkWorkerData, ToSinkWorker } from './sink-protocol.js';

function requirePort(): MessagePort {
  if (parentPort === null) throw new Error('sink-worker must run in a worker thread');
  return parentPort;
}
const port = requirePort();
const settings = workerData as SinkWorkerData;
const post = (message: FromSinkWorker): void => port.postMessage(message);

const sink = createSinkLoop({ settings, store: createObjectStore(settings.storage), emit: post });
port.on('message', (message: ToSinkWorker) => {
  if (message.type === 'durable') sink.durable(message.position);
  else sink.shutdown(message.position);
});

sink.run().then(
  () => {
    post({ type: 'stopped' });
    // Closing the port lets the thread exit by itself (code 0) once pending messages are delivered.
    port.close();
  },
  (error: unknown) => {
    post({ type: 'fatal', message: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
    port.close();
  },
);
