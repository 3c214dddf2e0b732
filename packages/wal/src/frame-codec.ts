/**
 * @module frame-codec
 * The on-disk format, byte by byte: segment file names, the segment header and the frame header.
 * Pure encoding and decoding; no I/O. See the package README for the layout tables.
 */
import { crc32c } from './crc32c.js';

/** `SLWL` — first 4 bytes of every segment file. */
export const SEGMENT_MAGIC = 0x4c574c53; // 'S','L','W','L' read as u32le
/** Current segment format version. */
export const SEGMENT_VERSION = 1;
/** Segment header: magic(4) | u16le version | u16le flags | u64le sequence | u32le crc32c(bytes 0..16). */
export const SEGMENT_HEADER_BYTES = 20;
/** Frame header: u32le payloadLen | u32le crc32c(payloadLen as u32le ‖ payload). */
export const FRAME_HEADER_BYTES = 8;
/** Default cap on one payload (16 MiB), the `maxFrameBytes` option's default. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;
/**
 * Hard format cap on a payload length (1 GiB). Recovery and the reader treat a longer length field as a
 * bad frame whatever `maxFrameBytes` is, so lowering `maxFrameBytes` never makes old frames unreadable.
 */
export const FORMAT_MAX_FRAME_BYTES = 1024 * 1024 * 1024;

const SEGMENT_NAME = /^(\d{20})\.wal$/;

/** `<20-digit zero-padded sequence>.wal`. */
export function segmentFileName(sequence: number): string {
  return `${String(sequence).padStart(20, '0')}.wal`;
}

/** The sequence number of a segment file name, or `null` when `name` is not a segment file. */
export function parseSegmentFileName(name: string): number | null {
  const m = SEGMENT_NAME.exec(name);
  if (m === null) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? n : null;
}

/** Encodes the 20-byte header of segment `sequence`. */
export function encodeSegmentHeader(sequence: number): Buffer {
  const b = Buffer.alloc(SEGMENT_HEADER_BYTES);
  b.writeUInt32LE(SEGMENT_MAGIC, 0);
  b.writeUInt16LE(SEGMENT_VERSION, 4);
  b.writeUInt16LE(0, 6);
  b.writeBigUInt64LE(BigInt(sequence), 8);
  b.writeUInt32LE(crc32c(b.subarray(0, 16)), 16);
  return b;
}

/** Decodes a segment header: its sequence number, or a reason it is invalid. */
export function decodeSegmentHeader(b: Uint8Array): { ok: true; sequence: number } | { ok: false; reason: string } {
  if (b.length < SEGMENT_HEADER_BYTES)
    return { ok: false, reason: `header is ${b.length} bytes, need ${SEGMENT_HEADER_BYTES}` };
  const v = Buffer.from(b.buffer, b.byteOffset, SEGMENT_HEADER_BYTES);
  if (v.readUInt32LE(16) !== crc32c(v.subarray(0, 16)))
    return { ok: false, reason: 'segment header checksum mismatch' };
  if (v.readUInt32LE(0) !== SEGMENT_MAGIC) return { ok: false, reason: 'bad segment magic (want SLWL)' };
  const version = v.readUInt16LE(4);
  if (version !== SEGMENT_VERSION) return { ok: false, reason: `unsupported segment version ${version}` };
  const seq = v.readBigUInt64LE(8);
  if (seq > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, reason: 'segment sequence out of range' };
  return { ok: true, sequence: Number(seq) };
}

/** The checksum stored in a frame header: crc32c over the 4 length bytes, then the payload. */
export function frameChecksum(lengthBytes: Uint8Array, payload: Uint8Array): number {
  return crc32c(payload, crc32c(lengthBytes));
}

/** Encodes the 8-byte header of a frame carrying `payload`. */
export function encodeFrameHeader(payload: Uint8Array): Buffer {
  const h = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  h.writeUInt32LE(payload.length, 0);
  h.writeUInt32LE(frameChecksum(h.subarray(0, 4), payload), 4);
  return h;
}
