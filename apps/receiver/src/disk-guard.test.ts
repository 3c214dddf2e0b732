/**
 * @module disk-guard.test
 * The disk guard over an injected volume (the real statfs is exercised end to end on tmpfs in
 * test/src/durability/disk-guard.test.ts): free percent, the trip and the hysteresis of the clear, the
 * projection of bytes admitted between samples, one report per transition, a failing statfs, and 0 = off.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  clearPercent,
  createDiskGuard,
  freePercentOf,
  type DiskGuardObserver,
  type DiskSample,
  type VolumeSpace,
} from './disk-guard.js';

const TOTAL = 1_000_000;

/** A volume whose free space the test sets, an observer that records, and a guard over both (10 % threshold). */
function fixture(minFreePercent = 10) {
  let space: VolumeSpace | Error = { totalBytes: TOTAL, availableBytes: TOTAL };
  let reads = 0;
  const events: { kind: string; sample?: DiskSample; message?: string }[] = [];
  const observer: DiskGuardObserver = {
    tripped: (sample) => events.push({ kind: 'tripped', sample }),
    cleared: (sample) => events.push({ kind: 'cleared', sample }),
    checkFailed: (_path, message) => events.push({ kind: 'check_failed', message }),
  };
  const guard = createDiskGuard({
    path: '/wal',
    minFreePercent,
    intervalMs: 3_600_000,
    observer,
    readSpace: (path) => {
      reads++;
      assert.equal(path, '/wal');
      return space instanceof Error ? Promise.reject(space) : Promise.resolve(space);
    },
  });
  return {
    guard,
    events,
    reads: () => reads,
    /** Sets the free percent of the volume and takes a sample. */
    async free(percent: number) {
      space = { totalBytes: TOTAL, availableBytes: Math.round((TOTAL * percent) / 100) };
      await guard.sample();
    },
    async failing(error: Error) {
      space = error;
      await guard.sample();
    },
  };
}

describe('the disk guard', () => {
  test('free percent is available bytes over the volume size', () => {
    assert.equal(freePercentOf({ totalBytes: 200, availableBytes: 50 }), 25);
    assert.equal(freePercentOf({ totalBytes: 0, availableBytes: 0 }), 0);
  });

  test('below the threshold it refuses every export and is not ready, naming the free percent and the key; it reports the trip once', async () => {
    const f = fixture();
    await f.guard.start();
    try {
      assert.equal(f.guard.admit(100), null);
      assert.equal(f.guard.notReadyReason(), null);
      await f.free(9.5);
      const refusal = f.guard.admit(1);
      assert.match(refusal ?? '', /9\.5% free space, below receiver\.limits\.min_free_disk_percent \(10%\); retry$/);
      assert.match(f.guard.notReadyReason() ?? '', /9\.5% free space, below receiver\.limits\.min_free_disk_percent/);
      assert.doesNotMatch(refusal ?? '', /\/wal/, 'the client is not told the server path');
      await f.free(5);
      assert.notEqual(f.guard.admit(1), null);
      assert.deepEqual(
        f.events.map((e) => e.kind),
        ['tripped'],
      );
      assert.deepEqual(f.events[0]?.sample, {
        path: '/wal',
        totalBytes: TOTAL,
        freeBytes: 95_000,
        freePercent: 9.5,
        thresholdPercent: 10,
      });
    } finally {
      f.guard.stop();
    }
  });

  test('hysteresis: a tripped guard clears only at the threshold plus one point, and reports the clear once', async () => {
    const f = fixture();
    await f.guard.start();
    try {
      await f.free(9);
      await f.free(10);
      assert.notEqual(f.guard.admit(1), null, 'at the threshold: still tripped');
      await f.free(10.9);
      assert.notEqual(f.guard.notReadyReason(), null, 'below threshold + 1: still tripped');
      await f.free(11);
      assert.equal(f.guard.notReadyReason(), null);
      assert.equal(f.guard.admit(1), null);
      await f.free(10.5);
      assert.equal(f.guard.admit(1), null, 'above the threshold: not tripped again');
      assert.deepEqual(
        f.events.map((e) => e.kind),
        ['tripped', 'cleared'],
      );
      assert.equal(f.events[1]?.sample?.freePercent, 11);
    } finally {
      f.guard.stop();
    }
  });

  test('the clear point stays below 100 % for a threshold near it', () => {
    assert.equal(clearPercent(10), 11);
    assert.equal(clearPercent(99), 99.5);
  });

  test('bytes admitted since the last sample count against the free space: an export that would cross the threshold is refused without tripping', async () => {
    const f = fixture();
    await f.free(12);
    // 2 % of the volume (20,000 bytes) above the threshold.
    assert.equal(f.guard.admit(15_000), null);
    const refusal = f.guard.admit(6_000);
    assert.match(refusal ?? '', /9\.9% free space/);
    assert.equal(f.guard.notReadyReason(), null, 'readiness follows samples only');
    assert.equal(f.guard.admit(5_000), null, 'a smaller export still fits');
    assert.notEqual(f.guard.admit(1), null, 'the volume is at the threshold now');
    // A new sample replaces the projection.
    await f.free(12);
    assert.equal(f.guard.admit(15_000), null);
    assert.deepEqual(f.events, []);
  });

  test('a failing statfs keeps the last verdict and is reported once per run of failures', async () => {
    const f = fixture();
    await f.free(5);
    await f.failing(new Error('EIO: i/o error, statfs'));
    await f.failing(new Error('EIO: i/o error, statfs'));
    assert.notEqual(f.guard.admit(1), null, 'still tripped');
    await f.free(50);
    assert.equal(f.guard.admit(1), null);
    await f.failing(new Error('EIO again'));
    assert.equal(f.guard.admit(1), null, 'still clear');
    assert.deepEqual(
      f.events.map((e) => e.kind),
      ['tripped', 'check_failed', 'cleared', 'check_failed'],
    );
  });

  test('0 disables the guard: no statfs at all, every export admitted', async () => {
    const f = fixture(0);
    await f.guard.start();
    await f.free(0);
    assert.equal(f.reads(), 0);
    assert.equal(f.guard.admit(1 << 30), null);
    assert.equal(f.guard.notReadyReason(), null);
    f.guard.stop();
  });

  test('start() takes the first sample before it resolves, so the first export is already checked', async () => {
    const f = fixture();
    let resolveRead: (space: VolumeSpace) => void = () => undefined;
    const guard = createDiskGuard({
      path: '/wal',
      minFreePercent: 10,
      intervalMs: 3_600_000,
      readSpace: () => new Promise((resolve) => (resolveRead = resolve)),
    });
    let started = false;
    const starting = guard.start().then(() => (started = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(started, false);
    resolveRead({ totalBytes: TOTAL, availableBytes: 1 });
    await starting;
    assert.notEqual(guard.admit(1), null);
    guard.stop();
    f.guard.stop();
  });
});
