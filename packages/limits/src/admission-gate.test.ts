/**
 * @module admission-gate.test
 * Scenario RFC0058.5 (docs/design/query-governance.md): admission waits, then rejects. Time is paused (`ManualTimers`): timeouts
 * fire only when a test advances the clock, so no leg depends on real sleeps.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createAdmissionGate } from './admission-gate.js';
import type { AdmitOutcome, Permit } from './admission-gate.js';
import { ManualTimers } from './testing/manual-timers.js';

/** Lets settled promises run their callbacks (microtasks only; no time passes). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

function gate(maxConcurrent: number, maxQueued: number, queueTimeoutMs = 10_000, maxPerTenant?: number) {
  const timers = new ManualTimers();
  return {
    timers,
    gate: createAdmissionGate({
      maxConcurrent,
      maxQueued,
      queueTimeoutMs,
      timers,
      now: timers.now,
      ...(maxPerTenant === undefined ? {} : { maxPerTenant }),
    }),
  };
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
    assert.deepEqual(b.outcome, {
      status: 'rejected',
      kind: 'query_queue_timeout',
      waitedMs: 200,
      queueTimeoutMs: 200,
    });
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
    for (const maxPerTenant of [0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => createAdmissionGate({ maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 1, maxPerTenant }),
        RangeError,
      );
    }
  });
});

describe('per-tenant share (max_concurrent_queries_per_tenant)', () => {
  test('a tenant at its share is refused at once, takes no queue slot, and other tenants still queue', async () => {
    const { gate: g } = gate(1, 4, 10_000, 2);
    permitOf(await g.acquire(undefined, 't1'));
    const b = track(g.acquire(undefined, 't1'));
    assert.deepEqual(await g.acquire(undefined, 't1'), {
      status: 'rejected',
      kind: 'query_tenant_busy',
      maxPerTenant: 2,
    });
    assert.equal(g.queueDepth(), 1, 'the refused arrival took no queue slot');
    assert.equal(g.tenantLoad('t1'), 2);
    const c = track(g.acquire(undefined, 't2'));
    const d = track(g.acquire(undefined, 't3'));
    await flush();
    assert.deepEqual([statusOf(b), statusOf(c), statusOf(d)], [undefined, undefined, undefined]);
    assert.deepEqual([g.queueDepth(), g.tenantLoad('t2'), g.tenantLoad('t3')], [3, 1, 1]);
  });

  test('the share applies even when a permit is free, and is checked before the queue', async () => {
    const { gate: g } = gate(4, 0, 10_000, 1);
    permitOf(await g.acquire(undefined, 't1'));
    assert.equal(g.inFlight(), 1);
    assert.deepEqual(await g.acquire(undefined, 't1'), {
      status: 'rejected',
      kind: 'query_tenant_busy',
      maxPerTenant: 1,
    });
    permitOf(await g.acquire(undefined, 't2'));
    const full = gate(1, 0, 10_000, 1).gate;
    permitOf(await full.acquire(undefined, 't1'));
    assert.deepEqual(await full.acquire(undefined, 't1'), {
      status: 'rejected',
      kind: 'query_tenant_busy',
      maxPerTenant: 1,
    });
    assert.deepEqual(await full.acquire(undefined, 't2'), {
      status: 'rejected',
      kind: 'query_queue_full',
      maxQueued: 0,
    });
    assert.equal(full.tenantLoad('t2'), 0, 'a queue_full arrival is not counted');
  });

  test('admitsAtOnce says what acquire would do now: no when every permit is held, someone is queued, or the tenant is at its share', async () => {
    const { gate: g } = gate(2, 4, 10_000, 2);
    assert.equal(g.admitsAtOnce('t1'), true);
    const a = permitOf(await g.acquire(undefined, 't1'));
    assert.equal(g.admitsAtOnce(), true);
    permitOf(await g.acquire(undefined, 't1'));
    assert.equal(g.admitsAtOnce('t2'), false, 'every permit held');
    const queued = track(g.acquire(undefined, 't2'));
    a.release();
    await flush();
    assert.equal(statusOf(queued), 'admitted');
    assert.deepEqual([g.inFlight(), g.tenantLoad('t1')], [2, 1]);
    const open = gate(4, 4, 10_000, 1).gate;
    permitOf(await open.acquire(undefined, 't1'));
    assert.equal(open.admitsAtOnce('t1'), false, 'the tenant is at its share though permits are free');
    assert.equal(open.admitsAtOnce('t2'), true);
    assert.equal(open.admitsAtOnce(), true, 'without a tenant only the permits count');
    const busy = gate(1, 4, 10_000).gate;
    const held = permitOf(await busy.acquire());
    const waiting = track(busy.acquire());
    held.release();
    assert.equal(busy.admitsAtOnce(), false, 'a permit passed to a waiter is not free');
    await flush();
    assert.equal(statusOf(waiting), 'admitted');
  });

  test('a handed-over permit moves the count to the waiter’s tenant; timeout and cancel give the share back', async () => {
    const { gate: g, timers } = gate(1, 4, 100, 1);
    const a = permitOf(await g.acquire(undefined, 't1'));
    const b = track(g.acquire(undefined, 't2'));
    a.release();
    a.release();
    await flush();
    assert.equal(statusOf(b), 'admitted');
    assert.deepEqual([g.tenantLoad('t1'), g.tenantLoad('t2'), g.inFlight()], [0, 1, 1]);
    const timedOut = track(g.acquire(undefined, 't1'));
    assert.equal(g.tenantLoad('t1'), 1);
    timers.advance(100);
    await flush();
    assert.equal(timedOut.outcome?.status === 'rejected' && timedOut.outcome.kind, 'query_queue_timeout');
    assert.equal(g.tenantLoad('t1'), 0);
    const abort = new AbortController();
    const cancelled = track(g.acquire(abort.signal, 't1'));
    assert.equal(g.tenantLoad('t1'), 1);
    abort.abort();
    await flush();
    assert.deepEqual(cancelled.outcome, { status: 'rejected', kind: 'cancelled' });
    assert.equal(g.tenantLoad('t1'), 0);
    const again = track(g.acquire(undefined, 't1')); // the share is usable again
    permitOf(b.outcome).release();
    await flush();
    assert.equal(statusOf(again), 'admitted');
    assert.deepEqual([g.tenantLoad('t1'), g.tenantLoad('t2')], [1, 0]);
    permitOf(again.outcome).release();
    assert.deepEqual([g.tenantLoad('t1'), g.inFlight(), g.queueDepth()], [0, 0, 0]);
  });

  test('without a tenant, or without maxPerTenant, nothing is refused for the tenant', async () => {
    const { gate: g } = gate(2, 2, 10_000, 1);
    permitOf(await g.acquire());
    permitOf(await g.acquire());
    assert.equal(g.tenantLoad(''), 0);
    const open = gate(3, 0).gate;
    for (let i = 0; i < 3; i++) permitOf(await open.acquire(undefined, 't1'));
    assert.equal(open.tenantLoad('t1'), 3, 'counted for metrics even without a cap');
  });

  type Op =
    | { readonly op: 'acquire'; readonly tenant: number }
    | { readonly op: 'release'; readonly pick: number }
    | { readonly op: 'cancel'; readonly pick: number }
    | { readonly op: 'advance'; readonly ms: number };
  const TENANTS = ['a', 'b', 'c', undefined] as const;
  const TIMEOUT = 100;
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ op: fc.constant('acquire' as const), tenant: fc.nat(TENANTS.length - 1) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat(7) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.nat(TIMEOUT) }) },
  );

  test('property: random acquire/release/timeout/cancel over 3 tenants match a model, outcome by outcome', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.nat(4),
        fc.integer({ min: 1, max: 3 }),
        fc.array(opArb, { maxLength: 60 }),
        async (maxConcurrent, maxQueued, maxPerTenant, ops) => {
          const { gate: g, timers } = gate(maxConcurrent, maxQueued, TIMEOUT, maxPerTenant);
          // The model: who runs, who waits (FIFO, with deadlines), and what each arrival should have been told.
          type Entry = { readonly id: number; readonly tenant: string | undefined; readonly deadline: number };
          const running: Entry[] = [];
          const queue: Entry[] = [];
          const expected: Array<string | undefined> = [];
          const boxes: Array<{ outcome: AdmitOutcome | undefined }> = [];
          const aborts: AbortController[] = [];
          let now = 0;
          const load = (t: string | undefined): number =>
            [...running, ...queue].filter((e) => t !== undefined && e.tenant === t).length;
          for (const o of ops) {
            if (o.op === 'acquire') {
              const tenant = TENANTS[o.tenant];
              const id = boxes.length;
              const entry = { id, tenant, deadline: now + TIMEOUT };
              if (tenant !== undefined && load(tenant) >= maxPerTenant) expected.push('query_tenant_busy');
              else if (running.length < maxConcurrent && queue.length === 0) {
                running.push(entry);
                expected.push('admitted');
              } else if (queue.length >= maxQueued) expected.push('query_queue_full');
              else {
                queue.push(entry);
                expected.push(undefined);
              }
              const abort = new AbortController();
              aborts.push(abort);
              boxes.push(track(g.acquire(abort.signal, tenant)));
            } else if (o.op === 'release') {
              const r = running[o.pick % Math.max(1, running.length)];
              if (!r) continue;
              running.splice(running.indexOf(r), 1);
              const next = queue.shift();
              if (next) {
                running.push(next);
                expected[next.id] = 'admitted';
              }
              permitOf(boxes[r.id]?.outcome).release();
            } else if (o.op === 'cancel') {
              const w = queue[o.pick % Math.max(1, queue.length)];
              if (!w) continue;
              queue.splice(queue.indexOf(w), 1);
              expected[w.id] = 'cancelled';
              aborts[w.id]?.abort();
            } else {
              now += o.ms;
              while (queue[0] && queue[0].deadline <= now)
                expected[(queue.shift() as Entry).id] = 'query_queue_timeout';
              timers.advance(o.ms);
            }
            await flush();
            const seen = boxes.map((b) => (b.outcome?.status === 'rejected' ? b.outcome.kind : b.outcome?.status));
            assert.deepEqual(seen, expected);
            for (const t of TENANTS) if (t !== undefined) assert.equal(g.tenantLoad(t), load(t), `tenant ${t}`);
            assert.equal(g.inFlight(), running.length);
            assert.equal(g.queueDepth(), queue.length);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
