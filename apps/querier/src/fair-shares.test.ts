/**
 * @module fair-shares.test
 * Fair shares (docs/design/query-governance.md, "Fair shares"), at the querier level: the per-query memory
 * ceiling (`max_query_memory_bytes`) turns a query too big for its share into a 422 before it can make every
 * concurrent query `query_memory_contended`; the per-tenant share (`max_concurrent_queries_per_tenant`) refuses
 * a tenant's next query `query_tenant_busy` before it takes a queue slot, on HTTP and MCP alike.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualTimers } from '@sluice/limits/testing';
import {
  BlockingWorkers,
  COUNT,
  WINDOW,
  createStoreFixture,
  harness as makeHarness,
  query,
  rpc,
  tracked,
  until,
  type Harness,
  type HarnessOptions,
} from './testing/query-harness.js';
import { nonCacheHeldBytes } from './worker-footer-cache.js';

let fixture: { readonly dir: string; remove(): Promise<void> };
before(async () => {
  // 300 rows of ~20 KB bodies: a row group of 100 decodes to ~2 MB of body text, reserved before it is read.
  fixture = await createStoreFixture(['wide'], 300, (i) => `${i} ${'w'.repeat(20_000)}`);
});
after(async () => {
  await fixture.remove();
});

const harness = (o: Omit<HarnessOptions, 'dir'>): Harness => makeHarness({ ...o, dir: fixture.dir });
/** A querier with both lanes on test workers whose jobs block until the test finishes or stops them. */
function lanes(o: {
  readonly maxConcurrent: number;
  readonly queryTimeoutMs: number;
  readonly lightMs: number;
  readonly laneMs: number;
  readonly leaveFreeBytes: number;
  readonly maxQueued?: number;
  readonly timers?: ManualTimers;
}): { h: Harness; general: BlockingWorkers; lightWorkers: BlockingWorkers } {
  const general = new BlockingWorkers();
  const lightWorkers = new BlockingWorkers();
  const { lightMs, laneMs, leaveFreeBytes, ...rest } = o;
  const h = harness({ ...rest, workers: general, light: { workers: lightWorkers, lightMs, laneMs, leaveFreeBytes } });
  return { h, general, lightWorkers };
}

// Needles without five word bytes in a row, which no row-group filter can rule out: every body is read. Two
// searches of the body decode it and keep its pages (one search alone reads it search-only, in far less memory).
const SCAN = `contains(body, "~") or contains(body, "~~") | ${WINDOW} | count`;

const DASHBOARD = `severity >= error | ${WINDOW} | count`;
const STORM = `true | ${WINDOW} | count by body`;

/**
 * One general permit and no queue, light_query_ms 1000: the dashboard query has run light once, the storm query
 * is remembered as heavy (refused on both lanes), and a storm query now holds the only general permit, so the
 * general lane cannot take anything at once. Light-worker calls 0–1 and general calls 0–1 are used.
 */
async function panelBesideStorm(): Promise<{
  timers: ManualTimers;
  h: Harness;
  general: BlockingWorkers;
  lightWorkers: BlockingWorkers;
  storm: ReturnType<typeof query>;
}> {
  const timers = new ManualTimers();
  const { h, general, lightWorkers } = lanes({
    maxConcurrent: 1,
    maxQueued: 0,
    queryTimeoutMs: 30_000,
    timers,
    lightMs: 1000,
    laneMs: 1000,
    leaveFreeBytes: 0,
  });
  const first = query(h, 'acme', { query: DASHBOARD });
  await until(() => lightWorkers.calls.length === 1, 'probe');
  lightWorkers.calls[0]?.finish();
  assert.equal((await first).status, 200);
  const heavy = query(h, 'acme', { query: STORM });
  await until(() => lightWorkers.calls.length === 2, 'probing');
  lightWorkers.calls[1]?.fail({ kind: 'query_memory_limit', message: 'over the light ceiling' });
  await until(() => general.calls.length === 1, 'moved');
  general.calls[0]?.fail({ kind: 'query_memory_limit', message: 'over the query ceiling' });
  assert.equal((await heavy).status, 422);
  const storm = query(h, 'acme', { query: STORM });
  await until(() => general.calls.length === 2, 'the storm holding the general permit');
  return { timers, h, general, lightWorkers, storm };
}

