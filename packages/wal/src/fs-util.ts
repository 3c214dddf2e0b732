/**
 * @module fs-util
 * Directory fsync and segment listing for recovery, the checkpoint and retention (the writer's own calls go
 * through the file port, `file-port.ts`).
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { parseSegmentFileName } from './frame-codec.js';

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
