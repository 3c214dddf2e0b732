/**
 * @module wal-faults.test
 * Durability proven at the syscall, through the file port (`testing/fault-port.ts`): an ack never precedes the
 * fdatasync that covers its frame; an EIO or ENOSPC on a write, an fdatasync or a rotation step fences the WAL
 * (no ack, the segment cut back to the durable position) and appends resume without a reopen; a simulated power
 * loss at a random call never loses an acknowledged frame and recovers to a consistent tail. Each test fails if
 * the writer's fdatasync call is removed (docs/design/wal.md, "Proofs").
 */
import { afterEach, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { openWal } from './wal.js';
import type { Wal, WalFencedEvent, WalResumedEvent } from './wal.js';
import { WalError } from './errors.js';
import { FRAME_HEADER_BYTES, segmentFileName } from './frame-codec.js';
import type { WalPosition } from './position.js';
import { FaultPort, seededRandom } from './testing/fault-port.js';
import type { FaultRule, PortEvent } from './testing/fault-port.js';
import {
  checkPatternPayload,
  patternPayload,
  readAll,
  removeDir,
  segmentNames,
  tempDir,
  until,
} from './testing/helpers.js';

const segmentPath = (dir: string, p: WalPosition): string => join(dir, segmentFileName(p.segment));
const isCode =
  (code: string) =>
  (e: unknown): boolean =>
    e instanceof WalError && e.code === code;

/** Appends `payload` and records its ack in the port's event log (same order as the I/O). */
async function appendNoted(wal: Wal, port: FaultPort, payload: Uint8Array): Promise<WalPosition> {
  const p = await wal.append(payload);
  port.note('ack', segmentPath(wal.dir, p), p.offset - FRAME_HEADER_BYTES - payload.length, p.offset);
  return p;
}

/**
 * Asserts that every ack in `events` came after a successful fdatasync of its file that STARTED after every write
 * touching the frame's bytes had completed, and that those writes cover the whole frame. Returns the acks checked.
 */
function assertAcksFollowCoveringSyncs(events: readonly PortEvent[]): number {
  let checked = 0;
  events.forEach((ack, at) => {
    if (ack.kind !== 'note' || ack.label !== 'ack') return;
    let lastWrite = -1;
    const covered: Array<[number, number]> = [];
    for (let i = 0; i < at; i++) {
      const e = events[i]!;
      if (e.kind === 'write' && e.path === ack.path && e.start < ack.end && e.end > ack.start) {
        lastWrite = i;
        covered.push([Math.max(e.start, ack.start), Math.min(e.end, ack.end)]);
      }
    }
    covered.sort((a, b) => a[0] - b[0]);
    let reach = ack.start;
    for (const [a, b] of covered) if (a <= reach) reach = Math.max(reach, b);
    assert.equal(reach, ack.end, `frame [${ack.start}, ${ack.end}) of ${ack.path} acknowledged before it was written`);
    const synced = events.some((s, si) => {
      if (s.kind !== 'sync-start' || s.path !== ack.path || si <= lastWrite || si >= at) return false;
      return events.some((d, di) => di < at && d.kind === 'sync-end' && d.id === s.id && d.ok);
    });
    assert.ok(
      synced,
      `frame ending at ${ack.end} of ${ack.path} acknowledged without an fdatasync started after its write`,
    );
    checked++;
  });
  return checked;
}

void describe('acks follow the fdatasync that covers them', () => {
  void test('every ack of 320 appends from 8 writers over rotating segments comes after a successful fdatasync begun after its frame was written', async () => {
    const dir = tempDir();
    try {
      const port = new FaultPort();
      const wal = await openWal({ dir, groupCommitMs: 2, segmentBytes: 8192, filePort: port });
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let k = 0; k < 40; k++) {
            const i = next++;
            await appendNoted(wal, port, patternPayload(i, 20 + ((i * 97) % 700)));
          }
        }),
      );
      await wal.close();
      assert.ok(wal.stats().rotations >= 3, `rotations=${wal.stats().rotations}`);
      assert.equal(assertAcksFollowCoveringSyncs(port.events), 320);
      assert.deepEqual(
        (await readAll(dir, null, wal.durablePosition())).map(checkPatternPayload),
        Array.from({ length: 320 }, (_, i) => i),
      );
    } finally {
      removeDir(dir);
    }
  });
});

/** WALs a test opened: closed after each test, so a failed assertion never leaves a fence timer running. */
const opened = new Set<Wal>();
afterEach(async () => {
  for (const wal of opened) await wal.close().catch(() => undefined);
  opened.clear();
});

