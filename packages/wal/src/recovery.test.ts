/**
 * @module recovery.test
 * Torn-tail healing at every byte, corruption detection, and a fast-check crash property.
 */
import { test, describe } from 'node:test';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { openWal } from './wal.js';
import { WalError } from './errors.js';
import { FRAME_HEADER_BYTES, SEGMENT_HEADER_BYTES, segmentFileName } from './frame-codec.js';
import { readWal } from './wal-reader.js';
import type { WalPosition } from './position.js';
import {
  checkPatternPayload,
  patternPayload,
  readAll,
  removeDir,
  segmentNames,
  snapshotDir,
  tempDir,
} from './testing/helpers.js';

const isCorrupt = (e: unknown): boolean => e instanceof WalError && e.code === 'WAL_CORRUPT';

/** Writes `count` pattern frames into a fresh single-segment WAL and returns the segment bytes. */
async function writeSegment(
  count: number,
  size: (i: number) => number,
): Promise<{ bytes: Buffer; lastFrameStart: number }> {
  const dir = tempDir();
  try {
    const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
    let prev: WalPosition = wal.durablePosition();
    let lastFrameStart = 0;
    for (let i = 0; i < count; i++) {
      lastFrameStart = prev.offset;
      prev = await wal.append(patternPayload(i, size(i)));
    }
    await wal.close();
    return { bytes: fs.readFileSync(join(dir, segmentFileName(1))), lastFrameStart };
  } finally {
    removeDir(dir);
  }
}

void describe('recovery heals a torn tail of the newest segment', () => {
  void test('truncating the newest segment at every byte offset within its last frame heals to the previous frame', async () => {
    const { bytes, lastFrameStart } = await writeSegment(5, (i) => 20 + i * 7);
    for (let cut = lastFrameStart; cut < bytes.length; cut++) {
      const dir = tempDir();
      try {
        fs.writeFileSync(join(dir, segmentFileName(1)), bytes.subarray(0, cut));
        const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
        if (cut > lastFrameStart) assert.deepEqual(wal.recovery.healed?.to, lastFrameStart, `cut=${cut}`);
        else assert.equal(wal.recovery.healed, null);
        assert.equal(fs.statSync(join(dir, segmentFileName(1))).size, lastFrameStart, `cut=${cut}`);
        assert.deepEqual(wal.durablePosition(), { segment: 1, offset: lastFrameStart });
        const p = await wal.append(patternPayload(100, 33));
        assert.deepEqual((await readAll(dir, null, p)).map(checkPatternPayload), [0, 1, 2, 3, 100], `cut=${cut}`);
        await wal.close();
      } finally {
        removeDir(dir);
      }
    }
  });

  void test('a complete last frame with a bad checksum, and a zero-filled tail, are torn tails', async () => {
    const { bytes, lastFrameStart } = await writeSegment(4, () => 50);
    const variants: Array<[string, Buffer]> = [
      [
        'flipped payload byte in the last frame',
        (() => {
          const b = Buffer.from(bytes);
          b[b.length - 3]! ^= 0x40;
          return b;
        })(),
      ],
      [
        'flipped length byte in the last frame',
        (() => {
          const b = Buffer.from(bytes);
          b[lastFrameStart]! ^= 0x01;
          return b;
        })(),
      ],
      ['4 KiB of zeros after the last frame', Buffer.concat([bytes, Buffer.alloc(4096)])],
    ];
    for (const [name, content] of variants) {
      const dir = tempDir();
      try {
        fs.writeFileSync(join(dir, segmentFileName(1)), content);
        const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
        assert.notEqual(wal.recovery.healed, null, name);
        const expected = name.startsWith('4 KiB') ? [0, 1, 2, 3] : [0, 1, 2];
        assert.deepEqual((await readAll(dir, null, wal.durablePosition())).map(checkPatternPayload), expected, name);
        await wal.close();
      } finally {
        removeDir(dir);
      }
    }
  });

  void test('a newest segment holding only a partial header is re-initialised', async () => {
    const dir = tempDir();
    try {
      const first = await openWal({ dir, groupCommitMs: 1, segmentBytes: 100 });
      const p = await first.append(patternPayload(1, 90)); // fills segment 1 → rotates to 2
      await first.close();
      assert.deepEqual(segmentNames(dir), [segmentFileName(1), segmentFileName(2)]);
      fs.truncateSync(join(dir, segmentFileName(2)), 7);
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 100 });
      assert.equal(fs.statSync(join(dir, segmentFileName(2))).size, SEGMENT_HEADER_BYTES);
      const q = await wal.append(patternPayload(2, 10));
      assert.deepEqual((await readAll(dir, null, q)).map(checkPatternPayload), [1, 2]);
      assert.ok(q.segment === 2 && p.segment === 1);
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });
});

