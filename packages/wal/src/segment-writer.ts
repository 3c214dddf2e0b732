/**
 * @module segment-writer
 * One open segment file: positional frame writes and fdatasync, both on the libuv pool so the main thread
 * never blocks on the disk (a page-cache write can stall for tens of ms under writeback throttling).
 * The caller keeps at most one write in flight per segment, which keeps frames in append order on disk.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { closeFd, fdatasync } from './fs-util.js';
import { encodeSegmentHeader, segmentFileName } from './frame-codec.js';
import { writeAll } from './fs-util.js';

/** Writes frames to the end of one segment. Not thread-safe; one writer per segment. */
export class SegmentWriter {
  private constructor(
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
  static async create(dir: string, sequence: number): Promise<SegmentWriter> {
    const path = join(dir, segmentFileName(sequence));
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(path, 'wx', 0o644, (e, fdOut) => (e ? reject(e) : resolve(fdOut))),
    );
    try {
      const header = encodeSegmentHeader(sequence);
      await writeAll(fd, [header], 0);
      await fdatasync(fd);
      return new SegmentWriter(sequence, path, fd, header.length);
    } catch (e) {
      await closeFd(fd).catch(() => undefined);
      throw e;
    }
  }

  /** Reopens an existing, recovered segment for appending at `size`. */
  static async reopen(path: string, sequence: number, size: number): Promise<SegmentWriter> {
    const fd = await new Promise<number>((resolve, reject) =>
      fs.open(path, 'r+', (e, fdOut) => (e ? reject(e) : resolve(fdOut))),
    );
    return new SegmentWriter(sequence, path, fd, size);
  }

  /**
   * Appends encoded frames (header, payload, header, payload…) at the end and returns the new size. On a
   * rejection the segment may hold a partial frame: the caller must stop writing to it.
   */
  async writeFrames(buffers: readonly Uint8Array[]): Promise<number> {
    const expected = buffers.reduce((n, b) => n + b.length, 0);
    const n = await writeAll(this.fd, buffers, this.bytes);
    if (n !== expected) throw new Error(`short write: ${n} of ${expected} bytes`);
    this.bytes += n;
    return this.bytes;
  }

  /** fdatasync off the main thread. */
  sync(): Promise<void> {
    return fdatasync(this.fd);
  }

  /** Closes the descriptor (no sync). */
  close(): Promise<void> {
    return closeFd(this.fd);
  }
}
