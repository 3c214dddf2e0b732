/**
 * @module bounded-stop.test
 * `server.shutdown_timeout_secs`: a stop that finishes in time is `stopped`; one still running at the bound is
 * abandoned, naming the step it was cut in and the WAL not yet stored; a stop that throws is `failed`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { stopWithin, type StopTimers } from './bounded-stop.js';
import type { RunningServer, StopStage } from './start-server.js';

/** Timers fired by hand. */
function manualTimers(): StopTimers & { fire(): void; pending(): number; readonly armedMs: number[] } {
  const armed = new Map<number, () => void>();
  const armedMs: number[] = [];
  let next = 0;
  return {
    armedMs,
    setTimeout(cb, ms) {
      armed.set(++next, cb);
      armedMs.push(ms);
      return next;
    },
    clearTimeout(h) {
      armed.delete(h as number);
    },
    fire() {
      for (const [h, cb] of [...armed]) {
        armed.delete(h);
        cb();
      }
    },
    pending: () => armed.size,
  };
}

const walUnstored = { walDurable: { segment: 3, offset: 4096 }, sinkCheckpoint: { segment: 2, offset: 128 } };

/** A server whose stop walks `stages` and then waits for `finish` (or throws `error`). */
function fakeServer(stages: StopStage[], error?: Error) {
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const server: Pick<RunningServer, 'stop' | 'receiver'> = {
    receiver: { unfinished: () => walUnstored } as unknown as RunningServer['receiver'],
    async stop(onStage) {
      for (const s of stages) onStage?.(s);
      if (error) throw error;
      await finished;
    },
  };
  return { server, finish };
}

describe('a bounded stop (server.shutdown_timeout_secs)', () => {
  test('a stop that finishes before the bound is stopped, and its timer is cleared', async () => {
    const timers = manualTimers();
    const { server, finish } = fakeServer(['compactor', 'querier']);
    const outcome = stopWithin(server, 30_000, timers);
    finish();
    assert.equal((await outcome).status, 'stopped');
    assert.equal(timers.pending(), 0);
  });

  test('a stop still running at the bound is abandoned, naming the step it was cut in and the WAL not yet stored', async () => {
    const timers = manualTimers();
    const { server } = fakeServer(['compactor', 'querier', 'receiver']);
    const outcome = stopWithin(server, 30_000, timers);
    assert.deepEqual(timers.armedMs, [30_000], 'one timer, at the bound');
    await Promise.resolve();
    timers.fire();
    const o = await outcome;
    assert.equal(o.status, 'abandoned');
    assert.equal(o.status === 'abandoned' && o.stage, 'receiver');
    assert.deepEqual(o.status === 'abandoned' && o.walUnstored, walUnstored);
  });

  test('a stop that throws is failed, not abandoned', async () => {
    const timers = manualTimers();
    const { server } = fakeServer(['compactor'], new Error('boom'));
    const o = await stopWithin(server, 30_000, timers);
    assert.equal(o.status, 'failed');
    assert.equal(timers.pending(), 0);
  });
});
