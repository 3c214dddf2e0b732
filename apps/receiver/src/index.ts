/**
 * @module @sluice/receiver
 * The receiver role: OTLP/HTTP and OTLP/gRPC ingest, durable-before-ack WAL, and the sink worker that mines
 * templates and writes Parquet.
 */
export { startReceiver } from './create-receiver.js';
export type { BudgetFigures, Receiver, ReceiverBudgets, ReceiverDeps } from './create-receiver.js';
export type { IngestObserver } from './ingest-service.js';
export type { IngestOutcome, IngestProtocol, OtlpEncoding } from './ingest-outcome.js';
export type { SinkObserver } from './sink.js';
export type { WalObserver } from './wal-health.js';
export type { DiskGuardObserver, DiskSample } from './disk-guard.js';
export type { FromSinkWorker, FlushTrigger } from './sink-protocol.js';
