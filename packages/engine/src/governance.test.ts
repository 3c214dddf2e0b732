/**
 * @module governance.test
 * Caps and the pool: listing/file/manifest caps, memory refusals (limit vs contended), the result ceiling,
 * cancellation and scrubbed storage errors — each leaves nothing reserved.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObjectStore } from '@sluice/storage';
import { createLocalObjectStore, dataPartitionPrefix, encodePartitionManifest } from '@sluice/storage';
import { createMemoryPool } from '@sluice/limits';
import { H, T0, makeRows, writeDataFiles } from './testing/corpus.js';
import { countingStore, run } from './testing/harness.js';

const NOW = T0 + 4n * H;
const R = 'range(2026-06-01T00:00:00Z, 2026-06-01T04:00:00Z)';
let dir = '';
let store: ObjectStore;
let keys: string[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-gov-'));
  store = createLocalObjectStore({ root: dir });
  keys = await writeDataFiles(store, makeRows({ tenant: 'acme', count: 4000, startNs: T0, spanNs: 4n * H, seed: 5 }), {
    filesPerHour: 2,
    rowGroupRows: 500,
  });
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function errorOf(r: Awaited<ReturnType<typeof run>>): unknown {
  return r.outcome.status === 'error' ? r.outcome.error : undefined;
}

describe('listing and file caps', () => {
  test('the listing is abandoned at max_listed_objects + 1 entries', async () => {
    const { store: s, counters } = countingStore(store);
    const r = await run(s, `true | ${R} | count`, { nowNs: NOW, limits: { maxListedObjects: 5 } });
    assert.deepEqual(errorOf(r), { kind: 'query_file_limit', cap: 'max_listed_objects', limit: 5 });
    assert.equal(counters.listedEntries, 6);
    assert.equal(counters.getRange, 0);
    assert.equal(r.heldAfter, 0);
  });
  test('max_files is enforced after manifest resolution and before any footer read', async () => {
    const { store: s, counters } = countingStore(store);
    const r = await run(s, `true | ${R} | count`, { nowNs: NOW, limits: { maxFiles: 7 } });
    assert.deepEqual(errorOf(r), { kind: 'query_file_limit', cap: 'max_files', limit: 7 });
    assert.equal(counters.getRange, 0);
    const ok = await run(s, `true | ${R} | count`, { nowNs: NOW, limits: { maxFiles: 8 } });
    assert.equal(ok.json.rows, 4000);
  });
  test('a listed manifest is authoritative, and one over 1 MiB is refused without fetching it', async () => {
    const d = await mkdtemp(join(tmpdir(), 'engine-manifest-'));
    try {
      const s0 = createLocalObjectStore({ root: d });
      const rows = makeRows({ tenant: 'acme', count: 400, startNs: T0, spanNs: H, seed: 2 });
      const written = await writeDataFiles(s0, rows, { filesPerHour: 2, rowGroupRows: 100 });
      const prefix = dataPartitionPrefix('acme', Number(T0 / 1_000_000n));
      const live = written[0]?.slice(prefix.length) ?? '';
      await s0.put(`${prefix}manifest.json`, encodePartitionManifest({ generation: 3, files: [live] }));
      const { store: s, counters } = countingStore(s0);
      const r = await run(s, `true | ${R} | count`, { nowNs: NOW });
      assert.equal(r.json.rows, 200, 'only the manifest-listed file is live');
      assert.deepEqual(counters.get, [`${prefix}manifest.json`]);
      await s0.put(`${prefix}manifest.json`, new Uint8Array(1024 * 1024 + 1).fill(0x20));
      counters.get.length = 0;
      counters.getRange = 0;
      const big = await run(s, `true | ${R} | count`, { nowNs: NOW });
      assert.deepEqual(errorOf(big), { kind: 'query_file_limit', cap: 'manifest_bytes', limit: 1024 * 1024 });
      assert.deepEqual(counters.get, []);
      assert.equal(counters.getRange, 0);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('manifest committed between listing and manifest read', () => {
  test('a file the manifest names but the listing missed is still read (not an empty partition)', async () => {
    const d = await mkdtemp(join(tmpdir(), 'engine-manifest-race-'));
    try {
      const s0 = createLocalObjectStore({ root: d });
      const rows = makeRows({ tenant: 'acme', count: 400, startNs: T0, spanNs: H, seed: 2 });
      const written = await writeDataFiles(s0, rows, { filesPerHour: 2, rowGroupRows: 100 });
      const prefix = dataPartitionPrefix('acme', Number(T0 / 1_000_000n));
      const hidden = written[1] ?? '';
      await s0.put(
        `${prefix}manifest.json`,
        encodePartitionManifest({ generation: 4, files: [hidden.slice(prefix.length)] }),
      );
      // The listing ran before the compaction output existed: it does not see `hidden`.
      const lagging: ObjectStore = {
        put: (k, b, o) => s0.put(k, b, o),
        putConditional: (k, b, c, o) => s0.putConditional(k, b, c, o),
        get: (k) => s0.get(k),
        getVersioned: (k) => s0.getVersioned(k),
        getRange: (k, a, b) => s0.getRange(k, a, b),
        head: (k) => s0.head(k),
        delete: (k) => s0.delete(k),
        list(o) {
          const inner = s0.list(o);
          return {
            async *[Symbol.asyncIterator]() {
              for await (const e of inner) if (!(e.kind === 'object' && e.key === hidden)) yield e;
            },
          };
        },
      };
      const r = await run(lagging, `true | ${R} | count`, { nowNs: NOW });
      assert.equal(r.json.rows, 200, 'the manifest-named file is read');
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('memory pool', () => {
  test('a tiny pool refuses a big query with query_memory_limit and nothing stays held', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const r = await run(store, `true | ${R} | limit 10000`, { nowNs: NOW, pool });
    const e = errorOf(r) as { kind: string; neededBytes: number; poolBytes: number };
    assert.equal(e.kind, 'query_memory_limit');
    assert.ok(e.neededBytes > e.poolBytes);
    assert.equal(r.heldAfter, 0);
    assert.equal(pool.reserved(), 0);
  });
  test('a query that fits alone is refused as contended while another reservation holds most of the pool', async () => {
    const pool = createMemoryPool({ sizeBytes: 64 << 20 });
    const ok = await run(store, `contains(body, "timeout") | ${R} | count`, { nowNs: NOW, pool });
    assert.equal(ok.outcome.status, 'ok');
    const other = pool.createQuery('hog');
    assert.equal(other.tryGrow((64 << 20) - (16 << 10)).status, 'ok');
    const r = await run(store, `contains(body, "timeout") | ${R} | count`, { nowNs: NOW, pool });
    assert.equal((errorOf(r) as { kind: string }).kind, 'query_memory_contended');
    assert.equal(r.heldAfter, 0);
    other.releaseAll();
    assert.equal(pool.reserved(), 0);
  });
  test('reservations are exact: a pool of a query’s peak serves it, one a few bytes smaller refuses it', async () => {
    const queries = [
      `true | ${R} | count by template_id`,
      `true | ${R} | count by service, bucket(5m)`,
      `contains(body, "timeout") | ${R} | count`,
      `contains(body, "timeout") | ${R} | limit 100`,
      `true | ${R} | limit 1000`,
      `true | ${R} | sort ts desc | limit 50`,
      `severity >= 13 | range(2026-06-01T01:10:00Z, 2026-06-01T01:40:00Z) | limit 20`,
    ];
    for (const q of queries) {
      const measure = createMemoryPool({ sizeBytes: 1 << 30 });
      const first = await run(store, q, { nowNs: NOW, pool: measure });
      assert.equal(first.outcome.status, 'ok', q);
      const need = measure.peakReserved();
      const exactPool = createMemoryPool({ sizeBytes: need });
      const exact = await run(store, q, { nowNs: NOW, pool: exactPool });
      assert.equal(exact.outcome.status, 'ok', `${q}: a pool of exactly ${need} bytes serves it`);
      assert.equal(exact.text, first.text, q);
      assert.equal(exactPool.reserved(), 0, `${q}: nothing held after the exact run`);
      const short = createMemoryPool({ sizeBytes: need - 8 });
      const refused = await run(store, q, { nowNs: NOW, pool: short });
      assert.equal((errorOf(refused) as { kind: string }).kind, 'query_memory_limit', `${q}: ${need - 8} bytes`);
      assert.equal(short.reserved(), 0, q);
    }
  });
  test('the peak reservation covers decoded row groups (reserve before retain)', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    let peakSeen = 0;
    const r = await run(store, `true | ${R} | limit 50`, {
      nowNs: NOW,
      pool,
      hooks: {
        beforeRowGroup: () => {
          peakSeen = Math.max(peakSeen, pool.reserved());
        },
      },
    });
    assert.equal(r.outcome.status, 'ok');
    assert.ok(peakSeen > 0, 'footers are reserved while row groups are read');
  });
  test('the heap reclaimer runs before every decode, with the bytes the query holds at that moment', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    const calls: { held: number; reserved: number }[] = [];
    let groups = 0;
    const r = await run(store, `contains(body, "timeout") | ${R} | limit 20`, {
      nowNs: NOW,
      pool,
      hooks: { beforeRowGroup: () => void groups++ },
      reclaim: (held) => calls.push({ held, reserved: pool.reserved() }),
    });
    assert.equal(r.outcome.status, 'ok');
    assert.ok(groups > 1, 'the query scans several row groups');
    // Phase 1 decodes every scanned group; phase 2 (record columns) adds more decodes for groups that matched.
    assert.ok(calls.length >= groups, `${calls.length} reclaim calls for ${groups} row groups`);
    for (const c of calls) {
      assert.ok(c.held > 0, 'the open footer is held while a group is decoded');
      assert.equal(c.held, c.reserved, 'the held figure is the pool count of this (only) query, before the next grow');
    }
  });
});

describe('result ceiling, cancellation, storage failures', () => {
  test('a result over max_result_bytes is query_result_limit and nothing stays held', async () => {
    const r = await run(store, `true | ${R} | limit 5000`, { nowNs: NOW, limits: { maxResultBytes: 20_000 } });
    assert.deepEqual(errorOf(r), { kind: 'query_result_limit', limitBytes: 20_000 });
    assert.equal(r.heldAfter, 0);
    const sorted = await run(store, `true | ${R} | sort ts desc | limit 5000`, {
      nowNs: NOW,
      limits: { maxResultBytes: 20_000 },
    });
    assert.deepEqual(errorOf(sorted), { kind: 'query_result_limit', limitBytes: 20_000 });
    const agg = await run(store, `true | ${R} | count by bucket(1s)`, {
      nowNs: NOW,
      limits: { maxResultBytes: 2_000 },
    });
    assert.deepEqual(errorOf(agg), { kind: 'query_result_limit', limitBytes: 2_000 });
    assert.equal(agg.heldAfter, 0);
  });
  test('an abort during the scan is cancelled and releases everything', async () => {
    const ac = new AbortController();
    let groups = 0;
    const r = await run(store, `true | ${R} | limit 100`, {
      nowNs: NOW,
      signal: ac.signal,
      hooks: {
        beforeRowGroup: () => {
          if (++groups === 3) ac.abort();
        },
      },
    });
    assert.deepEqual(errorOf(r), { kind: 'cancelled' });
    assert.equal(groups, 3);
    assert.equal(r.heldAfter, 0);
  });
  test('a store call failing for another reason is internal with a scrubbed message, never blamed on the file', async () => {
    const { store: s } = countingStore(store, { failRange: true });
    const r = await run(s, `true | ${R} | count`, { nowNs: NOW, onCorruptObject: 'skip' });
    assert.deepEqual(errorOf(r), { kind: 'internal', message: 'failed to read storage' });
    assert.equal(r.heldAfter, 0);
  });
  test('storage that ran out of attempts is storage_unavailable with the operation, key, attempts and reason', async () => {
    const { store: s } = countingStore(store, { unavailableRange: true });
    const r = await run(s, `true | ${R} | count`, { nowNs: NOW, onCorruptObject: 'skip' });
    assert.deepEqual(errorOf(r), {
      kind: 'storage_unavailable',
      operation: 'get_range',
      key: keys[0],
      attempts: 3,
      reason: 'server_error',
    });
    assert.equal(r.heldAfter, 0);
  });
  test('afterListing sees the live files before any footer is read', async () => {
    const { store: s, counters } = countingStore(store);
    let seen = -1;
    let rangesAtListing = -1;
    await run(s, `true | ${R} | count`, {
      nowNs: NOW,
      hooks: {
        afterListing: ({ files }) => {
          seen = files.length;
          rangesAtListing = counters.getRange;
        },
      },
    });
    assert.equal(seen, keys.length);
    assert.equal(rangesAtListing, 0);
  });
});