describe('the per-query memory ceiling', () => {
  test('a query over max_query_memory_bytes but within the pool is 422 query_memory_limit naming the per-query key', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, poolBytes: 64 << 20, maxQueryBytes: 1 << 20 });
    try {
      const answer = await query(h, 'wide', { query: SCAN });
      assert.equal(answer.status, 422, JSON.stringify(answer.json));
      assert.equal(answer.json.error.kind, 'query_memory_limit');
      assert.equal(answer.json.error.limit, 'querier.limits.max_query_memory_bytes');
      assert.equal(answer.json.error.ceiling, 1 << 20);
      assert.ok(answer.json.error.value > 1 << 20, 'value: what the query needed, above the ceiling');
      assert.ok(answer.json.error.value < 64 << 20, 'within the pool: only the per-query ceiling refused it');
      assert.match(answer.json.error.message, /querier\.limits\.max_query_memory_bytes/);
      assert.equal(answer.json.error.retryable, false);
      assert.equal(nonCacheHeldBytes(h.pool), 0);
    } finally {
      await h.close();
    }
  });

  test('the same query with the ceiling at the pool is served', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, poolBytes: 64 << 20, maxQueryBytes: 64 << 20 });
    try {
      const answer = await query(h, 'wide', { query: SCAN });
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
    } finally {
      await h.close();
    }
  });
});

describe('the per-tenant share', () => {
  test('a tenant at max_concurrent_queries_per_tenant is refused 503 query_tenant_busy at once, taking no queue slot; other tenants still queue', async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, maxQueued: 2, queryTimeoutMs: 0, maxPerTenant: 2, workers });
    const a1 = query(h, 'a', { query: COUNT });
    await until(() => workers.calls.length === 1, 'a1 running');
    const a2 = query(h, 'a', { query: COUNT });
    await until(() => h.gate.queueDepth() === 1, 'a2 queued');
    const a3 = await query(h, 'a', { query: COUNT });
    assert.equal(a3.status, 503);
    assert.deepEqual(
      { ...a3.json.error, message: undefined },
      {
        kind: 'query_tenant_busy',
        message: undefined,
        limit: 'querier.limits.max_concurrent_queries_per_tenant',
        value: null,
        ceiling: 2,
        retryable: true,
      },
    );
    assert.equal(h.gate.queueDepth(), 1, 'the refused query took no queue slot');
    // The same rule on MCP: -32603 (busy, retry) with data.kind.
    const mcp = (await (
      await rpc(h, 'a', { id: 1, method: 'tools/call', params: { name: 'query_logs', arguments: { query: COUNT } } })
    ).json()) as { error?: { code: number; data?: { kind?: string } } };
    assert.equal(mcp.error?.code, -32603);
    assert.equal(mcp.error?.data?.kind, 'query_tenant_busy');
    // Another tenant takes the remaining queue slot.
    const b = query(h, 'b', { query: COUNT });
    await until(() => h.gate.queueDepth() === 2, 'b queued beside a2');
    for (let i = 0; i < 3; i++) {
      await until(() => workers.calls.length === i + 1, `call ${i + 1} running`);
      workers.calls[i]?.finish();
    }
    assert.deepEqual([(await a1).status, (await a2).status, (await b).status], [200, 200, 200]);
    assert.equal(h.gate.inFlight(), 0);
  });
});