/** Opens a WAL on a fault port with hooks recorded; fences last at least `fenceRetryMs`. */
async function openFaulty(dir: string, segmentBytes = 1 << 20, fenceRetryMs = 100) {
  const port = new FaultPort();
  const fenced: WalFencedEvent[] = [];
  const resumed: WalResumedEvent[] = [];
  const wal = await openWal({
    dir,
    groupCommitMs: 5,
    segmentBytes,
    fenceRetryMs,
    filePort: port,
    onFenced: (e) => fenced.push(e),
    onResumed: (e) => resumed.push(e),
  });
  opened.add(wal);
  return { port, wal, fenced, resumed };
}

void describe('fence and resume', () => {
  void test('EIO on the group-commit fdatasync: its appends reject WAL_IO, the WAL fences and cuts back to the durable position without retrying that sync, refuses appends at once, then resumes and replays exactly the acknowledged frames', async () => {
    const dir = tempDir();
    try {
      const { port, wal, fenced, resumed } = await openFaulty(dir);
      const before = await Promise.all([0, 1, 2, 3, 4].map((i) => appendNoted(wal, port, patternPayload(i, 300))));
      port.inject({ op: 'fdatasync', errno: 'EIO' });
      const doomed = [5, 6, 7, 8, 9].map((i) => wal.append(patternPayload(i, 300)));
      for (const d of doomed) await assert.rejects(d, isCode('WAL_IO'));
      assert.equal(port.pendingFaults(), 0, 'the injected fdatasync failure was hit');
      assert.equal(wal.state().status, 'fenced');
      const calls = port.callCount();
      await assert.rejects(wal.append(patternPayload(10, 300)), isCode('WAL_FENCED'));
      assert.equal(port.callCount() - calls <= 4, true, 'a fenced append is refused without writing');
      assert.deepEqual(wal.durablePosition(), before.at(-1));

      await until(() => fenced.length === 1);
      const f = fenced[0]!;
      assert.equal(f.cut, true);
      assert.equal(f.error.errno, 'EIO');
      assert.deepEqual(f.durable, before.at(-1));
      const path = segmentPath(dir, before.at(-1)!);
      assert.equal(fs.statSync(path).size, before.at(-1)!.offset, 'the segment ends at its last acknowledged frame');
      // After the failed sync, the next thing done to the file is the cut: no sync was retried and trusted.
      const failedAt = port.events.findIndex((e) => e.kind === 'sync-end' && !e.ok);
      const nextOnFile = port.events.slice(failedAt + 1).find((e) => e.kind !== 'note' && e.path === path);
      assert.deepEqual(nextOnFile, { kind: 'truncate', path, length: before.at(-1)!.offset });

      await until(() => wal.state().status === 'ok');
      assert.equal(resumed.length, 1);
      assert.ok(resumed[0]!.fencedMs >= 90, `fenced for ${resumed[0]!.fencedMs} ms`);
      await Promise.all([11, 12, 13].map((i) => appendNoted(wal, port, patternPayload(i, 300))));
      await wal.close();
      assertAcksFollowCoveringSyncs(port.events);
      const again = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
      assert.equal(again.recovery.healed, null, 'nothing was left to heal: the cut removed it');
      assert.deepEqual(
        (await readAll(dir, null, again.durablePosition())).map(checkPatternPayload),
        [0, 1, 2, 3, 4, 11, 12, 13],
      );
      await again.close();
      assert.deepEqual(wal.stats().fences, 1);
    } finally {
      removeDir(dir);
    }
  });

  void test('ENOSPC part-way through a write: the appends in it reject WAL_IO, the partial frame is cut away, and appends resume without a reopen', async () => {
    const dir = tempDir();
    try {
      const { port, wal, fenced } = await openFaulty(dir);
      const kept = await appendNoted(wal, port, patternPayload(0, 1000));
      port.inject({ op: 'writev', errno: 'ENOSPC', partialBytes: 700 });
      await assert.rejects(wal.append(patternPayload(1, 1000)), isCode('WAL_IO'));
      await until(() => fenced.length === 1);
      assert.equal(fenced[0]!.error.errno, 'ENOSPC');
      assert.equal(fs.statSync(segmentPath(dir, kept)).size, kept.offset);
      await until(() => wal.state().status === 'ok');
      const after = await appendNoted(wal, port, patternPayload(2, 1000));
      assert.equal(after.offset, kept.offset + FRAME_HEADER_BYTES + 1000);
      await wal.close();
      assertAcksFollowCoveringSyncs(port.events);
      const again = await openWal({ dir, groupCommitMs: 1, segmentBytes: 1 << 20 });
      assert.equal(again.recovery.healed, null);
      assert.deepEqual((await readAll(dir, null, again.durablePosition())).map(checkPatternPayload), [0, 2]);
      await again.close();
    } finally {
      removeDir(dir);
    }
  });

  void test('a cut that fails stays fenced and is retried every fenceRetryMs until it is durable', async () => {
    const dir = tempDir();
    try {
      const { port, wal, fenced, resumed } = await openFaulty(dir, 1 << 20, 60);
      await appendNoted(wal, port, patternPayload(0, 10));
      // The group-commit sync fails, then the cut's own sync fails twice.
      port.inject({ op: 'fdatasync', errno: 'EIO', times: 3 });
      await assert.rejects(wal.append(patternPayload(1, 10)), isCode('WAL_IO'));
      await until(() => fenced.length === 1);
      assert.equal(fenced[0]!.cut, false);
      assert.equal(fenced[0]!.cutError?.errno, 'EIO');
      const state = wal.state();
      assert.ok(state.status === 'fenced' && !state.cut);
      await until(() => resumed.length === 1);
      assert.ok(resumed[0]!.fencedMs >= 2 * 60 - 10, `two retries a cadence apart: ${resumed[0]!.fencedMs} ms`);
      assert.equal(port.pendingFaults(), 0);
      await appendNoted(wal, port, patternPayload(2, 10));
      await wal.close();
      assertAcksFollowCoveringSyncs(port.events);
      assert.deepEqual((await readAll(dir, null, wal.durablePosition())).map(checkPatternPayload), [0, 2]);
    } finally {
      removeDir(dir);
    }
  });

  void test('EIO on the fdatasync before a rotation and ENOSPC creating the next segment: both fence, resume, and leave consecutive perfect segments', async () => {
    const dir = tempDir();
    try {
      const { port, wal, fenced, resumed } = await openFaulty(dir, 600, 100);
      const acked: number[] = [];
      const push = async (i: number, length = 250): Promise<void> => {
        await appendNoted(wal, port, patternPayload(i, length));
        acked.push(i);
      };
      await push(0);
      port.inject({ op: 'fdatasync', errno: 'EIO' });
      await assert.rejects(wal.append(patternPayload(1, 400)), isCode('WAL_IO')); // fills the segment: rotation
      await until(() => resumed.length === 1);
      assert.equal(fenced[0]!.error.message.includes('before rotation'), true, fenced[0]!.error.message);
      port.inject({ op: 'open', errno: 'ENOSPC' });
      await push(2, 400); // fills segment 1 (acknowledged by the rotation's sync); segment 2 cannot be created
      await until(() => wal.state().status === 'fenced');
      await assert.rejects(wal.append(patternPayload(3, 10)), isCode('WAL_FENCED'));
      await until(() => resumed.length === 2);
      assert.equal(fenced[1]!.error.errno, 'ENOSPC');
      for (let i = 4; i < 10; i++) await push(i);
      await wal.close();
      assertAcksFollowCoveringSyncs(port.events);
      assert.ok(segmentNames(dir).length >= 3);
      const again = await openWal({ dir, groupCommitMs: 1, segmentBytes: 600 });
      assert.deepEqual((await readAll(dir, null, again.durablePosition())).map(checkPatternPayload), acked);
      await again.close();
    } finally {
      removeDir(dir);
    }
  });
});

