/**
 * @module corrupt-objects-contained.test
 * Issue 18, query side: every kind of corrupt or foreign object (testing/corrupt-corpus.ts) is contained. Under
 * `fail` a query over it answers `storage_corrupt` naming the object and what is wrong; under `skip` the query is
 * served without it and says so in `stats`; healthy partitions answer as before, byte for byte in shape. One
 * contract, run against the local store and against S3 (s3rver): the same corpus gives the same answers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryPool } from '@sluice/limits';
import type { ObjectStore } from '@sluice/storage';
import { createLocalObjectStore, createS3ObjectStore } from '@sluice/storage';
import { startS3rver } from '@sluice/storage/testing';
import { MAX_SKIPPED_OBJECTS_LISTED } from './corrupt-objects.js';
import type { CorruptObjectPolicy } from './corrupt-objects.js';
import { listTemplates } from './templates.js';
import { H, T0 } from './testing/corpus.js';
import type { CorruptCorpus } from './testing/corrupt-corpus.js';
import { writeCorruptCorpus } from './testing/corrupt-corpus.js';
import { LIMITS, run, type RunResult } from './testing/harness.js';

const NOW = T0 + 20n * H;
const D = 24n * H;

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString().replace('.000Z', 'Z');
}

/** Hours `[from, to)` of the corpus. */
const hours = (from: number, to: number): string => `range(${iso(T0 + BigInt(from) * H)}, ${iso(T0 + BigInt(to) * H)})`;
/** Decodes `body` in every row group it reads, so damaged pages are met. */
const count = (from: number, to: number): string => `contains(body, "line") | ${hours(from, to)} | count`;

function errorOf(r: RunResult): unknown {
  return r.outcome.status === 'error' ? r.outcome.error : `ok: ${r.text.slice(0, 200)}`;
}

/** A store to run the contract against, and its teardown. */
interface StoreUnderTest {
  readonly store: ObjectStore;
  close(): Promise<void>;
}

