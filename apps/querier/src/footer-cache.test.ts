/**
 * @module footer-cache.test
 * A query worker's footer cache, as the worker wires it (docs/design/query-governance.md, "Footer cache"): the
 * engine over a real local store wrapped to record every range read, the cache on a real shared pool, each query
 * on a reservation that relieves the cache before a refusal stands.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { executeQuery, type ExecuteOutcome } from '@sluice/engine';
import { createMemoryPool, type MemoryPool } from '@sluice/limits';
import { parseQuery, type Query } from '@sluice/query';
import type { ObjectStore } from '@sluice/storage';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7 } from '@sluice/storage';
import { T0, row } from './testing/query-harness.js';
import {
  FOOTER_CACHE_CONSUMER_PREFIX,
  createWorkerFooterCache,
  footerCacheHeldBytes,
  nonCacheHeldBytes,
  relievingReservation,
  type WorkerFooterCache,
} from './worker-footer-cache.js';

const FILES = 6;
const opened: WorkerFooterCache[] = [];
/** A worker cache closed after the tests (its relief channel). */
function workerCache(o: Parameters<typeof createWorkerFooterCache>[0]): WorkerFooterCache {
  const c = createWorkerFooterCache(o);
  opened.push(c);
  return c;
}
const ROWS = 300;
const WINDOW = 'range(2026-06-01T00:00:00Z, 2026-06-01T01:00:00Z)';
const QUERY = `contains(body, "line 1") | ${WINDOW} | count`;
const LIMITS = { defaultRows: 1000, maxRows: 10_000, maxListedObjects: 1000, maxFiles: 1000, maxResultBytes: 1 << 24 };

interface RangeRead {
  readonly key: string;
  readonly start: number;
  readonly end: number;
}

let dir = '';
let store: ObjectStore;
const sizes = new Map<string, number>();
const reads: RangeRead[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'footer-cache-'));
  const local = createLocalObjectStore({ root: dir });
  for (let f = 0; f < FILES; f++) {
    const rows = Array.from({ length: ROWS }, (_, i) =>
      row('acme', T0 + BigInt(f * ROWS + i) * 1_000_000n, `line ${i}`),
    );
    const bytes = await encodeLogsParquet(rows, { rowGroupRows: 100 });
    const key = dataFileKey('acme', T0, uuidv7());
    await local.put(key, bytes);
    sizes.set(key, bytes.byteLength);
  }
  // Records every range read: what the engine actually asked storage for.
  store = {
    put: (k, b, o) => local.put(k, b, o),
    putConditional: (k, b, c, o) => local.putConditional(k, b, c, o),
    get: (k, o) => local.get(k, o),
    getVersioned: (k, o) => local.getVersioned(k, o),
    head: (k, o) => local.head(k, o),
    delete: (k, o) => local.delete(k, o),
    list: (o) => local.list(o),
    getRange: (key, start, end, o) => {
      reads.push({ key, start, end });
      return local.getRange(key, start, end, o);
    },
  };
});
after(async () => {
  for (const c of opened) c.close();
  await rm(dir, { recursive: true, force: true });
});

