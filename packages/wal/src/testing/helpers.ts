/**
 * @module testing/helpers
 * Test helpers: temp directories, deterministic payloads, file surgery. Not exported from the package.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWal } from '../wal-reader.js';
import type { WalPosition } from '../position.js';

/** A fresh temp directory under the OS temp dir. */
export function tempDir(prefix = 'sluice-wal-'): string {
  return fs.mkdtempSync(join(tmpdir(), prefix));
}

/** Removes a temp directory. */
export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/** A payload whose bytes are a function of `index` and `length` (so a reader can verify it). */
export function patternPayload(index: number, length: number): Uint8Array {
  const head = Buffer.from(`${index}|`);
  const b = Buffer.alloc(Math.max(length, head.length));
  head.copy(b);
  for (let j = head.length; j < b.length; j++) b[j] = (index * 31 + j) & 0xff;
  return b;
}

/** Parses and verifies a {@link patternPayload}; returns its index or throws. */
export function checkPatternPayload(payload: Uint8Array): number {
  const b = Buffer.from(payload.buffer, payload.byteOffset, payload.length);
  const bar = b.indexOf(0x7c);
  if (bar <= 0) throw new Error('payload has no index prefix');
  const index = Number(b.subarray(0, bar).toString());
  for (let j = bar + 1; j < b.length; j++) {
    if (b[j] !== ((index * 31 + j) & 0xff)) throw new Error(`payload ${index} damaged at byte ${j}`);
  }
  return index;
}

/** Reads every payload of `dir` from the start up to `until`. */
export async function readAll(dir: string, from: WalPosition | null, until: WalPosition): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const e of readWal(dir, from, until)) out.push(e.payload);
  return out;
}

/** Segment file names of `dir`, ascending. */
export function segmentNames(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.wal'))
    .sort();
}

/** Copies every regular file of `src` into a new temp dir (a "crash snapshot" of what the OS holds). */
export function snapshotDir(src: string): string {
  const dst = tempDir('sluice-wal-snap-');
  for (const n of fs.readdirSync(src)) fs.copyFileSync(join(src, n), join(dst, n));
  return dst;
}

/** Resolves once `condition()` holds, polling every few ms; rejects after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