void describe('the cut re-writes the page it falls in', () => {
  void test('after an EIO whose writeback tore the page of the last acknowledged frames, the cut re-writes that page, so a power cut after the resume loses none of them', async () => {
    const dir = tempDir();
    try {
      const { port, wal, resumed } = await openFaulty(dir, 1 << 20, 20);
      const acked: number[] = [];
      for (let i = 0; i < 5; i++) {
        await appendNoted(wal, port, patternPayload(i, 100));
        acked.push(i);
      }
      port.inject({ op: 'fdatasync', errno: 'EIO', tearsPage: true });
      await assert.rejects(wal.append(patternPayload(5, 100)), isCode('WAL_IO'));
      await until(() => resumed.length === 1);
      for (let i = 6; i < 8; i++) {
        await appendNoted(wal, port, patternPayload(i, 100));
        acked.push(i);
      }
      port.crashNow();
      opened.delete(wal); // its calls never return any more: closing it would wait forever
      await port.releaseDescriptors();
      const image = tempDir();
      try {
        port.writeImage(image);
        const recovered = await openWal({ dir: image, groupCommitMs: 1, segmentBytes: 1 << 20 });
        assert.deepEqual((await readAll(image, null, recovered.durablePosition())).map(checkPatternPayload), acked);
        await recovered.close();
      } finally {
        removeDir(image);
      }
    } finally {
      removeDir(dir);
    }
  });
});

const POWER_LOSS_RUNS = Number(process.env.SLUICE_WAL_POWER_LOSS_RUNS ?? 300);
const POWER_LOSS_SEED = Number(process.env.SLUICE_WAL_POWER_LOSS_SEED ?? Date.now() % 1_000_000);
/** The model decides what survives; the real files only carry the bytes, so tmpfs keeps 300 runs fast. */
const SCRATCH = fs.existsSync('/dev/shm') ? '/dev/shm' : undefined;

