/**
 * @module parallel-scan.property.test
 * Parallel scans (docs/design/query-engine.md, "Parallel scans"): random queries over random corpora give
 * byte-identical JSON answers (records, aggregates, `rows`, every stats figure) whether the scan runs on one
 * worker or lends a share of its files to a helper; a helper that is refused leaves the answer unchanged too,
 * and a helper's failure fails the query with the helper's failure.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { PoolReservation } from '@sluice/limits';
import { createMemoryPool } from '@sluice/limits';
import type { LogQuery } from '@sluice/query';
import type { ObjectStore } from '@sluice/storage';
import { createLocalObjectStore } from '@sluice/storage';
import type { ScanHelpers } from './scan-share.js';
import { executeScanShare } from './scan-share.js';
import { H, T0, makeRows, writeDataFiles } from './testing/corpus.js';
import { LIMITS, q, run } from './testing/harness.js';

const NOW = T0 + 5n * H;
const iso = (ns: bigint): string => new Date(Number(ns / 1_000_000n)).toISOString();
const R = `range(${iso(T0)}, ${iso(T0 + 4n * H)})`;

const PREDICATES = [
  'true',
  'severity >= warn',
  'service == "api"',
  'contains(body, "cache")',
  'attr.http.method == "GET"',
  'template_id > 3',
];
const STAGES = [
  'count',
  'count by template_id',
  'count by service',
  'count by bucket(5m)',
  'count by service, bucket(15m)',
  'count by attr.http.route',
  'count by scope, template_id, service',
  'count by template_id | sort count desc',
  'min(attr.cost) by service',
  'max(attr.cost)',
  'max(attr.cost) by attr.http.method | sort value desc',
  'sum(attr.cost) by service',
  'avg(attr.cost)',
  'limit 7',
  'sort ts desc | limit 5',
];

/** Helpers that scan in this thread, each share under its own slot joined to the query's group. */
function inThreadHelpers(
  store: ObjectStore,
  pool: ReturnType<typeof createMemoryPool>,
  text: string,
  mode: 'lend' | 'refuse',
  lent: { count: number },
): (reservation: PoolReservation) => ScanHelpers {
  return (leader) => ({
    async lend(files) {
      if (mode === 'refuse') return { status: 'refused' };
      lent.count++;
      const reservation = pool.createQuery(leader.queryId, { group: leader.openGroup() });
      try {
        const out = await executeScanShare({
          store,
          tenant: 'acme',
          query: q(text) as LogQuery,
          nowNs: NOW,
          defaultWindowSecs: 3600,
          limits: LIMITS,
          reservation,
          files,
        });
        return out.status === 'ok' ? out : { status: 'failed', failure: out.error };
      } finally {
        reservation.releaseAll();
      }
    },
  });
}

describe('a scan shared with a helper answers byte for byte what one worker answers', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  test('random corpora, random queries: one worker, a lending scan and a refused lend give identical bodies', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    let lends = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 50, max: 400 }),
        fc.constantFrom(...PREDICATES),
        fc.constantFrom(...STAGES),
        async (seed, filesPerHour, rowGroupRows, predicate, stage) => {
          const dir = await mkdtemp(join(tmpdir(), 'par-scan-'));
          dirs.push(dir);
          const store = createLocalObjectStore({ root: dir });
          const rows = makeRows({ tenant: 'acme', count: 1500, startNs: T0, spanNs: 4n * H, seed });
          await writeDataFiles(store, rows, { filesPerHour, rowGroupRows });
          const text = `${predicate} | ${R} | ${stage}`;
          const single = await run(store, text, { nowNs: NOW, pool });
          const lent = { count: 0 };
          const shared = await run(store, text, {
            nowNs: NOW,
            pool,
            helpers: inThreadHelpers(store, pool, text, 'lend', lent),
          });
          const refused = await run(store, text, {
            nowNs: NOW,
            pool,
            helpers: inThreadHelpers(store, pool, text, 'refuse', { count: 0 }),
          });
          assert.equal(single.outcome.status, 'ok');
          assert.equal(shared.text, single.text, text);
          assert.equal(refused.text, single.text, text);
          lends += lent.count;
          assert.equal(pool.reserved(), 0);
        },
      ),
      { numRuns: 40, seed: 11 },
    );
    // The property is about sharing: make sure it shared.
    assert.ok(lends >= 10, `only ${lends} scans were shared`);
  });

  test('a helper that fails fails the query with its failure, and nothing stays reserved', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'par-scan-'));
    dirs.push(dir);
    const store = createLocalObjectStore({ root: dir });
    await writeDataFiles(store, makeRows({ tenant: 'acme', count: 800, startNs: T0, spanNs: 2n * H, seed: 3 }), {
      filesPerHour: 2,
      rowGroupRows: 100,
    });
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    const r = await run(store, `true | ${R} | count by service`, {
      nowNs: NOW,
      pool,
      helpers: () => ({
        lend: () =>
          Promise.resolve({
            status: 'failed',
            failure: { kind: 'storage_unavailable', operation: 'get_range', key: 'k', attempts: 3, reason: 'timeout' },
          }),
      }),
    });
    assert.equal(r.outcome.status, 'error');
    assert.equal(r.outcome.status === 'error' && r.outcome.error.kind, 'storage_unavailable');
    assert.equal(pool.reserved(), 0);
  });
});
