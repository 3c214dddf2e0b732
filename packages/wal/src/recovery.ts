/**
 * @module recovery
 * Startup scan of a WAL directory: validates every segment, heals a torn tail of the newest segment by
 * ftruncate, and reports everything else as `WAL_CORRUPT`.
 *
 * The rule (also in the README):
 * - Segments must have consecutive sequence numbers (a gap means a lost file → corrupt). Leading segments
 *   may be missing (deleted below a checkpoint).
 * - An OLDER segment (not the newest) must be perfect: valid header, frames back to back up to EOF. Rotation
 *   fdatasyncs a segment before the next one is created, so an older segment cannot legitimately be torn.
 * - The NEWEST segment: frames are read until the first one that fails at offset `o`. It is a torn tail
 *   (bytes written but never covered by a successful fdatasync, hence never acknowledged) and is cut at `o`
 *   when the failing frame is the last frame region of the file:
 *     - fewer than 8 bytes remain, or the length field points past EOF (incomplete frame), or
 *     - the length field exceeds the format cap (garbage header), or
 *     - the checksum does not match AND no valid frame starts where the bad frame claims to end (either it
 *       ends exactly at EOF or the bytes there are not a valid frame).
 *   A checksum mismatch FOLLOWED by a valid frame is mid-segment corruption: acknowledged data may follow,
 *   so the scan stops with `WAL_CORRUPT` instead of truncating it away.
 * - A newest segment of at most 20 bytes whose header is incomplete or invalid holds no frame (the header is
 *   synced before any frame in it is acknowledged) and is re-initialised. A longer one with a bad header is
 *   corrupt.
 * Every kept segment is then fsync'd (cheap when clean): bytes a killed process left in the page cache become
 * durable before anything is built on them, and the directory is fsync'd.
 */
import * as fs from 'node:fs/promises';
import { corruptError, ioError, WalError } from './errors.js';
import { FrameScanner } from './frame-scanner.js';
import { decodeSegmentHeader, encodeSegmentHeader, SEGMENT_HEADER_BYTES } from './frame-codec.js';
import { fsyncDir, listSegments } from './fs-util.js';

/** A segment as recovery left it. */
export interface RecoveredSegment {
  readonly sequence: number;
  readonly path: string;
  /** File size after healing: the offset just after its last valid frame. */
  readonly size: number;
}

/** What recovery found and did. */
export interface RecoveryReport {
  /** Segments in ascending order (possibly empty: a fresh directory). */
  readonly segments: readonly RecoveredSegment[];
  /** Set when the newest segment's tail was cut: the file, the old size and the new one. */
  readonly healed: {
    readonly path: string;
    readonly from: number;
    readonly to: number;
    readonly reason: string;
  } | null;
}

/**
 * Scans `dir` (which must exist) and heals or rejects it as described in the module doc.
 * @throws WalError `WAL_CORRUPT` naming the file and byte offset; `WAL_IO` when the disk fails.
 */
export async function recoverWal(dir: string, chunkBytes?: number): Promise<RecoveryReport> {
  const files = await listSegments(dir);
  for (let i = 1; i < files.length; i++) {
    const prev = files[i - 1]!;
    const cur = files[i]!;
    if (cur.sequence !== prev.sequence + 1) {
      throw corruptError(cur.path, 0, `segment sequence gap: ${prev.sequence} is followed by ${cur.sequence}`);
    }
  }
  const segments: RecoveredSegment[] = [];
  let healed: RecoveryReport['healed'] = null;
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    const newest = i === files.length - 1;
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(f.path, newest ? 'r+' : 'r');
    } catch (e) {
      throw ioError('open segment', e, f.path);
    }
    try {
      const size = (await fh.stat()).size;
      const head = Buffer.alloc(SEGMENT_HEADER_BYTES);
      const { bytesRead } = await fh.read(head, 0, SEGMENT_HEADER_BYTES, 0);
      const decoded = decodeSegmentHeader(head.subarray(0, bytesRead));
      if (!decoded.ok || decoded.sequence !== f.sequence) {
        const reason = decoded.ok ? `header names sequence ${decoded.sequence}` : decoded.reason;
        if (newest && size <= SEGMENT_HEADER_BYTES) {
          await fh.truncate(0);
          await fh.write(encodeSegmentHeader(f.sequence), 0, SEGMENT_HEADER_BYTES, 0);
          await fh.sync();
          healed = { path: f.path, from: size, to: SEGMENT_HEADER_BYTES, reason: `torn header: ${reason}` };
          segments.push({ sequence: f.sequence, path: f.path, size: SEGMENT_HEADER_BYTES });
          continue;
        }
        throw corruptError(f.path, 0, reason);
      }
      const scanner = new FrameScanner(fh, f.path, size, chunkBytes);
      let offset = SEGMENT_HEADER_BYTES;
      for (;;) {
        const r = await scanner.readAt(offset, false);
        if (r.kind === 'frame') {
          offset = r.next;
          continue;
        }
        if (r.kind === 'end') break;
        if (!newest) throw corruptError(f.path, offset, `${r.reason} in an older segment`);
        if (r.kind === 'bad-crc' && r.next < size) {
          const after = await scanner.readAt(r.next, false);
          if (after.kind === 'frame') {
            throw corruptError(f.path, offset, `${r.reason}, followed by a valid frame at byte ${r.next}`);
          }
        }
        await fh.truncate(offset);
        healed = { path: f.path, from: size, to: offset, reason: r.reason };
        break;
      }
      await fh.sync();
      segments.push({ sequence: f.sequence, path: f.path, size: offset });
    } catch (e) {
      throw e instanceof WalError ? e : ioError('recovery', e, f.path);
    } finally {
      await fh.close();
    }
  }
  try {
    await fsyncDir(dir);
  } catch (e) {
    throw ioError('fsync directory', e, dir);
  }
  return { segments, healed };
}
