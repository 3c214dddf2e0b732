/**
 * @module shared-pool-caps-and-result-ceiling.test
 * The governance scenarios (docs/design/query-governance.md) at the engine level, deterministically: RFC0058.2 (one pool shared by two queries in one
 * thread, interleaved by an awaited `beforeRowGroup` gate, never by timing), RFC0058.6 (listing, file and manifest
 * caps on a request-counting store over the local backend) and RFC0058.7 (the row clamp, the result ceiling, the
 * materialize pass reserved on the pool, and refusal at the Nth reservation).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TemplateAuditEvent } from '@sluice/core';
import type { ObjectStore } from '@sluice/storage';
import { createLocalObjectStore, dataPartitionPrefix, encodePartitionManifest } from '@sluice/storage';
import type { GrowOutcome, GrowRefused, MemoryPool, QueryReservation } from '@sluice/limits';
import { createMemoryPool, limitErrorStatus } from '@sluice/limits';
import type { ExecuteHooks, ExecuteOutcome } from './execute.js';
import { executeQuery } from './execute.js';
import { listTemplates } from './templates.js';
import { H, T0, makeRows, writeAuditFiles, writeDataFiles } from './testing/corpus.js';
import { LIMITS, countingStore, q, run } from './testing/harness.js';

const NOW = T0 + 4n * H;
const R = 'range(2026-06-01T00:00:00Z, 2026-06-01T04:00:00Z)';
const ROWS = 4000;
let dir = '';
let store: ObjectStore;
let dataKeys: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-rfc0058-'));
  store = createLocalObjectStore({ root: dir });
  dataKeys = await writeDataFiles(
    store,
    makeRows({ tenant: 'acme', count: ROWS, startNs: T0, spanNs: 4n * H, seed: 58 }),
    { filesPerHour: 2, rowGroupRows: 500 },
  );
  const events: TemplateAuditEvent[] = [];
  for (let i = 0; i < 40; i++) {
    const id = BigInt(100 + i);
    const base = {
      tenantId: 'acme',
      templateId: id,
      oldTemplate: '',
      triggeringLineSample: 'x',
      positionsWidened: [] as number[],
    };
    events.push({
      ...base,
      eventType: 'template_created',
      oldVersion: 0,
      newVersion: 1,
      newTemplate: `template ${i} ${'w'.repeat(40)}`,
      timestampUnixNano: T0 + BigInt(i),
    });
    events.push({
      ...base,
      eventType: 'template_widened',
      oldVersion: 1,
      newVersion: 2,
      newTemplate: `template ${i} <*>`,
      positionsWidened: [2],
      timestampUnixNano: T0 + H + BigInt(i),
    });
  }
  await writeAuditFiles(store, events);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function errorOf(outcome: ExecuteOutcome): unknown {
  return outcome.status === 'error' ? outcome.error : undefined;
}

/** A gate: `wait()` blocks until `open()`; `reached` resolves when the first waiter arrives. */
function gate(): { wait(): Promise<void>; open(): void; reached: Promise<void> } {
  let open!: () => void;
  let reach!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  return {
    wait() {
      reach();
      return opened;
    },
    open,
    reached,
  };
}

/** Runs `text` on a fresh reservation of `pool`; returns the outcome and the reservation's peak (before release). */
async function runOn(
  pool: MemoryPool,
  id: string,
  text: string,
  hooks?: ExecuteHooks,
): Promise<{ outcome: ExecuteOutcome; peak: number; heldAfter: number; reservation: QueryReservation }> {
  const reservation = pool.createQuery(id);
  const outcome = await executeQuery({
    store,
    tenant: 'acme',
    query: q(text),
    nowNs: NOW,
    defaultWindowSecs: 3600,
    limits: LIMITS,
    reservation,
    ...(hooks ? { hooks } : {}),
  });
  const peak = pool.consumers().find((c) => c.queryId === id)?.peakBytes ?? -1;
  const heldAfter = reservation.held;
  if (outcome.status === 'ok') outcome.budget.release();
  reservation.releaseAll();
  return { outcome, peak, heldAfter, reservation };
}

