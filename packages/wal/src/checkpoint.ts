/**
 * @module checkpoint
 * The sink's checkpoint: a WAL position plus an opaque payload (e.g. the miner snapshot), replaced
 * atomically (write tmp, fsync, rename, fsync dir) and CRC-protected.
 *
 * `<dir>/CHECKPOINT`, all little-endian:
 * magic `SLCK`(4) | u16 version=1 | u16 flags=0 | u64 segment | u64 offset | u32 payloadLen |
 * u32 crc32c(bytes 0..28 ‖ payload) | payload.
 */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from './crc32c.js';
import { corruptError, ioError, WalError } from './errors.js';
import { FORMAT_MAX_FRAME_BYTES } from './frame-codec.js';
import { fsyncDir } from './fs-util.js';
import type { WalPosition } from './position.js';

/** File name of the checkpoint inside the WAL directory. */
export const CHECKPOINT_FILE = 'CHECKPOINT';
const TMP_FILE = 'CHECKPOINT.tmp';
const MAGIC = 0x4b434c53; // 'S','L','C','K' as u32le
const VERSION = 1;
const HEADER_BYTES = 32;

/** A stored checkpoint. */
export interface Checkpoint {
  /** Everything up to here is durably processed (e.g. in object storage). */
  readonly position: WalPosition;
  /** Opaque caller state stored with it. */
  readonly payload: Uint8Array;
}

/**
 * Reads the checkpoint of `dir`; `null` when none was ever written.
 * @throws WalError `WAL_CORRUPT` when the file exists but is damaged (never silently ignored); `WAL_IO`.
 */
export async function readCheckpoint(dir: string): Promise<Checkpoint | null> {
  const path = join(dir, CHECKPOINT_FILE);
  let b: Buffer;
  try {
    b = await fs.readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw ioError('read checkpoint', e, path);
  }
  if (b.length < HEADER_BYTES)
    throw corruptError(path, 0, `checkpoint is ${b.length} bytes, header needs ${HEADER_BYTES}`);
  if (b.readUInt32LE(0) !== MAGIC) throw corruptError(path, 0, 'bad checkpoint magic (want SLCK)');
  const version = b.readUInt16LE(4);
  if (version !== VERSION) throw corruptError(path, 4, `unsupported checkpoint version ${version}`);
  const len = b.readUInt32LE(24);
  if (b.length !== HEADER_BYTES + len) {
    throw corruptError(path, 24, `checkpoint payload length ${len} does not match file size ${b.length}`);
  }
  const payload = b.subarray(HEADER_BYTES);
  if (b.readUInt32LE(28) !== crc32c(payload, crc32c(b.subarray(0, 28)))) {
    throw corruptError(path, 28, 'checkpoint checksum mismatch');
  }
  const segment = b.readBigUInt64LE(8);
  const offset = b.readBigUInt64LE(16);
  if (segment > BigInt(Number.MAX_SAFE_INTEGER) || offset > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw corruptError(path, 8, 'checkpoint position out of range');
  }
  return { position: { segment: Number(segment), offset: Number(offset) }, payload: new Uint8Array(payload) };
}

/**
 * Atomically replaces the checkpoint of `dir` (tmp file, fsync, rename, fsync dir). After it resolves, a
 * crash leaves the new checkpoint; before, the old one or the new one, never a mix.
 * @throws WalError `WAL_IO`; RangeError when `payload` exceeds 1 GiB.
 */
export async function writeCheckpoint(dir: string, position: WalPosition, payload: Uint8Array): Promise<void> {
  if (payload.length > FORMAT_MAX_FRAME_BYTES)
    throw new RangeError(`checkpoint payload of ${payload.length} bytes is too large`);
  const head = Buffer.alloc(HEADER_BYTES);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt16LE(VERSION, 4);
  head.writeUInt16LE(0, 6);
  head.writeBigUInt64LE(BigInt(position.segment), 8);
  head.writeBigUInt64LE(BigInt(position.offset), 16);
  head.writeUInt32LE(payload.length, 24);
  head.writeUInt32LE(crc32c(payload, crc32c(head.subarray(0, 28))), 28);
  const tmp = join(dir, TMP_FILE);
  try {
    const fh = await fs.open(tmp, 'w', 0o644);
    try {
      await fh.writev([head, payload]);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, join(dir, CHECKPOINT_FILE));
    await fsyncDir(dir);
  } catch (e) {
    throw e instanceof WalError ? e : ioError('write checkpoint', e, tmp);
  }
}
