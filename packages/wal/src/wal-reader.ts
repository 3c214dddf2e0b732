/**
 * @module wal-reader
 * Streams frames between two positions, segment by segment, through a bounded chunk buffer. Safe to run in
 * a worker thread while the appender writes the same files: it never reads past `until`, which the caller
 * takes from `durablePosition()`, so it never meets a torn or unsynced frame. Every checksum is verified.
 */
import * as fs from 'node:fs/promises';
import { join } from 'node:path';
import { corruptError, ioError, WalError } from './errors.js';
import { DEFAULT_CHUNK_BYTES, FrameScanner } from './frame-scanner.js';
import { decodeSegmentHeader, SEGMENT_HEADER_BYTES, segmentFileName } from './frame-codec.js';
import { listSegments } from './fs-util.js';
import { compareWalPositions } from './position.js';
import type { WalPosition } from './position.js';

/** One frame read back. */
export interface WalEntry {
  /** The position just after this frame (a valid `from` to resume after it). */
  readonly position: WalPosition;
  /** The payload bytes (a copy owned by the caller). */
  readonly payload: Uint8Array;
}

/** Options of {@link readWal}. */
export interface ReadWalOptions {
  /** Read buffer size (default 1 MiB); a frame larger than this gets a buffer of its own size. */
  readonly chunkBytes?: number;
}

/**
 * Yields every frame strictly after `from` (`null`: from the oldest retained segment) up to and including
 * the frame ending at `until`, in log order.
 * @param dir the WAL directory
 * @param from resume point (a position returned by `append`, by this reader or stored in a checkpoint)
 * @param until the last position to read, normally `wal.durablePosition()`
 * @throws WalError `WAL_CORRUPT` on a checksum mismatch, a missing segment or a position that is not a frame
 *   boundary; `WAL_IO` on a read failure.
 */
export async function* readWal(
  dir: string,
  from: WalPosition | null,
  until: WalPosition,
  options: ReadWalOptions = {},
): AsyncGenerator<WalEntry, void, undefined> {
  if (from !== null && compareWalPositions(from, until) >= 0) return;
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  let firstSequence: number;
  if (from !== null) {
    firstSequence = from.segment;
  } else {
    let files;
    try {
      files = await listSegments(dir);
    } catch (e) {
      throw ioError('list segments', e, dir);
    }
    const first = files[0];
    if (first === undefined || first.sequence > until.segment) {
      throw corruptError(join(dir, segmentFileName(until.segment)), 0, 'segment file is missing');
    }
    firstSequence = first.sequence;
  }
  for (let sequence = firstSequence; sequence <= until.segment; sequence++) {
    const path = join(dir, segmentFileName(sequence));
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw corruptError(path, 0, 'segment file is missing');
      throw ioError('open segment', e, path);
    }
    try {
      const size = (await fh.stat()).size;
      const limit = sequence === until.segment ? until.offset : size;
      if (limit > size) throw corruptError(path, size, `segment ends before position ${sequence}:${limit}`);
      const head = Buffer.alloc(SEGMENT_HEADER_BYTES);
      const { bytesRead } = await fh.read(head, 0, SEGMENT_HEADER_BYTES, 0);
      const decoded = decodeSegmentHeader(head.subarray(0, bytesRead));
      if (!decoded.ok) throw corruptError(path, 0, decoded.reason);
      if (decoded.sequence !== sequence) throw corruptError(path, 0, `header names sequence ${decoded.sequence}`);
      let offset = from !== null && sequence === from.segment ? from.offset : SEGMENT_HEADER_BYTES;
      if (offset < SEGMENT_HEADER_BYTES || offset > limit) {
        throw corruptError(path, offset, `position ${sequence}:${offset} is outside the segment's frames`);
      }
      const scanner = new FrameScanner(fh, path, limit, chunkBytes);
      for (;;) {
        const r = await scanner.readAt(offset, true);
        if (r.kind === 'end') break;
        if (r.kind !== 'frame') throw corruptError(path, offset, r.reason);
        offset = r.next;
        yield { position: { segment: sequence, offset }, payload: r.payload };
      }
    } catch (e) {
      throw e instanceof WalError ? e : ioError('read segment', e, path);
    } finally {
      await fh.close();
    }
  }
}

/** A reader bound to one WAL directory (convenience over {@link readWal}). */
export interface WalReader {
  readonly dir: string;
  /** Same as `readWal(dir, from, until)`. */
  read(from: WalPosition | null, until: WalPosition): AsyncGenerator<WalEntry, void, undefined>;
}

/** Creates a {@link WalReader} for `dir` (e.g. inside the sink worker). */
export function createWalReader(dir: string, options: ReadWalOptions = {}): WalReader {
  return { dir, read: (from, until) => readWal(dir, from, until, options) };
}
