/**
 * @module start-compactor-quarantine.test
 * The compactor role with a corrupt input, on the local store and on S3 (s3rver behind `createCasEnforcingStore`):
 * the sweep that meets it quarantines it (result `quarantined`, `sluice.storage.corrupt_objects` counted once, a
 * warn line naming the key, the reason and the quarantine key), the next sweep commits the healthy rows and the
 * one after is a no-op — not `error` forever. A storage outage is `error`, counts nothing as corrupt and moves
 * nothing, and the partition compacts once storage is back.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '@sluice/config';
import type { SluiceConfig } from '@sluice/config';
import { StorageUnavailableError, createLocalObjectStore, createS3ObjectStore } from '@sluice/storage';
import type { ObjectStore, S3ObjectStore } from '@sluice/storage';
import { createCasEnforcingStore, startS3rver } from '@sluice/storage/testing';
import type { S3rverHandle } from '@sluice/storage/testing';
import {
  ATTR_SLUICE_COMPACTION_RESULT,
  ATTR_SLUICE_STORAGE_CORRUPT_REASON,
  ATTR_SLUICE_STORAGE_SEEN_BY,
  METRIC_SLUICE_COMPACTION_DURATION,
  METRIC_SLUICE_COMPACTION_PARTITIONS,
  METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS,
  createLogger,
} from '@sluice/telemetry';
import { quarantineKeyOf } from '@sluice/compaction';
import {
  DuckOracle,
  SEALED_HOUR_MS,
  flipPageBit,
  keysUnder,
  liveKeys,
  partitionPrefix,
  rowsFor,
  truncateObject,
  writeDataFile,
} from '@sluice/compaction/testing';
import type { CompactorMeter } from './compaction-metrics.js';
import { startCompactor } from './start-compactor.js';
import type { SweepReport } from './start-compactor.js';

function config(): SluiceConfig {
  const r = parseConfig({ fileText: 'compaction: { enabled: true, interval_secs: 3600, grace_secs: 900 }\n', env: {} });
  if (!r.ok) throw new Error(r.error.map((i) => i.message).join('; '));
  return r.value;
}

/** A meter that keeps every data point (counters and histograms alike), and sums them by name and attributes. */
function recordingMeter(): { meter: CompactorMeter; sum(name: string, attrs?: Record<string, unknown>): number } {
  const points: { name: string; value: number; attrs: Record<string, unknown> }[] = [];
  const instrument = (name: string) => {
    const push = (value: number, attrs: Record<string, unknown> = {}) => void points.push({ name, value, attrs });
    return { add: push, record: push };
  };
  const meter = {
    createCounter: instrument,
    createHistogram: instrument,
    createUpDownCounter: instrument,
    createGauge: instrument,
  } as unknown as CompactorMeter;
  return {
    meter,
    sum: (name, attrs = {}) =>
      points
        .filter((p) => p.name === name && Object.entries(attrs).every(([k, v]) => p.attrs[k] === v))
        .reduce((n, p) => n + (name === METRIC_SLUICE_COMPACTION_DURATION ? 1 : p.value), 0),
  };
}

const PARTITIONS = METRIC_SLUICE_COMPACTION_PARTITIONS;
const CORRUPT = METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS;
const RESULT = ATTR_SLUICE_COMPACTION_RESULT;

interface Run {
  readonly sweeps: SweepReport[];
  readonly warnings: Record<string, unknown>[];
  readonly corruptCounts: number[];
  readonly quarantinedKeys: string[];
  readonly live: string[];
  readonly expected: string[];
  readonly corrupt: string;
  readonly quarantinedPartitions: number;
}