describe('the light lane: dashboards keep their own permit while a storm fills the general lane', () => {
  test('a query whose last run was light is admitted through the light lane while the storm fills the general lane and is refused query_queue_full', async () => {
    const timers = new ManualTimers();
    const { h, general, lightWorkers } = lanes({
      maxConcurrent: 1,
      maxQueued: 1,
      queryTimeoutMs: 30_000,
      timers,
      lightMs: 2000,
      laneMs: 2000,
      leaveFreeBytes: 4 << 20,
    });
    // First run of the dashboard query: unknown, the light permit is free, so it probes the light lane; it
    // finishes at once (light).
    const first = query(h, 'acme', { query: DASHBOARD });
    await until(() => lightWorkers.calls.length === 1, 'first dashboard run probing the light lane');
    assert.equal(lightWorkers.calls[0]?.leaveFreeBytes, 0, 'the light lane may use the share left free for it');
    lightWorkers.calls[0]?.finish();
    assert.equal((await first).status, 200);
    // The storm query probes too, outgrows the lane at light_query_ms, and is moved to the general lane: its cost
    // is the time on both lanes, so it is remembered as heavy.
    const slow = tracked(query(h, 'acme', { query: STORM }));
    await until(() => lightWorkers.calls.length === 2, 'storm probing the light lane');
    timers.advance(2000);
    await until(() => general.calls.length === 1, 'storm moved to the general lane');
    assert.equal(lightWorkers.calls[1]?.stopped, true, 'the probe was stopped on the light lane');
    assert.equal(h.lightGate?.inFlight(), 0, 'and gave its light permit back');
    assert.equal(general.calls[0]?.leaveFreeBytes, 4 << 20, "the general lane leaves the light lane's share free");
    timers.advance(1500);
    general.calls[0]?.finish(64 << 20); // and big: over light_query_memory_bytes
    assert.equal((await slow.promise).status, 200, 'slow and big: never probed again');
    // The storm now fills the general lane: one running, one queued, the next refused at once.
    const storm1 = query(h, 'acme', { query: STORM });
    await until(() => general.calls.length === 2, 'storm holding the general permit');
    const storm2 = query(h, 'acme', { query: STORM });
    await until(() => h.gate.queueDepth() === 1, 'storm queued');
    const refused = await query(h, 'acme', { query: STORM });
    assert.equal(refused.json.error.kind, 'query_queue_full', 'a heavy query never enters the light lane again');
    // The dashboard query is admitted at once through the light lane, on its own worker.
    const dashboard = query(h, 'acme', { query: DASHBOARD });
    await until(() => lightWorkers.calls.length === 3, 'the dashboard query on the light lane');
    // With the light permit busy, a query never seen before is not probed: general lane, refused.
    const unknown = await query(h, 'acme', { query: `severity >= warn | ${WINDOW} | count` });
    assert.equal(unknown.json.error.kind, 'query_queue_full', 'a probe never queues on the light lane');
    lightWorkers.calls[2]?.finish();
    assert.equal((await dashboard).status, 200);
    general.calls[1]?.finish();
    await until(() => general.calls.length === 3, 'queued storm admitted');
    general.calls[2]?.finish();
    assert.deepEqual([(await storm1).status, (await storm2).status], [200, 200]);
    assert.equal(h.gate.inFlight() + (h.lightGate?.inFlight() ?? 0), 0);
  });

  test('a light query whose runs outgrow the light lane is moved each time; it keeps the light lane through 2 slow runs, then probes only when a light permit is free, else runs in the general lane', async () => {
    const timers = new ManualTimers();
    const { h, general, lightWorkers } = lanes({
      maxConcurrent: 2,
      queryTimeoutMs: 30_000,
      timers,
      lightMs: 1000,
      laneMs: 1000,
      leaveFreeBytes: 0,
    });
    const first = query(h, 'acme', { query: DASHBOARD });
    await until(() => lightWorkers.calls.length === 1, 'probe');
    timers.advance(999);
    lightWorkers.calls[0]?.finish();
    assert.equal((await first).status, 200);
    // Light now. Each of the next runs outgrows the lane and is moved to the general lane; while it stays
    // light it queues on the light lane behind another light-lane query rather than take the general lane.
    let light = 1;
    let moved = 0;
    // Two slow runs are tolerated (docs/design/query-governance.md), the third demotes it.
    for (let slow = 1; slow <= 3; slow++) {
      const other = query(h, 'acme', { query: `severity >= warn | ${WINDOW} | count` });
      await until(() => lightWorkers.calls.length === light + 1, 'another query holding the light permit');
      light++;
      const next = tracked(query(h, 'acme', { query: DASHBOARD }));
      await until(() => h.lightGate?.queueDepth() === 1, `slow run ${slow}: still light, queued on the light lane`);
      lightWorkers.calls[light - 1]?.finish();
      await other;
      await until(() => lightWorkers.calls.length === light + 1, 'its turn on the light lane');
      light++;
      timers.advance(1000);
      await until(() => general.calls.length === moved + 1, 'moved to the general lane');
      moved++;
      assert.equal(lightWorkers.calls[light - 1]?.stopped, true);
      general.calls[moved - 1]?.finish();
      assert.equal((await next.promise).status, 200);
    }
    // One slow run too many: it may only probe. With a light permit free it probes the light lane...
    const probing = query(h, 'acme', { query: DASHBOARD });
    await until(() => lightWorkers.calls.length === light + 1, 'probing the light lane');
    light++;
    // ...and while that permit is busy, a probe does not queue there: the general lane.
    const fallback = query(h, 'acme', { query: DASHBOARD });
    await until(() => general.calls.length === moved + 1, 'general while the light permit is busy');
    lightWorkers.calls[light - 1]?.finish();
    general.calls[moved]?.finish();
    assert.deepEqual([(await probing).status, (await fallback).status], [200, 200]);
  });

  test('a light query whose run outgrows the light lane while the general lane could not take it at once finishes on the light lane instead of being moved and refused; a probe is moved', async () => {
    const { timers, h, general, lightWorkers, storm } = await panelBesideStorm();
    const slow = tracked(query(h, 'acme', { query: DASHBOARD }));
    await until(() => lightWorkers.calls.length === 3, 'the light query on the light lane');
    timers.advance(1500);
    await new Promise((r) => setImmediate(r));
    assert.equal(lightWorkers.calls[2]?.stopped, false, 'not stopped at light_query_ms');
    assert.equal(general.calls.length, 2, 'not moved');
    lightWorkers.calls[2]?.finish();
    assert.equal((await slow.promise).status, 200);
    // A probe in the same spot is moved (and refused by the full general lane).
    const unknown = tracked(query(h, 'acme', { query: `severity >= warn | ${WINDOW} | count` }));
    await until(() => lightWorkers.calls.length === 4, 'the probe on the light lane');
    timers.advance(1000);
    await until(() => lightWorkers.calls[3]?.stopped === true, 'the probe stopped at light_query_ms');
    const refused = await unknown.promise;
    assert.equal(refused.json.error.kind, 'query_queue_full', JSON.stringify(refused.json));
    general.calls[1]?.finish();
    assert.equal((await storm).status, 200);
    assert.equal(h.gate.inFlight() + (h.lightGate?.inFlight() ?? 0), 0);
  });

  test('a light query slowed beside a storm (within 3 x light_query_ms) keeps the light lane run after run: contention is not its weight', async () => {
    const { timers, h, general, lightWorkers, storm } = await panelBesideStorm();
    let light = 2;
    // More slow runs than the 2 tolerated, each slower than light_query_ms but under 3 x: all contended.
    for (let run = 1; run <= 4; run++) {
      const slow = tracked(query(h, 'acme', { query: DASHBOARD }));
      await until(() => lightWorkers.calls.length === light + 1, `slow run ${run} on the light lane`);
      light++;
      timers.advance(2999);
      lightWorkers.calls[light - 1]?.finish();
      assert.equal((await slow.promise).status, 200);
    }
    // Still light: with the light permit taken it queues on the light lane, where a probe would have gone to the
    // full general lane and been refused query_queue_full.
    const other = query(h, 'acme', { query: `severity >= warn | ${WINDOW} | count` });
    await until(() => lightWorkers.calls.length === light + 1, 'an unknown query probing the light lane');
    light++;
    const queued = tracked(query(h, 'acme', { query: DASHBOARD }));
    await until(() => h.lightGate?.queueDepth() === 1, 'the dashboard query queued on the light lane');
    lightWorkers.calls[light - 1]?.finish();
    assert.equal((await other).status, 200);
    await until(() => lightWorkers.calls.length === light + 1, 'its turn on the light lane');
    lightWorkers.calls[light]?.finish();
    assert.equal((await queued.promise).status, 200);
    general.calls[1]?.finish();
    assert.equal((await storm).status, 200);
    assert.equal(h.gate.inFlight() + (h.lightGate?.inFlight() ?? 0), 0);
  });

  test('a query refused by a limit is not probed again: general lane, even with the light lane free', async () => {
    const { h, general, lightWorkers } = lanes({
      maxConcurrent: 1,
      queryTimeoutMs: 30_000,
      lightMs: 1000,
      laneMs: 1000,
      leaveFreeBytes: 0,
    });
    const first = query(h, 'acme', { query: STORM });
    await until(() => lightWorkers.calls.length === 1, 'probing');
    lightWorkers.calls[0]?.fail({ kind: 'query_memory_limit', message: 'over the light ceiling' });
    await until(() => general.calls.length === 1, 'moved');
    general.calls[0]?.fail({ kind: 'query_memory_limit', message: 'over the query ceiling' });
    assert.equal((await first).status, 422);
    const second = query(h, 'acme', { query: STORM });
    await until(() => general.calls.length === 2, 'general, though the light lane is free');
    assert.equal(lightWorkers.calls.length, 1);
    general.calls[1]?.finish();
    assert.equal((await second).status, 200);
  });

  test('one probe per fingerprint at a time: a second copy of an unknown query arriving during the probe goes to the general lane', async () => {
    const { h, general, lightWorkers } = lanes({
      maxConcurrent: 2,
      queryTimeoutMs: 30_000,
      lightMs: 1000,
      laneMs: 1000,
      leaveFreeBytes: 0,
    });
    const first = query(h, 'acme', { query: STORM });
    await until(() => lightWorkers.calls.length === 1, 'the first copy probing');
    const second = query(h, 'acme', { query: STORM });
    await until(() => general.calls.length === 1, 'the second copy in the general lane');
    assert.equal(lightWorkers.calls.length, 1);
    lightWorkers.calls[0]?.finish();
    general.calls[0]?.finish();
    assert.deepEqual([(await first).status, (await second).status], [200, 200]);
  });

  test('a light-lane run refused by the lane memory ceiling is moved to the general lane and served there', async () => {
    const { h, general, lightWorkers } = lanes({
      maxConcurrent: 1,
      queryTimeoutMs: 30_000,
      lightMs: 1000,
      laneMs: 1000,
      leaveFreeBytes: 0,
    });
    const answer = query(h, 'acme', { query: STORM });
    await until(() => lightWorkers.calls.length === 1, 'probing');
    lightWorkers.calls[0]?.fail({ kind: 'query_memory_limit', message: 'over the light ceiling' });
    await until(() => general.calls.length === 1, 'moved to the general lane');
    general.calls[0]?.finish();
    assert.equal((await answer).status, 200, 'never a 422 for a query the general lane can serve');
  });

  test('a query moved off the light lane keeps what is left of its deadline, and its elapsed time counts both lanes', async () => {
    const timers = new ManualTimers();
    const { h, general, lightWorkers } = lanes({
      maxConcurrent: 1,
      queryTimeoutMs: 3000,
      timers,
      lightMs: 2000,
      laneMs: 2000,
      leaveFreeBytes: 0,
    });
    const answer = tracked(query(h, 'acme', { query: STORM }));
    await until(() => lightWorkers.calls.length === 1, 'probing');
    timers.advance(2000);
    await until(() => general.calls.length === 1, 'moved');
    timers.advance(999);
    await until(() => h.gate.inFlight() === 1, 'still running in the general lane');
    assert.equal(answer.done, false);
    timers.advance(1);
    const json = (await answer.promise).json;
    assert.equal(json.error.kind, 'query_time_limit');
    assert.deepEqual([json.error.ceiling, json.error.value], [3000, 3000]);
  });
});
