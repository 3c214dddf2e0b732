/**
 * @module start-compactor.test
 * The compactor role end to end: a sweep over several partitions on the local store and on S3 (s3rver behind
 * `createCasEnforcingStore`) gives the same manifests and the same live rows, writes the audit record, leaves
 * unsealed partitions alone, and a second sweep is a no-op.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '@sluice/config';
import type { SluiceConfig } from '@sluice/config';
import {
  createLocalObjectStore,
  createResilientObjectStore,
  createS3ObjectStore,
  encodeLogsParquet,
  manifestKey,
  parsePartitionManifest,
} from '@sluice/storage';
import type { ObjectStore, S3ObjectStore, StoredLogRow } from '@sluice/storage';
import { createCasEnforcingStore, startS3rver } from '@sluice/storage/testing';
import type { S3rverHandle } from '@sluice/storage/testing';
import { createLogger } from '@sluice/telemetry';
import type { MemoryLender } from './memory-lender.js';
import type { SweepReport } from './start-compactor.js';
import { startCompactor } from './start-compactor.js';
import {
  DuckOracle,
  SEALED_HOUR_MS,
  liveKeys,
  parquetKeys,
  partitionPrefix,
  rowsFor,
  writeDataFile,
} from '@sluice/compaction/testing';

const HOUR_MS = 3_600_000;

function config(): SluiceConfig {
  const r = parseConfig({
    fileText: 'compaction: { enabled: true, interval_secs: 3600, grace_secs: 900, open_hour_min_file_age_secs: 0 }\n',
    env: {},
  });
  if (!r.ok) throw new Error(r.error.map((i) => i.message).join('; '));
  return r.value;
}

/** The same files (same names, same bytes) for every store under test. */
interface Fixture {
  readonly files: { readonly key: string; readonly bytes: Uint8Array }[];
  readonly sealed: readonly string[];
  readonly unsealed: string;
  readonly single: string;
}

async function fixture(nowMs: number): Promise<Fixture> {
  const files: { key: string; bytes: Uint8Array }[] = [];
  let n = 0;
  const add = async (prefix: string, rows: StoredLogRow[]) => {
    // Fixed, sortable uuidv7-shaped names so both stores hold identical keys.
    const name = `0190a000-0000-7000-8000-${String(n++).padStart(12, '0')}.parquet`;
    files.push({ key: `${prefix}${name}`, bytes: await encodeLogsParquet(rows, { rowGroupRows: 128 }) });
  };
  const a = partitionPrefix('acme', SEALED_HOUR_MS);
  const b = partitionPrefix('beta co', SEALED_HOUR_MS + HOUR_MS);
  for (let i = 0; i < 3; i++) await add(a, rowsFor(300, 10 + i, SEALED_HOUR_MS, 'acme'));
  for (let i = 0; i < 2; i++) await add(b, rowsFor(250, 20 + i, SEALED_HOUR_MS + HOUR_MS, 'beta co'));
  const single = partitionPrefix('acme', SEALED_HOUR_MS + 2 * HOUR_MS);
  await add(single, rowsFor(40, 30, SEALED_HOUR_MS + 2 * HOUR_MS, 'acme'));
  const openHour = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const unsealed = partitionPrefix('acme', openHour);
  for (let i = 0; i < 2; i++) await add(unsealed, rowsFor(30, 40 + i, openHour, 'acme'));
  return { files, sealed: [a, b], unsealed, single };
}

interface Observed {
  readonly report: SweepReport;
  readonly manifests: unknown[];
  readonly live: string[][];
  readonly unsealedKeys: string[];
  readonly audit: unknown[];
  readonly second: SweepReport;
}