describe('RFC0058.2: the pool is shared, and contention is told apart from size', () => {
  test('RFC0058.2: B is 503 query_memory_contended while A (paused) holds its reservation; a lone over-pool query is 422 query_memory_limit; B re-run succeeds; pool never above its size and 0 after', async () => {
    const STATEMENT = `contains(body, "timeout") | ${R} | count by service`;
    // Calibrate: what one run of the statement needs at its peak (deterministic for the same files).
    const big = createMemoryPool({ sizeBytes: 1 << 30 });
    const alone = await runOn(big, 'calibrate', STATEMENT);
    assert.equal(alone.outcome.status, 'ok');
    const peak = alone.peak;
    assert.ok(peak > 0);

    // A pool that fits A alone and B alone (same statement: same peak), but not both.
    const pool = createMemoryPool({ sizeBytes: peak + 1024 });
    const samples: number[] = [];
    const sample = (): void => {
      samples.push(pool.reserved());
    };
    const pauseA = gate();
    let pausedOnce = false;
    const aDone = runOn(pool, 'A', STATEMENT, {
      afterListing: sample,
      beforeRowGroup: async () => {
        sample();
        if (!pausedOnce) {
          pausedOnce = true;
          await pauseA.wait(); // A holds its footer reservation here
        }
      },
    });
    await pauseA.reached;
    const heldByA = pool.reserved();
    assert.ok(heldByA > 1024, `A holds a reservation while paused (${heldByA} bytes)`);

    const b = await runOn(pool, 'B', STATEMENT, { afterListing: sample, beforeRowGroup: sample });
    const bError = errorOf(b.outcome) as { kind: string; neededBytes: number; poolBytes: number };
    assert.equal(bError.kind, 'query_memory_contended', JSON.stringify(bError));
    assert.equal(limitErrorStatus('query_memory_contended'), 503);
    assert.ok(bError.neededBytes <= pool.size, 'B would have fitted the pool alone');
    assert.ok(bError.neededBytes > pool.size - heldByA, 'B asked for more than the remainder');
    assert.equal(bError.poolBytes, pool.size);
    assert.equal(b.heldAfter, 0, 'the refused query holds nothing');
    assert.equal(pool.reserved(), heldByA, 'B gave back everything; A still holds its reservation');

    // A lone query whose first reservation exceeds the pool is a size problem, never contention.
    const tiny = createMemoryPool({ sizeBytes: 32 * 1024 });
    const lone = await runOn(tiny, 'lone', STATEMENT);
    const loneError = errorOf(lone.outcome) as { kind: string; neededBytes: number; poolBytes: number };
    assert.equal(loneError.kind, 'query_memory_limit');
    assert.equal(limitErrorStatus('query_memory_limit'), 422);
    assert.ok(loneError.neededBytes > loneError.poolBytes);
    assert.equal(tiny.reserved(), 0);

    pauseA.open();
    const a = await aDone;
    assert.equal(a.outcome.status, 'ok', 'A finishes once resumed');
    assert.equal(
      a.heldAfter,
      a.outcome.status === 'ok' ? a.outcome.body.byteLength : -1,
      'A holds only its body at the end',
    );
    assert.equal(a.reservation.held, 0, "A's per-query count reads 0 after release");
    assert.equal(pool.reserved(), 0, 'the shared pool reads 0 after A');

    const again = await runOn(pool, 'B2', STATEMENT, { afterListing: sample, beforeRowGroup: sample });
    assert.equal(again.outcome.status, 'ok', 'B run again after A finishes succeeds');
    assert.equal(pool.reserved(), 0);
    assert.ok(samples.length > 10, `sampled at every hook (${samples.length} samples)`);
    for (const s of samples) assert.ok(s <= pool.size, `reserved ${s} <= size ${pool.size}`);
  });
});

