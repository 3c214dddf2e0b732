/**
 * @module admission-gate.test
 * Scenario RFC0058.5 (docs/design/query-governance.md): admission waits, then rejects. Time is paused (`ManualTimers`): timeouts
 * fire only when a test advances the clock, so no leg depends on real sleeps.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmissionGate } from './admission-gate.js';
import type { AdmitOutcome, Permit } from './admission-gate.js';
import { ManualTimers } from './testing/manual-timers.js';

/** Lets settled promises run their callbacks (microtasks only; no time passes). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

function gate(maxConcurrent: number, maxQueued: number, queueTimeoutMs = 10_000) {
  const timers = new ManualTimers();
  return { timers, gate: createAdmissionGate({ maxConcurrent, maxQueued, queueTimeoutMs, timers, now: timers.now }) };
}

/** Tracks an acquire's outcome without awaiting it. */
function track(p: Promise<AdmitOutcome>): { outcome: AdmitOutcome | undefined } {
  const box: { outcome: AdmitOutcome | undefined } = { outcome: undefined };
  void p.then((o) => (box.outcome = o));
  return box;
}

/** The outcome's status (a call, so the compiler does not narrow across awaits). */
function statusOf(box: { outcome: AdmitOutcome | undefined }): AdmitOutcome['status'] | undefined {
  return box.outcome?.status;
}

function permitOf(o: AdmitOutcome | undefined): Permit {
  if (o?.status !== 'admitted') assert.fail(`expected admitted, got ${JSON.stringify(o)}`);
  return o.permit;
}