async function sweepAndObserve(store: ObjectStore, f: Fixture, duck: DuckOracle, scratch: string): Promise<Observed> {
  for (const file of f.files) await store.put(file.key, file.bytes);
  const log = createLogger('compactor-test', { write: () => undefined });
  const compactor = startCompactor(config(), { log, store, scratchDir: scratch, rowGroupRows: 200 });
  try {
    const report = await compactor.sweepOnce();
    const manifests: unknown[] = [];
    const live: string[][] = [];
    for (const p of f.sealed) {
      manifests.push(parsePartitionManifest((await store.get(manifestKey(p)))!).generation);
      live.push(await duck.fileOrder(store, await liveKeys(store, p)));
    }
    const audit: unknown[] = [];
    for await (const e of store.list({ prefix: 'audit/' })) {
      if (e.kind !== 'object') continue;
      const line = JSON.parse(new TextDecoder().decode((await store.get(e.key))!)) as Record<string, unknown>;
      audit.push({
        kind: line['event_kind'],
        type: line['event_type'],
        tenant: line['tenant_id'],
        partition: line['partition'],
        rows: line['rows'],
        inputs: (line['inputs'] as unknown[]).length,
        generation: line['generation'],
      });
    }
    audit.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    const second = await compactor.sweepOnce();
    return { report, manifests, live, unsealedKeys: await parquetKeys(store, f.unsealed), audit, second };
  } finally {
    await compactor.stop();
  }
}

describe('startCompactor sweeps', () => {
  let s3: S3rverHandle;
  let s3store: S3ObjectStore;
  let root: string;
  let scratch: string;
  let duck: DuckOracle;
  let f: Fixture;
  let local: Observed;
  let remote: Observed;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-compactor-sweep-'));
    scratch = await mkdtemp(join(tmpdir(), 'sluice-compactor-scratch-'));
    s3 = await startS3rver();
    s3store = createS3ObjectStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: 'sluice',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      listPageSize: 3, // several listing pages per sweep
    });
    duck = await DuckOracle.create();
    f = await fixture(Date.now());
    local = await sweepAndObserve(createLocalObjectStore({ root }), f, duck, scratch);
    // s3rver answers 500 now and then under concurrent puts; production retries through the same wrapper.
    const bounded = createResilientObjectStore(s3store, {
      requestTimeoutMs: 30_000,
      maxAttempts: 6,
      retryBaseMs: 100,
      retryMaxMs: 1000,
    });
    remote = await sweepAndObserve(createCasEnforcingStore(bounded), f, duck, scratch);
  });
  after(async () => {
    await duck.close();
    s3store.close();
    await s3.close();
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  test('a sweep commits every sealed multi-file partition, conserving each row in compacted order', async () => {
    assert.equal(local.report.partitions, 4);
    assert.equal(local.report.unsealed, 1);
    assert.equal(local.report.noop, 1);
    assert.deepEqual(
      local.report.outcomes.map((o) => [o.status, o.partition]),
      f.sealed.map((p) => ['committed', p]),
    );
    assert.deepEqual(local.manifests, [1, 1]);
    const store = createLocalObjectStore({ root });
    const inputs = (p: string) => f.files.filter((x) => x.key.startsWith(p)).map((x) => x.key);
    // The inputs still exist (deleted only after the grace), so DuckDB can read them as the "before" side.
    for (const [i, p] of f.sealed.entries())
      assert.deepEqual(local.live[i], await duck.expectedOrder(store, inputs(p)));
  });

  test('the compaction audit records name the partition, inputs, generation and rows', () => {
    assert.deepEqual(local.audit, [
      { kind: 3, type: 'compaction', tenant: 'acme', partition: f.sealed[0], rows: 900, inputs: 3, generation: 1 },
      { kind: 3, type: 'compaction', tenant: 'beta co', partition: f.sealed[1], rows: 500, inputs: 2, generation: 1 },
    ]);
  });

  test('the unsealed partition is untouched and a second sweep changes nothing', () => {
    assert.deepEqual(
      local.unsealedKeys,
      f.files.filter((x) => x.key.startsWith(f.unsealed)).map((x) => x.key),
    );
    assert.deepEqual(local.second.outcomes, []);
    assert.equal(local.second.noop, 3);
    assert.deepEqual(local.second.deleted, []);
  });

  test('S3 (s3rver behind the CAS-enforcing wrapper) gives the same result as the local store', () => {
    const strip = (r: SweepReport) => ({
      partitions: r.partitions,
      unsealed: r.unsealed,
      noop: r.noop,
      outcomes: r.outcomes.map((o) =>
        o.status === 'committed' ? [o.status, o.partition, o.generation, o.inputs, o.rows] : [o.status, o.partition],
      ),
    });
    assert.deepEqual(strip(remote.report), strip(local.report));
    assert.deepEqual(strip(remote.second), strip(local.second));
    assert.deepEqual(remote.manifests, local.manifests);
    assert.deepEqual(remote.live, local.live, 'identical live rows, every column, in the same order');
    assert.deepEqual(remote.audit, local.audit);
    assert.deepEqual(remote.unsealedKeys, local.unsealedKeys);
  });

  test('stop() ends the role and a later sweepOnce is refused', async () => {
    const c = startCompactor(config(), {
      log: createLogger('compactor-test', { write: () => undefined }),
      store: createLocalObjectStore({ root }),
    });
    await c.stop();
    await c.stop();
    await assert.rejects(c.sweepOnce(), /stopped/);
  });
});

