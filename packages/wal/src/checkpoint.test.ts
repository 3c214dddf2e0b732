/**
 * @module checkpoint.test
 * Checkpoint round trip, atomic replace, corruption detection; segment retention below a checkpoint.
 */
import { test, describe } from 'node:test';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CHECKPOINT_FILE, readCheckpoint, writeCheckpoint } from './checkpoint.js';
import { deleteSegmentsBelow } from './retention.js';
import { openWal } from './wal.js';
import { WalError } from './errors.js';
import { segmentFileName } from './frame-codec.js';
import type { WalPosition } from './position.js';
import { checkPatternPayload, patternPayload, readAll, removeDir, segmentNames, tempDir } from './testing/helpers.js';

const isCorrupt = (e: unknown): boolean => e instanceof WalError && e.code === 'WAL_CORRUPT';

void describe('checkpoint', () => {
  void test('round-trips position and a multi-MiB payload; absent checkpoint reads as null', async () => {
    const dir = tempDir();
    try {
      assert.equal(await readCheckpoint(dir), null);
      const payload = randomBytes(3 * 1024 * 1024 + 5);
      await writeCheckpoint(dir, { segment: 7, offset: 123456 }, payload);
      const got = await readCheckpoint(dir);
      assert.deepEqual(got?.position, { segment: 7, offset: 123456 });
      assert.ok(Buffer.from(got!.payload).equals(payload));
    } finally {
      removeDir(dir);
    }
  });

  void test('a second write replaces the first atomically and leaves no temp file', async () => {
    const dir = tempDir();
    try {
      await writeCheckpoint(dir, { segment: 1, offset: 100 }, Buffer.from('old state'));
      await writeCheckpoint(dir, { segment: 2, offset: 20 }, Buffer.from('new'));
      const got = await readCheckpoint(dir);
      assert.deepEqual(got?.position, { segment: 2, offset: 20 });
      assert.equal(Buffer.from(got!.payload).toString(), 'new');
      assert.deepEqual(fs.readdirSync(dir), [CHECKPOINT_FILE]);
      // A stale temp file from a crashed write does not affect the committed checkpoint.
      fs.writeFileSync(join(dir, 'CHECKPOINT.tmp'), 'garbage');
      assert.deepEqual((await readCheckpoint(dir))?.position, { segment: 2, offset: 20 });
    } finally {
      removeDir(dir);
    }
  });

  void test('every single-byte corruption and truncation of the checkpoint file is detected', async () => {
    const dir = tempDir();
    try {
      await writeCheckpoint(dir, { segment: 3, offset: 4567 }, Buffer.from('miner snapshot'));
      const path = join(dir, CHECKPOINT_FILE);
      const good = fs.readFileSync(path);
      for (let i = 0; i < good.length; i++) {
        const b = Buffer.from(good);
        b[i]! ^= 0x04;
        fs.writeFileSync(path, b);
        await assert.rejects(readCheckpoint(dir), isCorrupt, `flip at ${i}`);
      }
      for (const cut of [0, 10, 31, good.length - 1]) {
        fs.writeFileSync(path, good.subarray(0, cut));
        await assert.rejects(readCheckpoint(dir), isCorrupt, `cut at ${cut}`);
      }
    } finally {
      removeDir(dir);
    }
  });
});

void describe('deleteSegmentsBelow', () => {
  void test('deletes only whole segments before the checkpoint segment; reading from the checkpoint still works', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 300 });
      const positions: WalPosition[] = [];
      for (let i = 0; i < 20; i++) positions.push(await wal.append(patternPayload(i, 90)));
      const checkpoint = positions[9]!;
      const before = segmentNames(dir);
      const deleted = await deleteSegmentsBelow(dir, checkpoint);
      assert.deepEqual(
        deleted,
        Array.from({ length: checkpoint.segment - 1 }, (_, i) => i + 1),
      );
      assert.ok(segmentNames(dir).includes(segmentFileName(checkpoint.segment)), 'the checkpoint segment is kept');
      assert.deepEqual(
        segmentNames(dir),
        before.filter((n) => Number(n.slice(0, 20)) >= checkpoint.segment),
      );
      const rest = await readAll(dir, checkpoint, wal.durablePosition());
      assert.deepEqual(
        rest.map(checkPatternPayload),
        Array.from({ length: 10 }, (_, i) => 10 + i),
      );
      // Appends continue, and the WAL reopens with the leading segments gone.
      const more = await wal.append(patternPayload(20, 10));
      await wal.close();
      const again = await openWal({ dir, groupCommitMs: 1, segmentBytes: 300 });
      assert.deepEqual((await readAll(dir, checkpoint, again.durablePosition())).map(checkPatternPayload).at(-1), 20);
      assert.ok(again.durablePosition().segment >= more.segment);
      await again.close();
      // Deleting below the active segment's own start never removes it.
      assert.deepEqual(await deleteSegmentsBelow(dir, checkpoint), []);
    } finally {
      removeDir(dir);
    }
  });
});
