/**
 * @module parallel-scan.test
 * Scan helpers on real worker threads (docs/design/query-governance.md, "Parallel scans"): an aggregation that
 * lends a share of its files answers what a lone worker answers; a helper is lent only when `mayLend` says so;
 * a helper that dies fails only its query (typed, as a dying query worker does), gives its bytes back and is
 * replaced by one that serves the next query; a stopped query stops its helper and every byte of the query's
 * group is given back. Waits are for observable states (the pool's slots, the gate seam), never durations.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryPool, type MemoryPool } from '@sluice/limits';
import { parseQuery, type Query } from '@sluice/query';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7 } from '@sluice/storage';
import { NOW, T0, WINDOW, row, within } from './testing/query-harness.js';
import { createWorkerPool, type JobResult, type WorkerPool } from './worker-pool.js';

const SEAMS = new URL('./testing/helper-seams-query-worker.js', import.meta.url);

function q(text: string): Query {
  const r = parseQuery(text);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** Four files per tenant in the first hour, row groups of 50, templates and severities varying. */
async function fixture(dir: string, tenants: readonly string[]): Promise<void> {
  const store = createLocalObjectStore({ root: dir });
  for (const tenant of tenants)
    for (let f = 0; f < 4; f++) {
      const rows = Array.from({ length: 200 + 37 * f }, (_, i) => {
        const r = row(tenant, T0 + BigInt(f * 600 + i) * 1_000_000_000n, `line ${i % 11} of ${f}`);
        return {
          ...r,
          record: { ...r.record, severityNumber: [5, 9, 13, 17][(i + f) % 4] as number },
          mined: { ...r.mined, templateId: BigInt(1 + ((i * 7 + f) % 9)) },
        };
      });
      await store.put(dataFileKey(tenant, T0, uuidv7()), await encodeLogsParquet(rows, { rowGroupRows: 50 }));
    }
}

function workers(
  pool: MemoryPool,
  dir: string,
  o: {
    helpers: number;
    mayLend?: () => boolean;
    onWorkerDeath?: (info: { queryId: string | null; reason: string }) => void;
  },
): WorkerPool {
  const w = createWorkerPool({
    size: 1,
    pool,
    maxOldGenerationSizeMb: 256,
    workerUrl: SEAMS,
    helpers: o.helpers,
    ...(o.mayLend !== undefined ? { mayLend: o.mayLend } : {}),
    ...(o.onWorkerDeath !== undefined ? { onWorkerDeath: o.onWorkerDeath } : {}),
    data: {
      pool: pool.shared,
      storage: { backend: 'local', root: dir, requestTimeoutMs: 0 },
      defaultWindowSecs: 3600,
      recycleBytes: 1 << 30,
      heapSlackBytes: 64 << 20,
      // No footer caches: bytes_read is then the same however the files are split between threads.
      footerCacheBytes: 0,
      maxOpenFiles: 0,
      onCorruptObject: 'fail',
      maxQueryBytes: pool.size,
      limits: {
        defaultRows: 1000,
        maxRows: 10_000,
        maxListedObjects: 100_000,
        maxFiles: 10_000,
        maxResultBytes: 64 << 20,
      },
    },
  });
  pools.set(w, pool);
  return w;
}

let seq = 0;
/** Runs one query; an answered body's reservation is given back at once (the query service's `done`). */
async function runQuery(w: WorkerPool, tenant: string, text: string): Promise<JobResult> {
  const id = `pq-${++seq}`;
  const r = await w.run(id, tenant, NOW, { kind: 'query', query: q(text) });
  if (r.status === 'ok') pools.get(w)?.releaseQuery(id);
  return r;
}
const pools = new Map<WorkerPool, MemoryPool>();

/**
 * Runs counts until one was lent a helper (a helper starts after the pool is created; until it is ready a lend is
 * answered `refused`): an observable state, not a duration.
 */
async function warm(w: WorkerPool, lends: () => number): Promise<void> {
  const before = lends();
  for (let i = 0; i < 500 && lends() === before; i++) await runQuery(w, 'acme', `true | ${WINDOW} | count`);
  assert.ok(lends() > before, 'a helper was lent');
}

function bodyOf(r: JobResult): string {
  assert.equal(r.status, 'ok', JSON.stringify(r));
  return r.status === 'ok' ? new TextDecoder().decode(r.body) : '';
}

/** Bytes held under query `id` in every slot (coordinator and helper). */
function heldBy(pool: MemoryPool, id: string): number {
  return pool
    .consumers()
    .filter((c) => c.queryId === id)
    .reduce((s, c) => s + c.heldBytes, 0);
}