/** A partition of two healthy files and a truncated one; three sweeps. */
async function sweepCorruptPartition(store: ObjectStore, duck: DuckOracle, scratch: string): Promise<Run> {
  const prefix = partitionPrefix('acme', SEALED_HOUR_MS);
  const healthy = [
    await writeDataFile(store, prefix, rowsFor(300, 1, SEALED_HOUR_MS, 'acme'), 128),
    await writeDataFile(store, prefix, rowsFor(200, 2, SEALED_HOUR_MS, 'acme'), 128),
  ];
  const corrupt = await writeDataFile(store, prefix, rowsFor(250, 3, SEALED_HOUR_MS, 'acme'), 128);
  await truncateObject(store, corrupt);
  const expected = await duck.expectedOrder(store, healthy);
  const lines: string[] = [];
  const metrics = recordingMeter();
  const compactor = startCompactor(config(), {
    log: createLogger('compactor-test', { write: (l: string) => void lines.push(l) }),
    meter: metrics.meter,
    store,
    scratchDir: scratch,
  });
  const sweeps: SweepReport[] = [];
  const corruptCounts: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      sweeps.push(await compactor.sweepOnce());
      corruptCounts.push(
        metrics.sum(CORRUPT, {
          [ATTR_SLUICE_STORAGE_CORRUPT_REASON]: 'parquet_unreadable',
          [ATTR_SLUICE_STORAGE_SEEN_BY]: 'compactor',
        }),
      );
    }
  } finally {
    await compactor.stop();
  }
  const warnings = lines
    .map((l) => JSON.parse(l) as { level: string; msg: string; fields?: Record<string, unknown> })
    .filter((l) => l.level === 'warn' && l.msg.includes('quarantined'))
    .map((l) => l.fields ?? {});
  return {
    sweeps,
    warnings,
    corruptCounts,
    quarantinedKeys: await keysUnder(store, 'quarantine/'),
    live: await duck.fileOrder(store, await liveKeys(store, prefix)),
    expected,
    corrupt,
    quarantinedPartitions: metrics.sum(PARTITIONS, { [RESULT]: 'quarantined' }),
  };
}

function assertQuarantineRun(r: Run): void {
  const [first, second, third] = r.sweeps;
  assert.deepEqual(
    first?.outcomes.map((o) => o.status),
    ['quarantined'],
  );
  assert.deepEqual(
    first?.quarantined.map((q) => [q.key, q.reason, q.quarantineKey]),
    [[r.corrupt, 'parquet_unreadable', quarantineKeyOf(r.corrupt)]],
  );
  assert.deepEqual(
    second?.outcomes.map((o) => [o.status, o.status === 'committed' ? o.rows : null]),
    [['committed', 500]],
    'the next sweep compacts the healthy rows',
  );
  assert.deepEqual(third?.outcomes, [], 'and the one after has nothing to do');
  assert.equal(third?.noop, 1);
  assert.equal(r.quarantinedPartitions, 1, 'sluice.compaction.partitions{result=quarantined} once');
  assert.deepEqual(r.corruptCounts, [1, 1, 1], 'sluice.storage.corrupt_objects counted once per object');
  assert.equal(r.warnings.length, 1);
  assert.deepEqual(
    [r.warnings[0]?.['key'], r.warnings[0]?.['reason'], r.warnings[0]?.['quarantine_key']],
    [r.corrupt, 'parquet_unreadable', quarantineKeyOf(r.corrupt)],
  );
  assert.deepEqual(r.quarantinedKeys, [quarantineKeyOf(r.corrupt), `${quarantineKeyOf(r.corrupt)}.quarantine.json`]);
  assert.deepEqual(r.live, r.expected, 'every healthy row once, every column, in compacted order');
}