describe('RFC0058.5: admission waits, then rejects', () => {
  test('RFC0058.5: a 32-arrival burst with 4 permits and 16 queue slots → 4 running, 16 waiting, 12 query_queue_full', async () => {
    const { gate: g } = gate(4, 16);
    // Arrivals interleave on the microtask queue; each check-and-enqueue is one synchronous step.
    const boxes = Array.from({ length: 32 }, () => track(Promise.resolve().then(() => g.acquire())));
    await flush();
    const admitted = boxes.filter((b) => b.outcome?.status === 'admitted');
    const full = boxes.filter((b) => b.outcome?.status === 'rejected' && b.outcome.kind === 'query_queue_full');
    assert.equal(admitted.length, 4);
    assert.equal(full.length, 12);
    assert.equal(boxes.filter((b) => b.outcome === undefined).length, 16);
    assert.equal(g.inFlight(), 4);
    assert.equal(g.queueDepth(), 16);
    // Every future completes: each permit released, in turn, until nothing is held or queued.
    for (let guard = 0; guard < 100; guard++) {
      const next = boxes.find((b) => b.outcome?.status === 'admitted' && !b.outcome.permit.released);
      if (!next) break;
      permitOf(next.outcome).release();
      await flush();
    }
    assert.equal(boxes.filter((b) => b.outcome?.status === 'admitted').length, 20);
    assert.equal(g.inFlight(), 0);
    assert.equal(g.queueDepth(), 0);
  });

  test('RFC0058.5: 32 concurrent arrivals against one held permit with max_queued_queries = 4 → 4 waiters, 28 full', async () => {
    const { gate: g } = gate(1, 4);
    const a = permitOf(await g.acquire());
    const boxes = Array.from({ length: 32 }, () => track(g.acquire()));
    await flush();
    assert.equal(boxes.filter((b) => b.outcome?.status === 'rejected').length, 28);
    assert.equal(g.queueDepth(), 4);
    a.release();
    await flush();
    assert.equal(g.queueDepth(), 3);
    assert.equal(g.inFlight(), 1);
  });

  test('RFC0058.5: C is rejected at once when the queue is full; B times out after queue_timeout_ms, not before', async () => {
    const { gate: g, timers } = gate(1, 1, 200);
    const a = permitOf(await g.acquire());
    const b = track(g.acquire());
    const c = await g.acquire();
    assert.deepEqual(c, { status: 'rejected', kind: 'query_queue_full', maxQueued: 1 });
    timers.advance(199);
    await flush();
    assert.equal(statusOf(b), undefined, 'still waiting at 199 ms');
    timers.advance(1);
    await flush();
    assert.deepEqual(b.outcome, { status: 'rejected', kind: 'query_queue_timeout', waitedMs: 200 });
    assert.equal(g.queueDepth(), 0, 'a timed-out waiter frees its slot');
    a.release();
    assert.equal(g.inFlight(), 0);
  });

  test('RFC0058.5: with a long timeout, B and a later D are admitted in the order they queued', async () => {
    const { gate: g, timers } = gate(1, 4);
    const a = permitOf(await g.acquire());
    const b = track(g.acquire());
    await flush();
    assert.equal(g.queueDepth(), 1); // B observed waiting before D arrives
    const d = track(g.acquire());
    a.release();
    await flush();
    assert.equal(statusOf(b), 'admitted');
    assert.equal(statusOf(d), undefined);
    permitOf(b.outcome).release();
    await flush();
    assert.equal(statusOf(d), 'admitted');
    assert.equal(timers.pending(), 0, 'admission disarms the waiters’ timeouts');
    timers.advance(60_000);
    await flush();
    assert.equal(statusOf(d), 'admitted');
    permitOf(d.outcome).release();
    assert.equal(g.inFlight(), 0);
  });

  test('a released permit goes to the oldest waiter, not to a later arrival', async () => {
    const { gate: g } = gate(1, 2);
    const a = permitOf(await g.acquire());
    const b = track(g.acquire());
    a.release();
    const late = track(g.acquire()); // arrives right after the release
    await flush();
    assert.equal(statusOf(b), 'admitted');
    assert.equal(statusOf(late), undefined);
    assert.equal(g.queueDepth(), 1);
  });

  test('RFC0058.5: a waiting query whose client disconnects leaves the queue', async () => {
    const { gate: g, timers } = gate(1, 1);
    const a = permitOf(await g.acquire());
    const abort = new AbortController();
    const b = track(g.acquire(abort.signal));
    await flush();
    assert.equal(g.queueDepth(), 1);
    abort.abort();
    await flush();
    assert.deepEqual(b.outcome, { status: 'rejected', kind: 'cancelled' });
    assert.equal(g.queueDepth(), 0);
    assert.equal(timers.pending(), 0);
    const c = track(g.acquire()); // the freed slot is usable again
    await flush();
    assert.equal(g.queueDepth(), 1);
    a.release();
    await flush();
    assert.equal(statusOf(c), 'admitted');
  });

  test('an already aborted signal is cancelled without taking a permit or a slot', async () => {
    const { gate: g } = gate(1, 1);
    const abort = new AbortController();
    abort.abort();
    assert.deepEqual(await g.acquire(abort.signal), { status: 'rejected', kind: 'cancelled' });
    assert.equal(g.inFlight(), 0);
  });

  test('RFC0058.5: a permit released on the error path hands over; release is idempotent', async () => {
    const { gate: g } = gate(1, 1);
    const run = async (): Promise<void> => {
      const o = await g.acquire();
      const permit = permitOf(o);
      try {
        throw new Error('query failed');
      } finally {
        permit.release();
        permit.release();
      }
    };
    const first = permitOf(await g.acquire());
    const failing = run().catch((e: Error) => e.message);
    await flush();
    assert.equal(g.queueDepth(), 1);
    first.release();
    assert.equal(await failing, 'query failed');
    assert.equal(g.inFlight(), 0, 'a double release does not free a second permit');
    const x = permitOf(await g.acquire());
    const y = track(g.acquire());
    x.release();
    x.release();
    await flush();
    assert.equal(statusOf(y), 'admitted');
    assert.equal(g.inFlight(), 1);
  });

  test('max_queued_queries = 0 rejects at once when every permit is taken', async () => {
    const { gate: g } = gate(2, 0);
    permitOf(await g.acquire());
    permitOf(await g.acquire());
    assert.deepEqual(await g.acquire(), { status: 'rejected', kind: 'query_queue_full', maxQueued: 0 });
    assert.equal(g.queueDepth(), 0);
  });

  test('options outside their ranges are wiring bugs', () => {
    assert.throws(() => createAdmissionGate({ maxConcurrent: 0, maxQueued: 1, queueTimeoutMs: 1 }), RangeError);
    assert.throws(() => createAdmissionGate({ maxConcurrent: 1, maxQueued: -1, queueTimeoutMs: 1 }), RangeError);
    assert.throws(() => createAdmissionGate({ maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 0 }), RangeError);
  });
});
