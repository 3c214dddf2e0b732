/**
 * @module @sluice/wal
 * Layer 2: the write-ahead log. CRC32C-framed segment files, group-commit fdatasync, rotation, recovery
 * (torn-tail healing), a bounded-memory reader, an atomic checkpoint and segment retention.
 */
export { WalError } from './errors.js';
export type { WalErrorCode, WalErrorOptions } from './errors.js';
export { crc32c } from './crc32c.js';
export { compareWalPositions, formatWalPosition } from './position.js';
export type { WalPosition } from './position.js';
export {
  DEFAULT_MAX_FRAME_BYTES,
  FORMAT_MAX_FRAME_BYTES,
  FRAME_HEADER_BYTES,
  SEGMENT_HEADER_BYTES,
  segmentFileName,
  parseSegmentFileName,
} from './frame-codec.js';
export { DEFAULT_FENCE_RETRY_MS, openWal } from './wal.js';
export type { Wal, WalFencedEvent, WalOptions, WalResumedEvent, WalState, WalStats } from './wal.js';
export { nodeFilePort } from './file-port.js';
export type { WalFilePort } from './file-port.js';
export type { RecoveryReport, RecoveredSegment } from './recovery.js';
export { readWal, createWalReader } from './wal-reader.js';
export type { ReadWalOptions, WalEntry, WalReader } from './wal-reader.js';
export { readCheckpoint, writeCheckpoint, CHECKPOINT_FILE } from './checkpoint.js';
export type { Checkpoint } from './checkpoint.js';
export { deleteSegmentsBelow } from './retention.js';
