/**
 * @module wal.test
 * Append/read round trips, rotation, group commit, limits, lifecycle and fail-closed behaviour on real files.
 */
import { test, describe } from 'node:test';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { openWal } from './wal.js';
import type { WalFencedEvent, WalResumedEvent } from './wal.js';
import { WalError } from './errors.js';
import { compareWalPositions } from './position.js';
import type { WalPosition } from './position.js';
import { FRAME_HEADER_BYTES, SEGMENT_HEADER_BYTES } from './frame-codec.js';
import { readWal } from './wal-reader.js';
import {
  checkPatternPayload,
  patternPayload,
  readAll,
  removeDir,
  segmentNames,
  tempDir,
  until,
} from './testing/helpers.js';

void describe('append and read back', () => {
  void test('appends resolve with strictly increasing positions and readWal returns exactly the payloads in order', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 2, segmentBytes: 1 << 20 });
      const payloads = Array.from({ length: 50 }, (_, i) => patternPayload(i, i * 13));
      const positions = await Promise.all(payloads.map((p) => wal.append(p)));
      for (let i = 1; i < positions.length; i++) assert.ok(compareWalPositions(positions[i - 1]!, positions[i]!) < 0);
      assert.deepEqual(positions[0], {
        segment: 1,
        offset: SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + payloads[0]!.length,
      });
      assert.deepEqual(wal.durablePosition(), positions.at(-1));
      const read = await readAll(dir, null, wal.durablePosition());
      assert.deepEqual(
        read.map((p) => Buffer.from(p)),
        payloads.map((p) => Buffer.from(p)),
      );
      const fromMiddle = [];
      for await (const e of readWal(dir, positions[19]!, positions[29]!)) fromMiddle.push(e);
      assert.deepEqual(
        fromMiddle.map((e) => checkPatternPayload(e.payload)),
        Array.from({ length: 10 }, (_, i) => 20 + i),
      );
      assert.deepEqual(
        fromMiddle.map((e) => e.position),
        positions.slice(20, 30),
      );
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('an empty payload is a valid frame', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 4096 });
      const p = await wal.append(new Uint8Array(0));
      assert.deepEqual(await readAll(dir, null, p), [new Uint8Array(0)]);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('rotation across many small segments keeps order, and reading resumes across segment boundaries', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 512 });
      const payloads = Array.from({ length: 120 }, (_, i) => patternPayload(i, 10 + ((i * 37) % 200)));
      const positions: WalPosition[] = [];
      // Half concurrently (rotation queues appends), half sequentially.
      positions.push(...(await Promise.all(payloads.slice(0, 60).map((p) => wal.append(p)))));
      for (const p of payloads.slice(60)) positions.push(await wal.append(p));
      for (let i = 1; i < positions.length; i++) assert.ok(compareWalPositions(positions[i - 1]!, positions[i]!) < 0);
      assert.ok(wal.stats().rotations >= 10, `rotations=${wal.stats().rotations}`);
      assert.ok(segmentNames(dir).length >= 10);
      const all = await readAll(dir, null, wal.durablePosition());
      assert.deepEqual(
        all.map(checkPatternPayload),
        payloads.map((_, i) => i),
      );
      for (const k of [0, 7, 59, 60, 118]) {
        const rest = await readAll(dir, positions[k]!, wal.durablePosition());
        assert.deepEqual(
          rest.map(checkPatternPayload),
          payloads.slice(k + 1).map((_, i) => k + 1 + i),
        );
      }
      await wal.close();
      // Reopen continues after the last segment.
      const again = await openWal({ dir, groupCommitMs: 1, segmentBytes: 512 });
      const p = await again.append(patternPayload(999, 50));
      assert.ok(compareWalPositions(p, positions.at(-1)!) > 0);
      assert.deepEqual((await readAll(dir, positions.at(-1)!, p)).map(checkPatternPayload), [999]);
      await again.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('a frame larger than the read chunk is read back intact', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 24 });
      const big = patternPayload(1, 3 * 1024 * 1024 + 17);
      const small = patternPayload(2, 100);
      await wal.append(small);
      await wal.append(big);
      const end = await wal.append(small);
      const got = [];
      for await (const e of readWal(dir, null, end, { chunkBytes: 64 * 1024 }))
        got.push(checkPatternPayload(e.payload));
      assert.deepEqual(got, [2, 1, 2]);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });
});