/** One power-loss run: returns what it saw, or throws naming the seed. */
async function powerLossRun(
  seed: number,
): Promise<{ acked: number; replayed: number; fenced: boolean; healed: boolean }> {
  const random = seededRandom(seed);
  const dir = fs.mkdtempSync(join(SCRATCH ?? tempDir(), 'sluice-wal-pl-'));
  const imageDir = fs.mkdtempSync(join(SCRATCH ?? tempDir(), 'sluice-wal-img-'));
  try {
    const port = new FaultPort(random);
    const wal = await openWal({
      dir,
      groupCommitMs: Math.floor(random() * 3),
      segmentBytes: 512 + Math.floor(random() * 4096),
      fenceRetryMs: Math.floor(random() * 4),
      filePort: port,
    });
    if (random() < 0.5) {
      const faults: FaultRule[] = [
        { op: 'fdatasync', errno: 'EIO' },
        { op: 'writev', errno: 'ENOSPC', partialBytes: Math.floor(random() * 600) },
        { op: 'open', errno: 'ENOSPC' },
        { op: 'fsyncDir', errno: 'EIO' },
        { op: 'ftruncate', errno: 'EIO' },
      ];
      const rule = faults[Math.floor(random() * faults.length)]!;
      port.inject({ ...rule, skip: Math.floor(random() * 8), times: 1 + Math.floor(random() * 2) });
    }
    port.crashAtCallNumber(port.callCount() + 1 + Math.floor(random() * 80));
    const acked: number[] = [];
    let next = 0;
    let crashed = false;
    void port.crashed.then(() => (crashed = true));
    const sizes = Array.from({ length: 4096 }, () => Math.floor(random() * 700));
    for (let w = 0; w < 4; w++) {
      void (async () => {
        while (!crashed) {
          const i = next++;
          try {
            await wal.append(patternPayload(i, sizes[i % sizes.length]!));
            acked.push(i);
          } catch {
            await new Promise((r) => setTimeout(r, 1)); // fenced: the exporter retries later
          }
        }
      })();
    }
    const guard = setTimeout(() => port.crashNow(), 3000);
    await port.crashed;
    clearTimeout(guard);
    await new Promise((r) => setImmediate(r));
    await port.releaseDescriptors();
    const fenced = wal.stats().fences > 0;

    port.writeImage(imageDir);
    const recovered = await openWal({ dir: imageDir, groupCommitMs: 0, segmentBytes: 4096 });
    const replayed = (await readAll(imageDir, null, recovered.durablePosition())).map(checkPatternPayload);
    for (let k = 1; k < replayed.length; k++) {
      assert.ok(replayed[k - 1]! < replayed[k]!, `seed ${seed}: replay out of append order: ${replayed.join(',')}`);
    }
    const present = new Set(replayed);
    const lost = acked.filter((i) => !present.has(i));
    assert.deepEqual(lost, [], `seed ${seed}: acknowledged frames lost after a power loss`);
    // The tail is consistent: the log continues after the recovered frames.
    const tail = await recovered.append(patternPayload(1_000_000, 33));
    await recovered.close();
    assert.deepEqual(
      (await readAll(imageDir, null, tail)).map(checkPatternPayload),
      [...replayed, 1_000_000],
      `seed ${seed}: the log does not continue after recovery`,
    );
    return { acked: acked.length, replayed: replayed.length, fenced, healed: recovered.recovery.healed !== null };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(imageDir, { recursive: true, force: true });
  }
}

void describe('power loss', () => {
  void test(`a power cut at a random call (${POWER_LOSS_RUNS} seeded runs, half with an injected EIO/ENOSPC) never loses an acknowledged frame; recovery replays them in order and the log continues`, async (t) => {
    let acked = 0;
    let fenced = 0;
    let healed = 0;
    let withAcks = 0;
    for (let run = 0; run < POWER_LOSS_RUNS; run++) {
      const r = await powerLossRun(POWER_LOSS_SEED + run);
      acked += r.acked;
      if (r.acked > 0) withAcks++;
      if (r.fenced) fenced++;
      if (r.healed) healed++;
    }
    assert.ok(withAcks > POWER_LOSS_RUNS / 2, `most runs acknowledged something before the cut: ${withAcks}`);
    assert.ok(fenced > 0, 'some runs fenced before the cut');
    t.diagnostic(
      `seed ${POWER_LOSS_SEED}: ${POWER_LOSS_RUNS} runs, ${acked} acknowledged frames, ${withAcks} runs with acks, ` +
        `${fenced} fenced, ${healed} recoveries healed a torn tail`,
    );
  });
});
