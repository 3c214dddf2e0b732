/**
 * @module frame-scanner
 * Reads frames from one segment through a bounded chunk buffer (1 MiB by default; a frame larger than the
 * chunk gets a buffer of its own size). Used by recovery and by the reader; never reads past `limit`.
 */
import type { FileHandle } from 'node:fs/promises';
import { corruptError } from './errors.js';
import { FORMAT_MAX_FRAME_BYTES, FRAME_HEADER_BYTES, frameChecksum } from './frame-codec.js';

/** Default read chunk. */
export const DEFAULT_CHUNK_BYTES = 1024 * 1024;

/** What sits at one offset of a segment. */
export type FrameReadResult =
  /** A valid frame; `next` is the offset just after it. `payload` is a copy when requested, else empty. */
  | { readonly kind: 'frame'; readonly payload: Uint8Array; readonly next: number }
  /** `offset === limit`: a clean end. */
  | { readonly kind: 'end' }
  /** The header or the payload runs past `limit`. */
  | { readonly kind: 'incomplete'; readonly reason: string }
  /** The length field exceeds the format cap. */
  | { readonly kind: 'bad-length'; readonly reason: string }
  /** The frame is complete but its checksum does not match; `next` is where it claims to end. */
  | { readonly kind: 'bad-crc'; readonly next: number; readonly reason: string };

/** Sequential frame reader over one open segment file, bounded to bytes `< limit`. */
export class FrameScanner {
  private buf: Buffer;
  private bufStart = 0;
  private bufLen = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly file: string,
    private readonly limit: number,
    private readonly chunkBytes: number = DEFAULT_CHUNK_BYTES,
  ) {
    this.buf = Buffer.allocUnsafe(chunkBytes);
  }

  /** Reads the frame starting at `offset`; `copyPayload` false skips the copy (recovery only validates). */
  async readAt(offset: number, copyPayload: boolean): Promise<FrameReadResult> {
    if (offset === this.limit) return { kind: 'end' };
    const avail = this.limit - offset;
    if (avail < FRAME_HEADER_BYTES)
      return { kind: 'incomplete', reason: `${avail} bytes left, frame header needs ${FRAME_HEADER_BYTES}` };
    await this.ensure(offset, FRAME_HEADER_BYTES);
    let at = offset - this.bufStart;
    const len = this.buf.readUInt32LE(at);
    const stored = this.buf.readUInt32LE(at + 4);
    if (len > FORMAT_MAX_FRAME_BYTES)
      return { kind: 'bad-length', reason: `length field ${len} exceeds the format cap` };
    const next = offset + FRAME_HEADER_BYTES + len;
    if (next > this.limit)
      return { kind: 'incomplete', reason: `frame of ${len} payload bytes runs past byte ${this.limit}` };
    await this.ensure(offset, FRAME_HEADER_BYTES + len);
    at = offset - this.bufStart;
    const payloadView = this.buf.subarray(at + FRAME_HEADER_BYTES, at + FRAME_HEADER_BYTES + len);
    if (frameChecksum(this.buf.subarray(at, at + 4), payloadView) !== stored) {
      return { kind: 'bad-crc', next, reason: 'frame checksum mismatch' };
    }
    return { kind: 'frame', payload: copyPayload ? new Uint8Array(payloadView) : new Uint8Array(0), next };
  }

  /** Makes bytes `[offset, offset + n)` resident in the buffer, refilling from `offset` if needed. */
  private async ensure(offset: number, n: number): Promise<void> {
    if (offset >= this.bufStart && offset + n <= this.bufStart + this.bufLen) return;
    const want = Math.min(Math.max(this.chunkBytes, n), this.limit - offset);
    if (this.buf.length < want) this.buf = Buffer.allocUnsafe(want);
    else if (this.buf.length > this.chunkBytes && want <= this.chunkBytes)
      this.buf = Buffer.allocUnsafe(this.chunkBytes);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await this.fh.read(this.buf, got, want - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    this.bufStart = offset;
    this.bufLen = got;
    if (got < n) throw corruptError(this.file, offset, `file shorter than expected (wanted ${n} bytes, got ${got})`);
  }
}
