/**
 * @module sort-run.test
 * Spilled sort runs round-trip rows exactly (every field kind, frame boundaries included), and a truncated run is
 * a clear error rather than silently fewer rows.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { StoredLogRow } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { openSortRun, writeSortRun } from './sort-run.js';

async function readAll(path: string, size: number): Promise<{ rows: StoredLogRow[]; frames: number[] }> {
  const reader = await openSortRun(path, size);
  const rows: StoredLogRow[] = [];
  const frames: number[] = [];
  try {
    for (let f = await reader.next(); f !== null; f = await reader.next()) {
      frames.push(f.length);
      rows.push(...f);
    }
  } finally {
    await reader.close();
  }
  return { rows, frames };
}

describe('sort runs', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-sort-run-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('rows come back exactly, in frames of frameRows', async () => {
    const rows = sampleRows(1_000, { seed: 3 });
    const path = join(dir, 'a.bin');
    const size = await writeSortRun(path, rows, 64);
    const back = await readAll(path, size);
    assert.deepEqual(back.frames, [...Array<number>(15).fill(64), 40]);
    assert.deepEqual(back.rows, rows);
  });

  test('an empty run has no frames', async () => {
    const path = join(dir, 'empty.bin');
    const size = await writeSortRun(path, [], 64);
    assert.equal(size, 0);
    assert.deepEqual((await readAll(path, size)).rows, []);
  });

  test('a truncated run is an error naming the file and offset', async () => {
    const path = join(dir, 'cut.bin');
    const size = await writeSortRun(path, sampleRows(300, { seed: 4 }), 100);
    await truncate(path, size - 10);
    await assert.rejects(readAll(path, size), /sort run .*cut\.bin is truncated at byte/);
  });
});