describe('the compactor role quarantines a corrupt input', () => {
  let s3: S3rverHandle;
  let s3store: S3ObjectStore;
  let root: string;
  let scratch: string;
  let duck: DuckOracle;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-compactor-quarantine-'));
    scratch = await mkdtemp(join(tmpdir(), 'sluice-compactor-quarantine-scratch-'));
    s3 = await startS3rver();
    s3store = createS3ObjectStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: 'sluice',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      listPageSize: 3,
    });
    duck = await DuckOracle.create();
  });
  after(async () => {
    await duck.close();
    s3store.close();
    await s3.close();
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  test('local store: the sweep that meets a truncated file quarantines it, counts and logs it; the next commits, then noop', async () => {
    assertQuarantineRun(
      await sweepCorruptPartition(createLocalObjectStore({ root: join(root, 'local') }), duck, scratch),
    );
  });

  test('S3 (s3rver behind the CAS-enforcing wrapper): the same', async () => {
    assertQuarantineRun(await sweepCorruptPartition(createCasEnforcingStore(s3store), duck, scratch));
  });

  test('through the compaction worker (the sluice serve path): a bit-flipped page is quarantined in the worker and counted by the sweep', async () => {
    const d = join(root, 'worker');
    const store = createLocalObjectStore({ root: d });
    const prefix = partitionPrefix('acme', SEALED_HOUR_MS);
    const healthy = [
      await writeDataFile(store, prefix, rowsFor(150, 1, SEALED_HOUR_MS, 'acme'), 64),
      await writeDataFile(store, prefix, rowsFor(150, 2, SEALED_HOUR_MS, 'acme'), 64),
    ];
    const rotten = await writeDataFile(store, prefix, rowsFor(150, 3, SEALED_HOUR_MS, 'acme'), 64);
    await flipPageBit(store, rotten, 'body', 1);
    const expected = await duck.expectedOrder(store, healthy);
    const parsed = parseConfig({
      fileText: `storage: { backend: local, local: { root: ${JSON.stringify(d)} } }\ncompaction: { enabled: true, interval_secs: 3600, grace_secs: 900 }\n`,
      env: {},
    });
    assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.error));
    const metrics = recordingMeter();
    const compactor = startCompactor(parsed.value, {
      log: createLogger('compactor-test', { write: () => undefined }),
      meter: metrics.meter,
    });
    try {
      const first = await compactor.sweepOnce();
      assert.deepEqual(
        first.quarantined.map((q) => [q.key, q.reason, q.quarantineKey]),
        [[rotten, 'parquet_unreadable', quarantineKeyOf(rotten)]],
        JSON.stringify(first.outcomes),
      );
      assert.equal(metrics.sum(CORRUPT, { [ATTR_SLUICE_STORAGE_SEEN_BY]: 'compactor' }), 1);
      const second = await compactor.sweepOnce();
      assert.deepEqual(
        second.outcomes.map((o) => [o.status, o.status === 'committed' ? o.rows : null]),
        [['committed', 300]],
      );
    } finally {
      await compactor.stop();
    }
    assert.deepEqual(await duck.fileOrder(store, await liveKeys(store, prefix)), expected);
  });

  test('a storage outage is result error: nothing counted as corrupt, nothing quarantined; storage back, it compacts', async () => {
    const store = createLocalObjectStore({ root: join(root, 'outage') });
    const prefix = partitionPrefix('acme', SEALED_HOUR_MS);
    for (let i = 0; i < 3; i++) await writeDataFile(store, prefix, rowsFor(100, i, SEALED_HOUR_MS, 'acme'));
    let down = true;
    const flaky: ObjectStore = {
      put: (...a: Parameters<ObjectStore['put']>) => store.put(...a),
      putConditional: (...a: Parameters<ObjectStore['putConditional']>) => store.putConditional(...a),
      get: (...a: Parameters<ObjectStore['get']>) => store.get(...a),
      getVersioned: (...a: Parameters<ObjectStore['getVersioned']>) => store.getVersioned(...a),
      getRange: (...a: Parameters<ObjectStore['getRange']>) =>
        down ? Promise.reject(new StorageUnavailableError('get_range', a[0], 3, 'timeout')) : store.getRange(...a),
      head: (...a: Parameters<ObjectStore['head']>) => store.head(...a),
      list: (...a: Parameters<ObjectStore['list']>) => store.list(...a),
      delete: (...a: Parameters<ObjectStore['delete']>) => store.delete(...a),
    };
    const metrics = recordingMeter();
    const compactor = startCompactor(config(), {
      log: createLogger('compactor-test', { write: () => undefined }),
      meter: metrics.meter,
      store: flaky,
      scratchDir: scratch,
    });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await compactor.sweepOnce();
        assert.deepEqual(
          r.outcomes.map((o) => o.status),
          ['error'],
        );
        assert.match(r.outcomes[0]?.status === 'error' ? r.outcomes[0].message : '', /unavailable/);
        assert.deepEqual(r.quarantined, []);
      }
      assert.equal(metrics.sum(PARTITIONS, { [RESULT]: 'error' }), 2);
      assert.equal(metrics.sum(CORRUPT), 0);
      assert.deepEqual(await keysUnder(store, 'quarantine/'), []);
      down = false;
      const healed = await compactor.sweepOnce();
      assert.deepEqual(
        healed.outcomes.map((o) => [o.status, o.status === 'committed' ? o.rows : null]),
        [['committed', 300]],
      );
    } finally {
      await compactor.stop();
    }
  });
});
