/**
 * @module fs-util
 * Small promise wrappers over callback `node:fs` for number file descriptors (the writer writes with
 * positional sync calls and syncs with these on the libuv pool), plus directory fsync and segment listing.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { parseSegmentFileName } from './frame-codec.js';

/** `fdatasync(fd)` off the main thread. */
export function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}

/** `fsync(fd)` off the main thread. */
export function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fsync(fd, (e) => (e ? reject(e) : resolve())));
}

/** `close(fd)`. */
export function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.close(fd, (e) => (e ? reject(e) : resolve())));
}

/** fsyncs a directory so that entries created, renamed or unlinked in it are durable. */
export async function fsyncDir(dir: string): Promise<void> {
  const h = await fs.promises.open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/** One segment file found in a WAL directory. */
export interface SegmentFile {
  readonly sequence: number;
  readonly path: string;
}

/** Segment files of `dir` in ascending sequence order (other files are ignored). */
export async function listSegments(dir: string): Promise<SegmentFile[]> {
  const names = await fs.promises.readdir(dir);
  const out: SegmentFile[] = [];
  for (const name of names) {
    const sequence = parseSegmentFileName(name);
    if (sequence !== null) out.push({ sequence, path: join(dir, name) });
  }
  return out.sort((a, b) => a.sequence - b.sequence);
}

/** Writes every byte of `buffers` at `position` off the main thread, looping over short writes. */
export async function writeAll(fd: number, buffers: readonly Uint8Array[], position: number): Promise<number> {
  let pos = position;
  let pending = buffers.filter((b) => b.length > 0);
  while (pending.length > 0) {
    const slice = pending;
    let n = await new Promise<number>((resolve, reject) =>
      fs.writev(fd, slice, pos, (e, written) => (e ? reject(e) : resolve(written))),
    );
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