describe('borrowing the merge memory from the query pool', () => {
  test('a merge waits while the pool cannot lend, runs holding the loan, and gives it back; unsealed and already-compacted partitions borrow nothing', async () => {
    const d = await mkdtemp(join(tmpdir(), 'sluice-compactor-lend-'));
    try {
      const store = createLocalObjectStore({ root: d });
      const sealed = partitionPrefix('acme', SEALED_HOUR_MS);
      for (let i = 0; i < 2; i++) await writeDataFile(store, sealed, rowsFor(100, 60 + i, SEALED_HOUR_MS));
      const openHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      for (let i = 0; i < 2; i++)
        await writeDataFile(store, partitionPrefix('acme', openHour), rowsFor(10, 70 + i, openHour));
      const events: string[] = [];
      let refusals = 2;
      let outstanding = 0;
      const lender: MemoryLender = {
        loanBytes: (cap) => cap,
        tryBorrow(bytes) {
          if (refusals > 0) {
            refusals--;
            events.push(`refused ${bytes}`);
            return null;
          }
          outstanding += bytes;
          events.push(`lent ${bytes}`);
          return {
            release() {
              outstanding -= bytes;
              events.push('released');
            },
          };
        },
      };
      const lines: string[] = [];
      const compactor = startCompactor(config(), {
        log: createLogger('compactor-test', { write: (l: string) => void lines.push(l) }),
        store,
        memoryLender: lender,
        borrowRetryMs: 1,
        beforeCommit: async () => {
          events.push(`commit while holding ${outstanding}`);
        },
      });
      try {
        const report = await compactor.sweepOnce();
        assert.deepEqual(
          report.outcomes.map((o) => o.status),
          ['committed'],
        );
        assert.equal(report.unsealed, 1);
        // The sealed partition is one file now: the next sweep has nothing to merge and borrows nothing.
        const seen = events.length;
        const again = await compactor.sweepOnce();
        assert.deepEqual(again.outcomes, []);
        assert.deepEqual(events.slice(seen), [], 'no loan for a partition that needs no merge');
      } finally {
        await compactor.stop();
      }
      const cap = 3 * 64 + 64; // MiB: compaction.memory_budget_bytes default 64 MiB → heap cap 256 MiB
      const loan = cap * 1024 * 1024;
      // The generation-0 bootstrap (a manifest write, no decoding) runs before the loan; the merge and its commit inside it.
      assert.deepEqual(events, [
        'commit while holding 0',
        `refused ${loan}`,
        `refused ${loan}`,
        `lent ${loan}`,
        `commit while holding ${loan}`,
        'released',
      ]);
      assert.equal(outstanding, 0);
      assert.equal(
        lines.filter((l) => l.includes('compaction waiting for the query pool')).length,
        1,
        'the wait is logged once',
      );
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});