/** The contract: the same corpus, the same answers, whatever the backend. */
function corruptObjectContract(backend: string, open: () => Promise<StoreUnderTest>): void {
  describe(`corrupt or foreign objects are contained (${backend})`, () => {
    let env: StoreUnderTest;
    let corpus: CorruptCorpus;
    before(async () => {
      env = await open();
      corpus = await writeCorruptCorpus(env.store);
    });
    after(async () => {
      await env.close();
    });
    const runIt = (dsl: string, policy: CorruptObjectPolicy): Promise<RunResult> =>
      run(env.store, dsl, { nowNs: NOW, onCorruptObject: policy });

    test('fail: each kind of damage answers storage_corrupt naming the object and the reason, and holds nothing', async () => {
      assert.equal(corpus.cases.length, 13);
      for (const c of corpus.cases) {
        const r = await runIt(count(c.hour, c.hour + 1), 'fail');
        assert.deepEqual(errorOf(r), { kind: 'storage_corrupt', key: c.key, reason: c.reason }, c.name);
        assert.deepEqual(r.outcome.corrupt, [{ key: c.key, reason: c.reason }], c.name);
        assert.equal(r.heldAfter, 0, c.name);
      }
    });

    test('fail is the default policy', async () => {
      const c = corpus.cases[0]!;
      const r = await run(env.store, count(c.hour, c.hour + 1), { nowNs: NOW });
      assert.deepEqual(errorOf(r), { kind: 'storage_corrupt', key: c.key, reason: c.reason });
    });

    test('healthy partitions are unaffected under either policy, and their stats are the four fields as before', async () => {
      for (const policy of ['fail', 'skip'] as const) {
        for (const [hour, rows] of corpus.healthy) {
          const r = await runIt(count(hour, hour + 1), policy);
          assert.equal(r.outcome.status, 'ok', `${policy} ${hour}: ${JSON.stringify(errorOf(r))}`);
          assert.equal(r.json.rows, rows);
          assert.deepEqual(Object.keys(r.json.stats), [
            'row_groups_scanned',
            'row_groups_pruned',
            'bytes_read',
            'rows_excluded',
          ]);
          assert.deepEqual(r.outcome.status === 'ok' && r.outcome.corrupt, []);
        }
      }
    });

    test('skip: the whole window is served without every damaged object; stats counts them all and names the first ten', async () => {
      const r = await runIt(count(0, corpus.hours), 'skip');
      assert.equal(r.outcome.status, 'ok', JSON.stringify(errorOf(r)));
      // Healthy hours, the healthy file beside the truncated one, and the row group read before the damaged one.
      assert.equal(r.json.rows, corpus.rowsWhenSkipping);
      const expected = corpus.cases.map((c) => ({ key: c.key, reason: c.reason }));
      assert.equal(r.json.stats.objects_skipped, corpus.cases.length);
      assert.equal(MAX_SKIPPED_OBJECTS_LISTED, 10);
      assert.deepEqual(r.json.stats.skipped_objects, expected.slice(0, MAX_SKIPPED_OBJECTS_LISTED));
      assert.deepEqual(r.outcome.status === 'ok' && r.outcome.corrupt, expected);
      // The four fields come first, unchanged; the skipped ones are appended.
      assert.ok(r.text.startsWith(`{"rows":${corpus.rowsWhenSkipping},"stats":{"row_groups_scanned":`), r.text);
      assert.deepEqual(Object.keys(r.json.stats), [
        'row_groups_scanned',
        'row_groups_pruned',
        'bytes_read',
        'rows_excluded',
        'objects_skipped',
        'skipped_objects',
      ]);
    });

    test('skip: each kind alone leaves out exactly its object (a damaged manifest: its whole partition)', async () => {
      const servedBeside: Record<number, number> = { 8: 100, 11: 50 };
      for (const c of corpus.cases) {
        const r = await runIt(count(c.hour, c.hour + 1), 'skip');
        assert.equal(r.outcome.status, 'ok', `${c.name}: ${JSON.stringify(errorOf(r))}`);
        assert.equal(r.json.rows, servedBeside[c.hour] ?? 0, c.name);
        assert.equal(r.json.stats.objects_skipped, 1, c.name);
        assert.deepEqual(r.json.stats.skipped_objects, [{ key: c.key, reason: c.reason }], c.name);
      }
    });

    test('skip: records from the file damaged in its second row group stop at that group', async () => {
      const c = corpus.cases.find((x) => x.hour === 11)!;
      const r = await runIt(`true | ${hours(11, 12)} | limit 1000`, 'skip');
      assert.equal(r.outcome.status, 'ok', JSON.stringify(errorOf(r)));
      assert.equal(r.json.records.length, 50);
      // Its matches were counted before its record columns failed to decode: they leave `rows` with it.
      assert.equal(r.json.rows, 50);
      assert.deepEqual(r.json.stats.skipped_objects, [{ key: c.key, reason: c.reason }]);
    });

    test('drift and list_templates: a truncated audit file is storage_corrupt under fail, left out under skip', async () => {
      const drift = `drift from ${iso(corpus.audit.day - D)} to ${iso(T0)}`;
      const failed = await runIt(drift, 'fail');
      assert.deepEqual(errorOf(failed), {
        kind: 'storage_corrupt',
        key: corpus.audit.damagedKey,
        reason: 'parquet_unreadable',
      });
      const skipped = await runIt(drift, 'skip');
      assert.equal(skipped.outcome.status, 'ok', JSON.stringify(errorOf(skipped)));
      assert.deepEqual(skipped.json.stats.skipped_objects, [
        { key: corpus.audit.damagedKey, reason: 'parquet_unreadable' },
      ]);

      const pool = createMemoryPool({ sizeBytes: 1 << 30 });
      for (const policy of ['fail', 'skip'] as const) {
        const reservation = pool.createQuery(`templates-${policy}`);
        const out = await listTemplates({
          store: env.store,
          tenant: corpus.tenant,
          reservation,
          limits: LIMITS,
          onCorruptObject: policy,
        });
        if (policy === 'fail') {
          assert.deepEqual(out.status === 'error' && out.error, {
            kind: 'storage_corrupt',
            key: corpus.audit.damagedKey,
            reason: 'parquet_unreadable',
          });
          assert.equal(reservation.held, 0);
        } else {
          assert.equal(out.status, 'ok');
          if (out.status !== 'ok') continue;
          const json = JSON.parse(out.body.toString('utf8'));
          assert.equal(json.templates.length, corpus.audit.templates);
          assert.deepEqual(json.stats, {
            objects_skipped: 1,
            skipped_objects: [{ key: corpus.audit.damagedKey, reason: 'parquet_unreadable' }],
          });
          out.budget.release();
        }
        reservation.releaseAll();
      }
    });
  });
}

corruptObjectContract('local store', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'engine-corrupt-'));
  return {
    store: createLocalObjectStore({ root: dir }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
});

corruptObjectContract('S3 (s3rver)', async () => {
  const s3 = await startS3rver();
  const store = createS3ObjectStore({
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    prefix: 'sluice',
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
    listPageSize: 7, // several listing pages per query
  });
  return {
    store,
    async close() {
      store.close();
      await s3.close();
    },
  };
});
