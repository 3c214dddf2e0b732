/**
 * @module segment-writer
 * One open segment file: positional frame writes, fdatasync, and the cut back to a durable frame after a failure
 * (the fence, docs/design/wal.md). Every call goes through the {@link WalFilePort} (the libuv pool by default, so
 * the main thread never blocks on the disk: a page-cache write can stall for tens of ms under writeback
 * throttling). The caller keeps at most one write in flight per segment, which keeps frames in append order.
 */
import { join } from 'node:path';
import { encodeSegmentHeader, segmentFileName } from './frame-codec.js';
import type { WalFilePort } from './file-port.js';

/**
 * The cut re-writes the bytes from the last multiple of this below it: the page the cut falls in, for page sizes up
 * to 64 KiB (4 KiB on x86-64, up to 64 KiB on some arm64 kernels). At most 64 KiB per fence.
 */
const TAIL_REWRITE_ALIGN = 64 * 1024;

/** Writes frames to the end of one segment. Not thread-safe; one writer per segment. */
export class SegmentWriter {
  private constructor(
    private readonly port: WalFilePort,
    readonly sequence: number,
    readonly path: string,
    private readonly fd: number,
    private bytes: number,
  ) {}

  /** Current size in bytes (header + frames written so far, synced or not). */
  get size(): number {
    return this.bytes;
  }

  /** Creates segment `sequence` in `dir` (must not exist), writes its header and fdatasyncs it. */
  static async create(port: WalFilePort, dir: string, sequence: number): Promise<SegmentWriter> {
    const path = join(dir, segmentFileName(sequence));
    const fd = await port.open(path, 'wx+', 0o644); // read too: the cut re-writes its last page
    try {
      const header = encodeSegmentHeader(sequence);
      await writeAll(port, fd, [header], 0);
      await port.fdatasync(fd);
      return new SegmentWriter(port, sequence, path, fd, header.length);
    } catch (e) {
      await port.close(fd).catch(() => undefined);
      throw e;
    }
  }

  /** Reopens an existing, recovered segment for appending at `size`. */
  static async reopen(port: WalFilePort, path: string, sequence: number, size: number): Promise<SegmentWriter> {
    const fd = await port.open(path, 'r+');
    return new SegmentWriter(port, sequence, path, fd, size);
  }

  /**
   * Appends encoded frames (header, payload, header, payload…) at the end and returns the new size. On a
   * rejection the segment may hold a partial frame: the caller must stop writing to it until {@link cutTo}.
   */
  async writeFrames(buffers: readonly Uint8Array[]): Promise<number> {
    const expected = buffers.reduce((n, b) => n + b.length, 0);
    const n = await writeAll(this.port, this.fd, buffers, this.bytes);
    if (n !== expected) throw new Error(`short write: ${n} of ${expected} bytes`);
    this.bytes += n;
    return this.bytes;
  }

  /** fdatasync off the main thread. */
  sync(): Promise<void> {
    return this.port.fdatasync(this.fd);
  }

  /**
   * The fence's cut: drops every byte from `length` on (frames never acknowledged), re-writes the last page
   * below `length` (the part of the page the cut falls in) from what the file reads back, and fdatasyncs. The re-write matters after a failed
   * fdatasync: the kernel may have marked that page clean without writing it (its error reported once), so
   * without new dirt no later sync would write it again; the bytes below `length` were synced before, so
   * what reads back is what is durable or better. Resolves once the cut is durable; the writer then appends
   * at `length`.
   */
  async cutTo(length: number): Promise<void> {
    await this.port.ftruncate(this.fd, length);
    this.bytes = length;
    const from = length - (length % TAIL_REWRITE_ALIGN);
    const tail = new Uint8Array(length - from);
    const read = await this.port.read(this.fd, tail, from);
    if (read !== tail.length) throw new Error(`short read while cutting: ${read} of ${tail.length} bytes`);
    await writeAll(this.port, this.fd, [tail], from);
    await this.port.fdatasync(this.fd);
  }

  /** Closes the descriptor (no sync). */
  close(): Promise<void> {
    return this.port.close(this.fd);
  }
}

/** Writes every byte of `buffers` at `position`, looping over short writes. */
async function writeAll(
  port: WalFilePort,
  fd: number,
  buffers: readonly Uint8Array[],
  position: number,
): Promise<number> {
  let pos = position;
  let pending = buffers.filter((b) => b.length > 0);
  while (pending.length > 0) {
    let n = await port.writev(fd, pending, pos);
    if (n === 0) throw new Error('write made no progress');
    pos += n;
    const rest: Uint8Array[] = [];
    for (const b of pending) {
      if (n >= b.length) {
        n -= b.length;
        continue;
      }
      rest.push(n > 0 ? b.subarray(n) : b);
      n = 0;
    }
    pending = rest;
  }
  return pos - position;
}