describe('RFC0058.6: the listing and file caps reject over-wide queries early (local backend)', () => {
  test('RFC0058.6: the listing stops consuming the stream at max_listed_objects + 1 keys and issues no further listing', async () => {
    const { store: s, counters } = countingStore(store);
    const r = await run(s, `true | ${R} | count`, { nowNs: NOW, limits: { maxListedObjects: 5 } });
    assert.deepEqual(errorOf(r.outcome), { kind: 'query_file_limit', cap: 'max_listed_objects', limit: 5 });
    assert.equal(limitErrorStatus('query_file_limit'), 422);
    assert.equal(counters.listedEntries, 6, 'cap + 1 entries polled from the listing stream');
    assert.equal(counters.listCalls, 1, 'no listing after the one that crossed the cap');
    assert.equal(counters.getRange, 0, 'no footer read');
    assert.deepEqual(counters.get, []);
    assert.equal(r.heldAfter, 0);
  });

  test('RFC0058.6: max_listed_objects above the key count but max_files below the live files → query_file_limit before any footer read', async () => {
    const { store: s, counters } = countingStore(store);
    const r = await run(s, `true | ${R} | count`, {
      nowNs: NOW,
      limits: { maxListedObjects: 1000, maxFiles: dataKeys.length - 1 },
    });
    assert.deepEqual(errorOf(r.outcome), { kind: 'query_file_limit', cap: 'max_files', limit: dataKeys.length - 1 });
    assert.ok(counters.listedEntries <= 1000 && counters.listedEntries >= dataKeys.length);
    assert.equal(counters.getRange, 0, 'rejected before any footer is read');
    const ok = await run(s, `true | ${R} | count`, { nowNs: NOW, limits: { maxFiles: dataKeys.length } });
    assert.equal(ok.json.rows, ROWS, 'at exactly the live file count the query runs');
  });

  test('RFC0058.6: a manifest.json listed at more than 1 MiB is rejected query_file_limit with no GET for it', async () => {
    const d = await mkdtemp(join(tmpdir(), 'engine-rfc0058-manifest-'));
    try {
      const s0 = createLocalObjectStore({ root: d });
      await writeDataFiles(s0, makeRows({ tenant: 'acme', count: 200, startNs: T0, spanNs: H, seed: 3 }), {
        filesPerHour: 1,
        rowGroupRows: 100,
      });
      const prefix = dataPartitionPrefix('acme', Number(T0 / 1_000_000n));
      await s0.put(`${prefix}manifest.json`, new Uint8Array(1024 * 1024 + 1).fill(0x20));
      const { store: s, counters } = countingStore(s0);
      const r = await run(s, `true | ${R} | count`, { nowNs: NOW });
      assert.deepEqual(errorOf(r.outcome), { kind: 'query_file_limit', cap: 'manifest_bytes', limit: 1024 * 1024 });
      assert.deepEqual(counters.get, [], 'the oversized manifest is never fetched');
      assert.equal(counters.getRange, 0);
      // A manifest within the bound is read (and is authoritative).
      await s0.put(`${prefix}manifest.json`, encodePartitionManifest({ generation: 1, files: [] }));
      counters.get.length = 0;
      const ok = await run(s, `true | ${R} | count`, { nowNs: NOW });
      assert.equal(ok.json.rows, 0, 'a small manifest naming no file leaves nothing live');
      assert.deepEqual(counters.get, [`${prefix}manifest.json`]);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('RFC0058.7: the result ceiling', () => {
  test('RFC0058.7: a limit above max_rows is clamped to max_rows and succeeds, with rows the full total', async () => {
    const r = await run(store, `true | ${R} | limit 5000`, { nowNs: NOW, limits: { maxRows: 20 } });
    assert.equal(r.outcome.status, 'ok');
    assert.equal(r.json.records.length, 20);
    assert.equal(r.json.rows, ROWS);
    const dflt = await run(store, `true | ${R}`, { nowNs: NOW, limits: { defaultRows: 7, maxRows: 20 } });
    assert.equal(dflt.json.records.length, 7, 'default_rows applies without a limit');
  });

  test('RFC0058.7: rendered rows over max_result_bytes → 422 query_result_limit; the same rows under a larger ceiling are served', async () => {
    const STATEMENT = `true | ${R} | limit 300`;
    const served = await run(store, STATEMENT, { nowNs: NOW });
    assert.equal(served.outcome.status, 'ok');
    const bodyBytes = served.outcome.status === 'ok' ? served.outcome.body.byteLength : 0;
    assert.equal(served.json.records.length, 300);
    const over = await run(store, STATEMENT, { nowNs: NOW, limits: { maxResultBytes: bodyBytes - 1 } });
    assert.deepEqual(errorOf(over.outcome), { kind: 'query_result_limit', limitBytes: bodyBytes - 1 });
    assert.equal(limitErrorStatus('query_result_limit'), 422);
    assert.equal(over.heldAfter, 0);
    const exact = await run(store, STATEMENT, { nowNs: NOW, limits: { maxResultBytes: bodyBytes } });
    assert.equal(exact.text, served.text, 'the same rows are served under a ceiling that fits them');
  });

  test('RFC0058.7: a pool smaller than the result but larger than the scan rejects as query_memory_limit', async () => {
    const big = createMemoryPool({ sizeBytes: 1 << 30 });
    const scanOnly = await runOn(big, 'scan', `true | ${R} | limit 1`);
    const full = await runOn(big, 'full', `true | ${R} | limit 4000`);
    assert.equal(scanOnly.outcome.status, 'ok');
    assert.equal(full.outcome.status, 'ok');
    assert.ok(full.peak > scanOnly.peak * 2, `the result (${full.peak}) dominates the scan (${scanOnly.peak})`);
    const size = Math.floor((scanOnly.peak + full.peak) / 2);
    const pool = createMemoryPool({ sizeBytes: size });
    const fits = await runOn(pool, 'scan2', `true | ${R} | limit 1`);
    assert.equal(fits.outcome.status, 'ok', 'the same scan fits the pool');
    const refused = await runOn(pool, 'full2', `true | ${R} | limit 4000`);
    const e = errorOf(refused.outcome) as { kind: string; neededBytes: number; poolBytes: number };
    assert.equal(e.kind, 'query_memory_limit', JSON.stringify(e));
    assert.ok(e.neededBytes > size);
    assert.equal(pool.reserved(), 0);
  });

  test('RFC0058.7: a reservation refused at the Nth grow fails the query with at most N − 1 grants retained and no grow after', async () => {
    const STATEMENT = `true | ${R} | limit 4000`;
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    // Calibrate the number of grows a successful run makes, so N spans the scan and the materialize pass.
    const counted = await runWrapped(pool, STATEMENT, Number.POSITIVE_INFINITY);
    assert.equal(counted.outcome.status, 'ok');
    const total = counted.calls;
    assert.ok(total > 100, `the run reserves many times (${total})`);
    for (const n of [1, 2, 3, Math.floor(total / 3), Math.floor(total / 2), total - 1, total]) {
      const r = await runWrapped(pool, STATEMENT, n);
      const e = errorOf(r.outcome) as { kind: string };
      assert.equal(e.kind, 'query_memory_limit', `N=${n}`);
      assert.equal(r.calls, n, `N=${n}: no reservation is attempted after the refusal`);
      assert.ok(r.outstandingAtRefusal <= n - 1, `N=${n}: at most N − 1 grants held at the refusal`);
      assert.equal(
        r.heldAtRefusal,
        r.grantedBytesOutstanding,
        `N=${n}: everything held was granted through the reservation`,
      );
      assert.equal(r.heldAfter, 0, `N=${n}: nothing stays held`);
    }
    assert.equal(pool.reserved(), 0);
  });

  test('RFC0058.7: count-by groups, a drift result and a list_templates registry over max_result_bytes are each query_result_limit', async () => {
    const groups = await run(store, `true | ${R} | count by bucket(1s)`, {
      nowNs: NOW,
      limits: { maxResultBytes: 2_000 },
    });
    assert.deepEqual(errorOf(groups.outcome), { kind: 'query_result_limit', limitBytes: 2_000 });
    assert.equal(groups.heldAfter, 0);
    const groupsOk = await run(store, `true | ${R} | count by bucket(1s)`, { nowNs: NOW });
    assert.equal(groupsOk.outcome.status, 'ok');

    const drift = 'drift from 2026-05-31T00:00:00Z to 2026-06-02T00:00:00Z';
    const driftOk = await run(store, drift, { nowNs: NOW });
    assert.equal(driftOk.json.rows.length, 40);
    const driftBytes = driftOk.outcome.status === 'ok' ? driftOk.outcome.body.byteLength : 0;
    const driftOver = await run(store, drift, { nowNs: NOW, limits: { maxResultBytes: driftBytes - 1 } });
    assert.deepEqual(errorOf(driftOver.outcome), { kind: 'query_result_limit', limitBytes: driftBytes - 1 });
    assert.equal(driftOver.heldAfter, 0);

    const pool = createMemoryPool({ sizeBytes: 1 << 26 });
    const r1 = pool.createQuery('lt-ok');
    const ok = await listTemplates({ store, tenant: 'acme', reservation: r1, limits: LIMITS });
    assert.equal(ok.status, 'ok');
    const registryBytes = ok.status === 'ok' ? ok.body.byteLength : 0;
    if (ok.status === 'ok') ok.budget.release();
    r1.releaseAll();
    const r2 = pool.createQuery('lt-over');
    const over = await listTemplates({
      store,
      tenant: 'acme',
      reservation: r2,
      limits: { ...LIMITS, maxResultBytes: registryBytes - 1 },
    });
    assert.deepEqual(errorOf(over), { kind: 'query_result_limit', limitBytes: registryBytes - 1 });
    assert.equal(r2.held, 0);
    r2.releaseAll();
    assert.equal(pool.reserved(), 0);
  });
});

interface WrappedRun {
  readonly outcome: ExecuteOutcome;
  /** tryGrow calls made (including the refused one). */
  readonly calls: number;
  /** Granted grows not yet fully given back when the refusal happened. */
  readonly outstandingAtRefusal: number;
  readonly heldAtRefusal: number;
  readonly grantedBytesOutstanding: number;
  readonly heldAfter: number;
}

/** Runs `text` on a reservation whose `refuseAt`-th `tryGrow` is refused (a pool that refuses the Nth reservation). */
async function runWrapped(pool: MemoryPool, text: string, refuseAt: number): Promise<WrappedRun> {
  const inner = pool.createQuery(`wrapped-${refuseAt}`);
  let calls = 0;
  let outstanding = 0; // granted grows whose bytes are still (partly) held, approximated by a FIFO of grant sizes
  const grants: number[] = [];
  let grantedBytes = 0;
  let outstandingAtRefusal = -1;
  let heldAtRefusal = -1;
  let grantedAtRefusal = -1;
  const wrapped: QueryReservation = {
    get queryId() {
      return inner.queryId;
    },
    get held() {
      return inner.held;
    },
    get lastRefusal() {
      return inner.lastRefusal;
    },
    get released() {
      return inner.released;
    },
    tryGrow(bytes: number): GrowOutcome {
      calls++;
      if (calls === refuseAt) {
        outstandingAtRefusal = outstanding;
        heldAtRefusal = inner.held;
        grantedAtRefusal = grantedBytes;
        const refused: GrowRefused = {
          status: 'refused',
          kind: 'query_memory_limit',
          needed: inner.held + bytes,
          held: inner.held,
          requested: bytes,
          poolSize: inner.held,
          ceiling: 'pool',
          ceilingBytes: inner.held,
        };
        return refused;
      }
      const o = inner.tryGrow(bytes);
      if (o.status === 'ok' && bytes > 0) {
        grants.push(bytes);
        grantedBytes += bytes;
        outstanding++;
      }
      return o;
    },
    shrink(bytes: number): void {
      inner.shrink(bytes);
      grantedBytes -= bytes;
      let left = bytes;
      while (left > 0 && grants.length > 0) {
        const g = grants[grants.length - 1] as number;
        if (g <= left) {
          grants.pop();
          outstanding--;
          left -= g;
        } else {
          grants[grants.length - 1] = g - left;
          left = 0;
        }
      }
    },
    releaseAll(): number {
      return inner.releaseAll();
    },
  };
  const outcome = await executeQuery({
    store,
    tenant: 'acme',
    query: q(text),
    nowNs: NOW,
    defaultWindowSecs: 3600,
    limits: LIMITS,
    reservation: wrapped,
  });
  const heldAfter = inner.held;
  if (outcome.status === 'ok') outcome.budget.release();
  inner.releaseAll();
  return { outcome, calls, outstandingAtRefusal, heldAtRefusal, grantedBytesOutstanding: grantedAtRefusal, heldAfter };
}