function parsed(text: string): Query {
  const r = parseQuery(text);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** Runs QUERY as the worker does; returns the outcome (body released), the reads it made and its peak. */
async function runQuery(
  pool: MemoryPool,
  footers: WorkerFooterCache | undefined,
  id = `q-${Math.random()}`,
): Promise<{ outcome: ExecuteOutcome; json: { stats: { bytes_read: number } }; reads: RangeRead[]; peak: number }> {
  const inner = pool.createQuery(id);
  const reservation = footers === undefined ? inner : relievingReservation(inner, footers.relieve);
  const from = reads.length;
  try {
    const outcome = await executeQuery({
      store,
      tenant: 'acme',
      query: parsed(QUERY),
      nowNs: T0 + 3_600_000_000_000n,
      defaultWindowSecs: 3600,
      limits: LIMITS,
      reservation,
      ...(footers !== undefined ? { footers: footers.cache } : {}),
    });
    const peak = pool.consumers().find((c) => c.queryId === id)?.peakBytes ?? 0;
    const json = outcome.status === 'ok' ? JSON.parse(outcome.body.toString('utf8')) : undefined;
    if (outcome.status === 'ok') outcome.budget.release();
    return { outcome, json, reads: reads.slice(from), peak };
  } finally {
    reservation.releaseAll();
  }
}

const footerReads = (rs: readonly RangeRead[]): RangeRead[] => rs.filter((r) => r.end === sizes.get(r.key));
const readBytes = (rs: readonly RangeRead[]): number => rs.reduce((n, r) => n + r.end - r.start, 0);
const withoutBytesRead = (j: { stats: object }): unknown => ({ ...j, stats: { ...j.stats, bytes_read: 0 } });

describe('footer cache in the query worker', () => {
  test('a cached footer is not read from storage again: the repeat reads only row groups, and bytes_read says so', async () => {
    const pool = createMemoryPool({ sizeBytes: 256 << 20 });
    const footers = workerCache({ pool, capacityBytes: 8 << 20, threadId: 1 });
    const cold = await runQuery(pool, footers);
    assert.equal(cold.outcome.status, 'ok');
    assert.equal(footerReads(cold.reads).length, FILES, 'the cold run reads every footer');
    const warm = await runQuery(pool, footers);
    assert.equal(warm.outcome.status, 'ok');
    assert.deepEqual(footerReads(warm.reads), [], 'the warm run reads no footer');
    assert.ok(warm.reads.length > 0, 'it still reads the row groups');
    assert.deepEqual(withoutBytesRead(warm.json), withoutBytesRead(cold.json), 'the same answer');
    assert.equal(cold.json.stats.bytes_read, readBytes(cold.reads), 'bytes_read: bytes read from storage (cold)');
    assert.equal(warm.json.stats.bytes_read, readBytes(warm.reads), 'bytes_read: bytes read from storage (warm)');
    assert.equal(cold.json.stats.bytes_read - warm.json.stats.bytes_read, readBytes(footerReads(cold.reads)));
    assert.deepEqual(
      { hits: footers.cache.stats().hits, entries: footers.cache.stats().entries },
      { hits: FILES, entries: FILES },
    );
  });

  test("the cache's bytes are on the pool under footer-cache-<thread>, and no query holds anything between queries", async () => {
    const pool = createMemoryPool({ sizeBytes: 256 << 20 });
    const footers = workerCache({ pool, capacityBytes: 8 << 20, threadId: 7 });
    await runQuery(pool, footers);
    const held = footers.cache.heldBytes;
    assert.ok(held > 0);
    assert.deepEqual(
      pool.consumers().map((c) => ({ id: c.queryId, held: c.heldBytes })),
      [{ id: `${FOOTER_CACHE_CONSUMER_PREFIX}7`, held }],
      'the only consumer left is the cache, holding exactly its entries',
    );
    assert.equal(pool.reserved(), held);
    assert.equal(nonCacheHeldBytes(pool), 0);
    assert.equal(footers.relieve(), held);
    assert.equal(pool.reserved(), 0, 'cleared, the cache gives every byte back');
  });

  test('a cache that is off reserves nothing and keeps nothing', async () => {
    const pool = createMemoryPool({ sizeBytes: 256 << 20 });
    const footers = workerCache({ pool, capacityBytes: 0, threadId: 2 });
    const r = await runQuery(pool, footers);
    assert.equal(r.outcome.status, 'ok');
    assert.equal(footers.cache.stats().entries, 0);
    assert.deepEqual(pool.consumers(), []);
  });

  test('a query that needs the bytes the cache holds is served after the cache is cleared, never refused', async () => {
    // What the query needs with nothing else on the pool.
    const measured = await runQuery(createMemoryPool({ sizeBytes: 256 << 20 }), undefined);
    assert.equal(measured.outcome.status, 'ok');
    const need = measured.peak;
    // A pool of exactly that size, with half of it held by cached footers (of other files).
    const pool = createMemoryPool({ sizeBytes: need });
    const footers = workerCache({ pool, capacityBytes: need, threadId: 3 });
    for (let i = 0; i < 4; i++)
      assert.ok(footers.cache.offer(`other-${i}`, 1, measured.outcome as never, Math.floor(need / 8)));
    assert.equal(pool.reserved(), 4 * Math.floor(need / 8));
    const r = await runQuery(pool, footers);
    assert.equal(r.outcome.status, 'ok', JSON.stringify(r.outcome.status === 'error' ? r.outcome.error : null));
    assert.ok(footers.cache.stats().evictions >= 4, 'the cached footers were given back');
    assert.equal(nonCacheHeldBytes(pool), 0);
  });

  test("another worker's cache is cleared before a pool refusal stands: the query is served", async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const other = new Worker(new URL('./testing/footer-cache-holder.js', import.meta.url), {
      workerData: { pool: pool.shared, bytes: 1 << 18 },
    });
    try {
      const ready = (await once(other, 'message')) as [{ held: number }];
      assert.equal(ready[0].held, 1 << 18);
      assert.equal(footerCacheHeldBytes(pool), 1 << 18, "the other worker's cache is on the pool");
      const mine = workerCache({ pool, capacityBytes: 1 << 18, threadId: 99 });
      const r = relievingReservation(pool.createQuery('big'), mine.relieve);
      assert.equal(r.tryGrow((1 << 20) - 1000).status, 'ok', 'it fits once the other cache is gone');
      assert.equal(footerCacheHeldBytes(pool), 0);
      r.releaseAll();
    } finally {
      other.postMessage('stop');
      await once(other, 'exit');
    }
  });

  test('a refusal by the query ceiling is not retried: the cache stays', () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const footers = workerCache({ pool, capacityBytes: 1 << 19, threadId: 4 });
    footers.cache.offer('k', 1, {} as never, 1000);
    const r = relievingReservation(pool.createQuery('q', { maxBytes: 100 }), footers.relieve);
    const out = r.tryGrow(200);
    assert.equal(out.status, 'refused');
    assert.equal(footers.cache.heldBytes, 1000);
    assert.equal(r.lastRefusal, out);
    r.releaseAll();
  });
});