void describe('recovery rejects corruption', () => {
  void test('a flipped byte in the middle of an older segment makes openWal throw WAL_CORRUPT naming file and offset', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1000 });
      for (let i = 0; i < 30; i++) await wal.append(patternPayload(i, 90));
      await wal.close();
      assert.ok(segmentNames(dir).length >= 3);
      const older = join(dir, segmentFileName(1));
      const b = fs.readFileSync(older);
      b[SEGMENT_HEADER_BYTES + 2 * (FRAME_HEADER_BYTES + 90) + 40]! ^= 0x10; // inside frame #2's payload
      fs.writeFileSync(older, b);
      await assert.rejects(openWal({ dir, groupCommitMs: 1, segmentBytes: 1000 }), (e: unknown) => {
        assert.ok(isCorrupt(e));
        const w = e as WalError;
        assert.equal(w.file, older);
        assert.equal(w.offset, SEGMENT_HEADER_BYTES + 2 * (FRAME_HEADER_BYTES + 90));
        return true;
      });
      // The reader refuses the damaged frame too.
      await assert.rejects(readAll(dir, null, { segment: 2, offset: SEGMENT_HEADER_BYTES }), isCorrupt);
    } finally {
      removeDir(dir);
    }
  });

  void test('a truncated older segment is corruption, not a torn tail', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 500 });
      for (let i = 0; i < 20; i++) await wal.append(patternPayload(i, 90));
      await wal.close();
      const older = join(dir, segmentFileName(1));
      fs.truncateSync(older, fs.statSync(older).size - 5);
      await assert.rejects(openWal({ dir, groupCommitMs: 1, segmentBytes: 500 }), isCorrupt);
    } finally {
      removeDir(dir);
    }
  });

  void test('a bad frame followed by a valid frame in the newest segment is corruption, not a torn tail', async () => {
    const { bytes } = await writeSegment(5, () => 40);
    const dir = tempDir();
    try {
      const b = Buffer.from(bytes);
      b[SEGMENT_HEADER_BYTES + 2 * (FRAME_HEADER_BYTES + 40) + 20]! ^= 0x01; // frame #2 of 5
      fs.writeFileSync(join(dir, segmentFileName(1)), b);
      await assert.rejects(openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 }), isCorrupt);
      assert.equal(fs.statSync(join(dir, segmentFileName(1))).size, bytes.length, 'nothing was truncated');
    } finally {
      removeDir(dir);
    }
  });

  void test('a gap in the segment sequence is corruption', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 200 });
      for (let i = 0; i < 10; i++) await wal.append(patternPayload(i, 90));
      await wal.close();
      fs.unlinkSync(join(dir, segmentFileName(2)));
      await assert.rejects(openWal({ dir, groupCommitMs: 1, segmentBytes: 200 }), isCorrupt);
    } finally {
      removeDir(dir);
    }
  });
});

void describe('crash property', () => {
  void test('after a crash at a random point, recovered frames are a prefix of what was written and include every acknowledged one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(700), { minLength: 1, maxLength: 25 }),
        fc.array(fc.nat(700), { maxLength: 25 }),
        fc.integer({ min: 120, max: 3000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom('none', 'zeros', 'random'),
        async (ackedSizes, inFlightSizes, segmentBytes, cutFraction, garbage) => {
          const dir = tempDir();
          let snap: string | null = null;
          try {
            const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes });
            const written: Uint8Array[] = [];
            for (const [i, n] of ackedSizes.entries()) {
              const p = patternPayload(i, n);
              written.push(p);
              await wal.append(p);
            }
            const acked = written.length;
            const durable = wal.durablePosition();
            const inFlight = inFlightSizes.map((n, j) => {
              const p = patternPayload(acked + j, n);
              written.push(p);
              return wal.append(p);
            });
            snap = snapshotDir(dir); // the "crash": what the files hold right now, before any further sync
            await Promise.allSettled(inFlight);
            await wal.close();
            // Tear the newest segment of the snapshot anywhere after the durable point.
            const names = segmentNames(snap);
            const newest = join(snap, names.at(-1)!);
            const size = fs.statSync(newest).size;
            const newestSeq = Number(names.at(-1)!.slice(0, 20));
            const floor = newestSeq === durable.segment ? durable.offset : 0;
            const cut = floor + Math.floor(cutFraction * (size - floor));
            fs.truncateSync(newest, cut);
            if (garbage !== 'none' && cut > floor) {
              const g =
                garbage === 'zeros'
                  ? Buffer.alloc(200)
                  : Buffer.from(Array.from({ length: 200 }, (_, k) => (k * 97 + cut) & 0xff));
              fs.appendFileSync(newest, g);
            }
            const again = await openWal({ dir: snap, groupCommitMs: 1, segmentBytes });
            const got = (await readAll(snap, null, again.durablePosition())).map(checkPatternPayload);
            await again.close();
            assert.ok(got.length >= acked, `lost acknowledged frames: got ${got.length}, acked ${acked}`);
            assert.ok(got.length <= written.length);
            assert.deepEqual(
              got,
              written.slice(0, got.length).map((_, i) => i),
            );
          } finally {
            removeDir(dir);
            if (snap !== null) removeDir(snap);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

void describe('reader bounds', () => {
  void test('readWal never reads past until, even while later frames are being written', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 5, segmentBytes: 1 << 20 });
      const a = await wal.append(patternPayload(0, 10));
      const pending = wal.append(patternPayload(1, 10)); // written, maybe not yet synced
      const got = [];
      for await (const e of readWal(dir, null, a)) got.push(checkPatternPayload(e.payload));
      assert.deepEqual(got, [0]);
      await pending;
      await wal.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('a position that is not a frame boundary is reported as corruption', async () => {
    const dir = tempDir();
    try {
      const wal = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
      await wal.append(patternPayload(0, 100));
      const b = await wal.append(patternPayload(1, 100));
      await wal.close();
      await assert.rejects(readAll(dir, { segment: 1, offset: SEGMENT_HEADER_BYTES + 5 }, b), isCorrupt);
      await assert.rejects(readAll(dir, null, { segment: 1, offset: b.offset - 1 }), isCorrupt);
    } finally {
      removeDir(dir);
    }
  });
});