void describe('group commit', () => {
  void test('200 concurrent appends in one window are covered by a handful of fdatasyncs', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 50, segmentBytes: 1 << 24 });
      const before = wal.stats().syncs;
      await Promise.all(Array.from({ length: 200 }, (_, i) => wal.append(patternPayload(i, 100))));
      const syncs = wal.stats().syncs - before;
      assert.ok(syncs >= 1 && syncs <= 3, `syncs=${syncs}`);
      assert.equal(wal.stats().appends, 200);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('an append does not resolve before the group-commit fdatasync that covers it', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 300, segmentBytes: 1 << 20 });
      let resolved = false;
      const p = wal.append(patternPayload(1, 10)).then((pos) => {
        resolved = true;
        return pos;
      });
      await new Promise((r) => setTimeout(r, 60));
      assert.equal(resolved, false, 'acknowledged before the window closed');
      assert.equal(wal.stats().syncs, 0);
      assert.deepEqual(wal.durablePosition(), { segment: 1, offset: SEGMENT_HEADER_BYTES });
      const pos = await p;
      assert.equal(wal.stats().syncs, 1);
      assert.deepEqual(wal.durablePosition(), pos);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('onDurable reports each advance of the durable position, after the appends it covers', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 300 });
      const seen: WalPosition[] = [];
      const off = wal.onDurable((p) => seen.push(p));
      let last: WalPosition | null = null;
      for (let i = 0; i < 10; i++) last = await wal.append(patternPayload(i, 60));
      assert.deepEqual(seen.at(-1), last);
      for (let i = 1; i < seen.length; i++) assert.ok(compareWalPositions(seen[i - 1]!, seen[i]!) < 0);
      off();
      await wal.append(patternPayload(10, 60));
      assert.deepEqual(seen.at(-1), last);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });
});

void describe('limits and lifecycle', () => {
  void test('a payload over maxFrameBytes rejects with WAL_FRAME_TOO_LARGE and writes nothing', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 4096, maxFrameBytes: 1000 });
      const before = wal.durablePosition();
      await assert.rejects(
        wal.append(new Uint8Array(1001)),
        (e: unknown) => e instanceof WalError && e.code === 'WAL_FRAME_TOO_LARGE',
      );
      const ok = await wal.append(new Uint8Array(1000));
      assert.equal(ok.offset - before.offset, FRAME_HEADER_BYTES + 1000);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('close waits for pending appends; appends after close reject with WAL_CLOSED', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 10_000, segmentBytes: 1 << 20 });
      const pending = wal.append(patternPayload(1, 10));
      await wal.close(); // must not wait for the 10 s window
      const p = await pending;
      await assert.rejects(
        wal.append(new Uint8Array(1)),
        (e: unknown) => e instanceof WalError && e.code === 'WAL_CLOSED',
      );
      assert.deepEqual((await readAll(dir, null, p)).map(checkPatternPayload), [1]);
    } finally {
      removeDir(dir);
    }
  });

  void test('backlogBytes counts frame bytes after the checkpoint, across segments', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 200 });
      const positions: WalPosition[] = [];
      for (let i = 0; i < 6; i++) positions.push(await wal.append(new Uint8Array(92))); // 100-byte frames
      assert.equal(wal.backlogBytes(null), 600);
      assert.equal(wal.backlogBytes(positions[1]!), 400);
      assert.equal(wal.backlogBytes(positions[5]!), 0);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });
});

void describe('failure handling', () => {
  void test('a failed rotation fences the WAL: queued appends reject WAL_IO, later ones WAL_FENCED at once, and appends resume once the next segment can be created', async () => {
    const dir = tempDir();
    try {
      const fenced: WalFencedEvent[] = [];
      const resumed: WalResumedEvent[] = [];
      const wal = await openWal({
        dir,
        groupCommitMs: 1,
        segmentBytes: 200,
        fenceRetryMs: 50,
        onFenced: (e) => fenced.push(e),
        onResumed: (e) => resumed.push(e),
      });
      await wal.append(patternPayload(0, 50));
      removeDir(dir); // the next segment cannot be created
      const filling = wal.append(patternPayload(1, 200)); // reaches segmentBytes → rotation
      const queued = wal.append(patternPayload(2, 10)); // waits for the rotation
      const filled = await filling; // its bytes were fdatasync'd in the old segment before the rotation failed
      await assert.rejects(queued, (e: unknown) => e instanceof WalError && e.code === 'WAL_IO');
      await assert.rejects(
        wal.append(patternPayload(3, 10)),
        (e: unknown) => e instanceof WalError && e.code === 'WAL_FENCED',
      );
      const state = wal.state();
      assert.equal(state.status, 'fenced');
      assert.equal(wal.stats().fenced, true);
      assert.deepEqual(wal.durablePosition(), filled);
      await until(() => fenced.length === 1);
      assert.equal(fenced[0]!.cut, false, 'the cut cannot create the next segment while the directory is gone');
      assert.equal(fenced[0]!.error.errno, 'ENOENT');
      fs.mkdirSync(dir);
      await until(() => wal.state().status === 'ok');
      assert.equal(resumed.length, 1);
      const after = await wal.append(patternPayload(4, 10));
      assert.deepEqual(after, { segment: 2, offset: SEGMENT_HEADER_BYTES + FRAME_HEADER_BYTES + 10 });
      assert.deepEqual((await readAll(dir, null, after)).map(checkPatternPayload), [4]);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });
});
