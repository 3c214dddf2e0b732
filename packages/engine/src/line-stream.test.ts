/**
 * @module line-stream.test
 * The flow control of a streamed result (docs/design/query-governance.md, "Streamed results"), deterministic: a
 * sink whose batches are taken only when the test says so. At most {@link STREAM_BATCHES_IN_FLIGHT} batches are
 * handed over and not yet taken; each stays reserved on the pool until taken; `max_result_bytes` stops the line
 * that would cross it (enforce) or reports it (observe); a stopped query's pending batches reject.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMemoryPool } from '@sluice/limits';
import { QueryAbort } from './failures.js';
import { LineStream, STREAM_BATCHES_IN_FLIGHT } from './line-stream.js';
import { MemoryTracker } from './tracker.js';

/** A sink that records each batch and lets the test take them one by one. */
function heldSink(): {
  sink: { send(batch: Uint8Array): Promise<void> };
  batches: string[];
  take(): void;
  refuseAll(): void;
} {
  const batches: string[] = [];
  const waiting: { resolve(): void; reject(e: Error): void }[] = [];
  return {
    batches,
    sink: {
      send(batch) {
        batches.push(Buffer.from(batch).toString('utf8'));
        return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
      },
    },
    take: () => waiting.shift()?.resolve(),
    refuseAll: () => {
      for (const w of waiting.splice(0)) w.reject(new Error('stopped'));
    },
  };
}

const LINE = JSON.stringify({ body: 'x'.repeat(90) }); // 101 bytes, 102 with its newline

describe('LineStream: a few batches, each reserved until taken', () => {
  test(`at most ${STREAM_BATCHES_IN_FLIGHT} batches not yet taken; the pusher waits, and each batch is reserved until taken`, async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const tracker = new MemoryTracker(pool.createQuery('q'));
    const held = heldSink();
    const stream = new LineStream({
      sink: held.sink,
      tracker,
      maxResultBytes: 1 << 20,
      enforcement: 'enforce',
      batchBytes: 1000,
    });
    let pushed = 0;
    let waitingOn: Promise<void> | undefined;
    // Push until the stream makes us wait for a batch that is not taken.
    for (; pushed < 1000; pushed++) {
      const wait = stream.push(LINE);
      if (wait === undefined) continue;
      const settled = await Promise.race([wait.then(() => true), new Promise((r) => setImmediate(() => r(false)))]);
      if (!settled) {
        waitingOn = wait;
        break;
      }
    }
    assert.ok(waitingOn !== undefined, 'the pusher is made to wait');
    assert.equal(held.batches.length, STREAM_BATCHES_IN_FLIGHT, 'no more batches than the window were handed over');
    const batchBytes = held.batches.reduce((n, b) => n + Buffer.byteLength(b), 0);
    const linesHandedOver = held.batches.join('').split('\n').length - 1;
    // Exactly: the batches not yet taken (encoded), and the lines of the batch being filled (as strings, each
    // reserved as UTF-16 plus bookkeeping).
    const filling = (pushed + 1 - linesHandedOver) * (2 * LINE.length + 96);
    assert.equal(pool.reserved(), batchBytes + filling);
    held.take();
    await waitingOn;
    assert.equal(held.batches.length, STREAM_BATCHES_IN_FLIGHT + 1, 'one taken, one more handed over');
    const end = stream.end();
    for (let i = 0; i < 10; i++) {
      held.take();
      await new Promise((r) => setImmediate(r));
    }
    await end;
    assert.equal(pool.reserved(), 0, 'everything taken is given back');
    const lines = held.batches.join('').split('\n');
    assert.equal(lines.pop(), '', 'every batch is whole lines');
    assert.equal(lines.length, stream.lines);
  });

  test('enforce: the line that would cross max_result_bytes is not sent; observe: it is, and reported', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const enforce = new LineStream({
      sink: { send: () => Promise.resolve() },
      tracker: new MemoryTracker(pool.createQuery('e')),
      maxResultBytes: 250,
      enforcement: 'enforce',
    });
    void enforce.push(LINE);
    void enforce.push(LINE);
    assert.throws(
      () => enforce.push(LINE),
      (e: unknown) => e instanceof QueryAbort && e.failure.kind === 'query_result_limit',
    );
    assert.equal(enforce.bytes, 204, 'the crossing line was not counted as sent');
    const observe = new LineStream({
      sink: { send: () => Promise.resolve() },
      tracker: new MemoryTracker(pool.createQuery('o')),
      maxResultBytes: 250,
      enforcement: 'observe',
    });
    for (let i = 0; i < 3; i++) void observe.push(LINE);
    assert.deepEqual(observe.crossed, { limit: 'max_result_bytes', value: 306, ceiling: 250 });
  });

  test('a stopped query: the pending batch rejects, and the pusher unwinds', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const tracker = new MemoryTracker(pool.createQuery('q'));
    const held = heldSink();
    const stream = new LineStream({
      sink: held.sink,
      tracker,
      maxResultBytes: 1 << 20,
      enforcement: 'enforce',
      batchBytes: 1,
    });
    void stream.push(LINE);
    void stream.push(LINE);
    const blocked = stream.push(LINE);
    assert.ok(blocked !== undefined);
    held.refuseAll();
    await assert.rejects(blocked, /stopped/);
    tracker.releaseAll();
    assert.equal(pool.reserved(), 0);
  });
});
