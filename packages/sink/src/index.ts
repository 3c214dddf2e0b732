/**
 * @module @sluice/sink
 * What happens to an export after its acknowledgement: the WAL record format, and the sink that tails the WAL,
 * mines templates, buffers rows per (tenant, hour), writes Parquet and audit files, and advances the checkpoint.
 * Thread-agnostic; the receiver role runs it in its sink worker.
 */
export type { WalExport } from './wal-payload.js';
export { decodeWalExport, encodeWalExport } from './wal-payload.js';
export type { BufferedRow, Partition } from './partition-buffer.js';
export { PartitionBuffer } from './partition-buffer.js';
export type { FlushTrigger, SinkEvent } from './sink-events.js';
export type { SinkSettings } from './sink-settings.js';
export type { FlushWritten } from './write-flush.js';
export { planFlush, storeFlush } from './write-flush.js';
export type { FlushPlan } from './write-flush.js';
export type { SinkLoop, SinkLoopOptions } from './sink-loop.js';
export { createSinkLoop } from './sink-loop.js';