describe('scan helpers on worker threads', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parallel-scan-'));
    await fixture(dir, ['acme', 'die', 'gated']);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test(
    'aggregations answer byte for byte what one worker answers, and a helper is lent only when mayLend allows',
    { timeout: 60_000 },
    async () => {
      const pool = createMemoryPool({ sizeBytes: 256 << 20 });
      let lends = 0;
      let asked = 0;
      let allow = true;
      const single = workers(pool, dir, { helpers: 0 });
      const shared = workers(pool, dir, {
        helpers: 1,
        mayLend: () => {
          asked++;
          if (allow) lends++;
          return allow;
        },
      });
      try {
        const texts = [
          `true | ${WINDOW} | count`,
          `true | ${WINDOW} | count by template_id`,
          `severity >= warn | ${WINDOW} | count by template_id, bucket(5m)`,
          `contains(body, "line 3") | ${WINDOW} | count`,
          `true | ${WINDOW} | max(body_bytes) by template_id`,
          `true | ${WINDOW} | sort ts desc | limit 5`,
        ];
        await warm(shared, () => lends);
        for (const text of texts) {
          const want = bodyOf(await runQuery(single, 'acme', text));
          const got = bodyOf(await runQuery(shared, 'acme', text));
          assert.equal(got, want, text);
        }
        assert.ok(lends >= 3, `helpers lent ${lends} times`);
        // Refused: a share of tenant `gated` would hold its helper at the gate until stopped, so this query can
        // only finish if its worker scanned every file itself.
        allow = false;
        const before = asked;
        assert.equal(
          bodyOf(await runQuery(shared, 'gated', texts[1] as string)),
          bodyOf(await runQuery(single, 'gated', texts[1] as string)),
        );
        assert.equal(asked, before + 1, 'mayLend was asked, and said no');
        await within(5_000, () => pool.reserved() === 0, 'every byte given back');
      } finally {
        await Promise.all([single.close(), shared.close()]);
      }
    },
  );

  test(
    'a helper that dies fails only its query with the dying-worker error, gives its bytes back, and its replacement serves the next query',
    { timeout: 60_000 },
    async () => {
      const pool = createMemoryPool({ sizeBytes: 256 << 20 });
      const deaths: { queryId: string | null; reason: string }[] = [];
      let lends = 0;
      const w = workers(pool, dir, { helpers: 1, mayLend: () => ++lends > 0, onWorkerDeath: (d) => deaths.push(d) });
      try {
        const text = `true | ${WINDOW} | count by template_id`;
        await warm(w, () => lends);
        const want = bodyOf(await runQuery(w, 'acme', text));
        const dead = await runQuery(w, 'die', text);
        assert.deepEqual(dead, {
          status: 'error',
          error: { kind: 'internal', message: 'the query worker failed while running this query' },
          peakBytes: (dead as { peakBytes?: number }).peakBytes,
          corrupt: [],
        });
        assert.equal(deaths.length, 1);
        assert.equal(deaths[0]?.reason, 'crash');
        await within(5_000, () => pool.reserved() === 0, 'the dead helper’s bytes are given back');
        // The replacement serves once it has started (until then a lend is refused and the query scans alone).
        await warm(w, () => lends);
        assert.equal(bodyOf(await runQuery(w, 'acme', text)), want);
      } finally {
        await w.close();
      }
    },
  );

  test(
    'a stopped query stops its scanning helper and the whole group’s bytes are given back',
    { timeout: 60_000 },
    async () => {
      const pool = createMemoryPool({ sizeBytes: 256 << 20 });
      let lends = 0;
      const deaths: string[] = [];
      const w = workers(pool, dir, {
        helpers: 1,
        mayLend: () => ++lends > 0,
        onWorkerDeath: (d) => deaths.push(d.reason),
      });
      try {
        await warm(w, () => lends);
        const id = `pq-${++seq}`;
        const stop = new AbortController();
        const job = w.run(
          id,
          'gated',
          NOW,
          { kind: 'query', query: q(`true | ${WINDOW} | count by template_id`) },
          { signal: stop.signal },
        );
        // The helper holds its footer reservation at the gate: two slots of the query, one of them the helper's.
        await within(
          10_000,
          () => pool.consumers().filter((c) => c.queryId === id).length === 2 && heldBy(pool, id) > 0,
          'the helper is scanning',
        );
        stop.abort();
        const r = await job;
        assert.equal(r.status, 'cancelled');
        // Resolved only once the helper let go: no slot of the query is left, at once.
        assert.deepEqual(
          pool.consumers().filter((c) => c.queryId === id),
          [],
        );
        assert.equal(pool.reserved(), 0);
        assert.deepEqual(deaths, [], 'the helper stopped cooperatively (not terminated)');
        // The helper is idle again: the next query is served (and may lend it).
        assert.equal((await runQuery(w, 'acme', `true | ${WINDOW} | count`)).status, 'ok');
      } finally {
        await w.close();
      }
    },
  );
});
