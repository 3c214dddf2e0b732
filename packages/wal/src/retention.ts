/**
 * @module retention
 * Deletes whole segments that lie entirely before a checkpoint.
 */
import * as fs from 'node:fs/promises';
import { ioError } from './errors.js';
import { fsyncDir, listSegments } from './fs-util.js';
import type { WalPosition } from './position.js';

/**
 * Deletes every segment whose sequence is below `position.segment` (they end before the position), oldest
 * first, fsyncing the directory after each unlink so a crash never leaves a gap in the sequence. Never
 * deletes the segment containing `position` nor any later one (so never the active segment, which is at or
 * after any durable position).
 * @returns the deleted sequence numbers, ascending
 * @throws WalError `WAL_IO`
 */
export async function deleteSegmentsBelow(dir: string, position: WalPosition): Promise<number[]> {
  const deleted: number[] = [];
  try {
    for (const s of await listSegments(dir)) {
      if (s.sequence >= position.segment) break;
      await fs.unlink(s.path);
      await fsyncDir(dir);
      deleted.push(s.sequence);
    }
  } catch (e) {
    throw ioError('delete segments', e, dir);
  }
  return deleted;
}
