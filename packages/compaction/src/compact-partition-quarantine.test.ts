/**
 * @module compact-partition-quarantine.test
 * compactPartition with corrupt inputs, on the local store with real Parquet files: each kind of corrupt object is
 * quarantined (bytes kept under `quarantine/`, out of the live set, one audit event), the healthy rows are then
 * compacted and conserved, and later runs are committed/noop instead of failing forever. A storage outage is not
 * corruption: the run fails and nothing is quarantined.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  StorageUnavailableError,
  createLocalObjectStore,
  encodeAuditParquet,
  encodeLogsParquet,
  encodePartitionManifest,
  manifestKey,
  parsePartitionManifest,
  uuidv7,
} from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';
import { CompactionError, compactPartition } from './compact-partition.js';
import type { PartitionOutcome } from './compact-partition.js';
import { QUARANTINE_RECORD_SUFFIX, quarantineKeyOf } from './quarantine.js';
import {
  DuckOracle,
  SEALED_HOUR_MS,
  auditEvents,
  flipPageBit,
  keysUnder,
  liveKeys,
  parquetKeys,
  partitionPrefix,
  rowsFor,
  truncateObject,
  writeDataFile,
} from './testing/index.js';

const GRACE_SECS = 900;
const GRACE_MS = GRACE_SECS * 1000;

/** A store that behaves like `inner` except where `getRange` is overridden. */
function withGetRange(inner: ObjectStore, getRange: ObjectStore['getRange']): ObjectStore {
  return {
    put: (...a: Parameters<ObjectStore['put']>) => inner.put(...a),
    putConditional: (...a: Parameters<ObjectStore['putConditional']>) => inner.putConditional(...a),
    get: (...a: Parameters<ObjectStore['get']>) => inner.get(...a),
    getVersioned: (...a: Parameters<ObjectStore['getVersioned']>) => inner.getVersioned(...a),
    getRange,
    head: (...a: Parameters<ObjectStore['head']>) => inner.head(...a),
    list: (...a: Parameters<ObjectStore['list']>) => inner.list(...a),
    delete: (...a: Parameters<ObjectStore['delete']>) => inner.delete(...a),
  };
}

describe('compactPartition quarantines corrupt inputs (local store)', () => {
  let root: string;
  let scratch: string;
  let store: ObjectStore;
  let duck: DuckOracle;
  const now = () => Date.now();

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-quarantine-'));
    scratch = await mkdtemp(join(tmpdir(), 'sluice-quarantine-scratch-'));
    store = createLocalObjectStore({ root });
    duck = await DuckOracle.create();
  });
  after(async () => {
    await duck.close();
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  const run = (prefix: string, extra: { now?: () => number; memoryBudgetBytes?: number; store?: ObjectStore } = {}) =>
    compactPartition(extra.store ?? store, prefix, {
      now: extra.now ?? now,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
      ...(extra.memoryBudgetBytes !== undefined ? { memoryBudgetBytes: extra.memoryBudgetBytes } : {}),
    });

  /** Two healthy files and one more that `damage` corrupts; returns their keys. */
  async function partitionWithDamagedFile(
    tenant: string,
    damage: (key: string) => Promise<unknown>,
    options: { manifest?: number; rowGroupRows?: number; corruptRows?: Parameters<typeof writeDataFile>[2] } = {},
  ): Promise<{ prefix: string; healthy: string[]; corrupt: string; corruptBytes: Uint8Array }> {
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    const healthy = [
      await writeDataFile(store, prefix, rowsFor(240, 1, SEALED_HOUR_MS, tenant), options.rowGroupRows),
      await writeDataFile(store, prefix, rowsFor(160, 2, SEALED_HOUR_MS, tenant), options.rowGroupRows),
    ];
    const corrupt = await writeDataFile(
      store,
      prefix,
      options.corruptRows ?? rowsFor(300, 3, SEALED_HOUR_MS, tenant),
      options.rowGroupRows,
    );
    await damage(corrupt);
    if (options.manifest !== undefined) {
      const files = [...healthy, corrupt].map((k) => k.slice(prefix.length));
      await store.put(manifestKey(prefix), encodePartitionManifest({ generation: options.manifest, files }));
    }
    return { prefix, healthy, corrupt, corruptBytes: (await store.get(corrupt))! };
  }

  /**
   * The common tail: the quarantine outcome, the copy and its record, the manifest without the file, the audit
   * event; then the next run merges exactly the healthy rows, and the one after is a no-op.
   */
  async function assertQuarantinedThenCompacted(
    p: { prefix: string; healthy: string[]; corrupt: string; corruptBytes: Uint8Array },
    outcome: PartitionOutcome,
    expect: { reason: string; generation: number },
    later: { memoryBudgetBytes?: number } = {},
  ): Promise<void> {
    const { prefix, healthy, corrupt, corruptBytes } = p;
    const name = (k: string) => k.slice(prefix.length);
    assert.equal(outcome.status, 'quarantined', JSON.stringify(outcome));
    assert.ok(outcome.status === 'quarantined');
    assert.equal(outcome.generation, expect.generation);
    assert.deepEqual(
      outcome.quarantined.map((q) => [q.key, q.reason, q.quarantineKey]),
      [[corrupt, expect.reason, quarantineKeyOf(corrupt)]],
    );
    assert.deepEqual(await store.get(quarantineKeyOf(corrupt)), corruptBytes, 'the bytes are kept exactly as found');
    const record = JSON.parse(
      new TextDecoder().decode((await store.get(`${quarantineKeyOf(corrupt)}${QUARANTINE_RECORD_SUFFIX}`))!),
    ) as Record<string, unknown>;
    assert.deepEqual([record['key'], record['reason'], record['bytes']], [corrupt, expect.reason, corruptBytes.length]);
    assert.deepEqual(parsePartitionManifest((await store.get(manifestKey(prefix)))!), {
      generation: expect.generation,
      files: healthy.map(name),
    });
    assert.ok((await parquetKeys(store, prefix)).includes(corrupt), 'the original stays for the grace period');
    const events = (await auditEvents(store)).filter((e) => e['event_type'] === 'quarantine' && e['key'] === corrupt);
    assert.equal(events.length, 1);
    assert.deepEqual(
      [events[0]!['event_kind'], events[0]!['reason'], events[0]!['quarantine_key'], events[0]!['generation']],
      [7, expect.reason, quarantineKeyOf(corrupt), expect.generation],
    );

    // The next sweep compacts the healthy files; every healthy row is there once, nothing of the corrupt file.
    const expected = await duck.expectedOrder(store, healthy);
    const next = await run(prefix, later);
    assert.equal(next.status, 'committed', JSON.stringify(next));
    assert.ok(next.status === 'committed');
    assert.deepEqual(next.inputs, healthy.map(name));
    assert.equal(next.rows, 400, 'rows before (healthy files) = rows after');
    assert.deepEqual(next.cleanup.stranded, [], 'the quarantined original is not adopted as late data');
    assert.deepEqual(await duck.fileOrder(store, await liveKeys(store, prefix)), expected);
    const again = await run(prefix);
    assert.ok(again.status === 'noop' && again.reason === 'single_file', JSON.stringify(again));

    // After the grace the original goes (with the retired inputs); the quarantined copy stays.
    const late = await run(prefix, { now: () => now() + 10 * GRACE_MS });
    assert.ok(late.status === 'noop', JSON.stringify(late));
    assert.ok(late.cleanup.deleted.includes(corrupt));
    assert.deepEqual(await parquetKeys(store, prefix), [`${prefix}${next.output}`]);
    assert.deepEqual(await store.get(quarantineKeyOf(corrupt)), corruptBytes);
  }

  test('a truncated input is quarantined, the healthy rows are compacted next run and conserved, and no sweep fails', async () => {
    const p = await partitionWithDamagedFile('trunc', (k) => truncateObject(store, k));
    // No manifest yet: the quarantine creates the first one (generation 0) naming every other file.
    const outcome = await run(p.prefix);
    await assertQuarantinedThenCompacted(p, outcome, { reason: 'parquet_unreadable', generation: 0 });
  });

  test('a bit flipped in a page is found by the merge and quarantined; the merge of the rest conserves every row', async () => {
    const p = await partitionWithDamagedFile('bitrot', (k) => flipPageBit(store, k, 'body', 1), {
      manifest: 3,
      rowGroupRows: 100,
    });
    // A small budget: the external merge (slices, spilled runs) meets the page.
    const outcome = await run(p.prefix, { memoryBudgetBytes: 64 * 1024 });
    await assertQuarantinedThenCompacted(
      p,
      outcome,
      { reason: 'parquet_unreadable', generation: 4 },
      { memoryBudgetBytes: 64 * 1024 },
    );
  });

  test('a file holding another tenant’s rows under this tenant’s key is quarantined as tenant_mismatch', async () => {
    const p = await partitionWithDamagedFile('host', () => Promise.resolve(), {
      manifest: 1,
      corruptRows: rowsFor(300, 3, SEALED_HOUR_MS, 'intruder'),
    });
    const outcome = await run(p.prefix);
    await assertQuarantinedThenCompacted(p, outcome, { reason: 'tenant_mismatch', generation: 2 });
  });

  test('a tenant longer than the 16 bytes the writer keeps of string statistics is not taken for a mismatch', async () => {
    const tenant = 'a-tenant-whose-name-is-longer-than-sixteen-bytes';
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    for (let i = 0; i < 2; i++) await writeDataFile(store, prefix, rowsFor(50, i, SEALED_HOUR_MS, tenant));
    const outcome = await run(prefix);
    assert.ok(outcome.status === 'committed' && outcome.rows === 100, JSON.stringify(outcome));
  });

  test('a file that is not a data file of ours (another schema) is quarantined as parquet_unreadable', async () => {
    const p = await partitionWithDamagedFile('schema', async (k) => {
      // A valid Parquet file, but Sluice's audit schema rather than the data-file schema.
      await store.put(
        k,
        await encodeAuditParquet([
          {
            tenantId: 'schema',
            timestampUnixNano: BigInt(SEALED_HOUR_MS) * 1_000_000n,
            eventType: 'template_created',
            templateId: 1n,
            oldVersion: 0,
            newVersion: 1,
            oldTemplate: '',
            newTemplate: 'x <*>',
            positionsWidened: [],
            triggeringLineSample: 'x 1',
          },
        ]),
      );
    });
    const outcome = await run(p.prefix);
    await assertQuarantinedThenCompacted(p, outcome, { reason: 'parquet_unreadable', generation: 0 });
  });

  test('a garbage manifest is quarantined and rebuilt from provenance: superseded inputs are not resurrected, late files stay live', async () => {
    const tenant = 'rebuild';
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    const a = await writeDataFile(store, prefix, rowsFor(120, 1, SEALED_HOUR_MS, tenant));
    const b = await writeDataFile(store, prefix, rowsFor(80, 2, SEALED_HOUR_MS, tenant));
    const first = await run(prefix);
    assert.ok(first.status === 'committed' && first.generation === 1);
    const late = await writeDataFile(store, prefix, rowsFor(33, 3, SEALED_HOUR_MS, tenant));
    const expected = await duck.expectedOrder(store, [a, b, late]);
    const garbage = new TextEncoder().encode('{"generation": 1, "files": ["');
    await store.put(manifestKey(prefix), garbage);

    const outcome = await run(prefix);
    assert.ok(outcome.status === 'quarantined', JSON.stringify(outcome));
    assert.deepEqual(
      outcome.quarantined.map((q) => [q.key, q.reason, q.quarantineKey]),
      [[manifestKey(prefix), 'manifest_invalid', quarantineKeyOf(manifestKey(prefix))]],
    );
    assert.deepEqual(await store.get(quarantineKeyOf(manifestKey(prefix))), garbage);
    // Generation: one above the output's provenance (1); the old one is unreadable.
    assert.deepEqual(parsePartitionManifest((await store.get(manifestKey(prefix)))!), {
      generation: 2,
      files: [first.output, late.slice(prefix.length)].sort(),
    });
    const rows = await duck.fileOrder(store, await liveKeys(store, prefix));
    assert.equal(rows.length, 233, 'each row once: the retired inputs a and b are not live again');
    assert.deepEqual([...rows].sort(), [...expected].sort());
    assert.ok((await parquetKeys(store, prefix)).includes(a), 'the superseded inputs still exist (within the grace)');

    const next = await run(prefix);
    assert.ok(next.status === 'committed', JSON.stringify(next));
    assert.equal(next.rows, 233);
    assert.deepEqual(await duck.fileOrder(store, await liveKeys(store, prefix)), expected);
    assert.ok((await run(prefix)).status === 'noop');
  });

  test('a manifest naming a foreign name (path traversal) or with an unusable generation is quarantined and rebuilt above every generation seen', async () => {
    const cases = [
      {
        tenant: 'foreign',
        bytes: (files: string[]) =>
          JSON.stringify({ generation: 5, files: [...files, '../../../../etc/passwd.parquet'] }),
        reason: 'manifest_foreign_name',
        generation: 6,
      },
      {
        tenant: 'notparquet',
        bytes: (files: string[]) => JSON.stringify({ generation: 2, files: [...files, 'notes.txt'] }),
        reason: 'manifest_foreign_name',
        generation: 3,
      },
      {
        tenant: 'huge',
        bytes: (files: string[]) => `{"generation": ${Number.MAX_SAFE_INTEGER}, "files": ${JSON.stringify(files)}}`,
        reason: 'manifest_invalid',
        generation: 1,
      },
      {
        tenant: 'unsafe',
        bytes: (files: string[]) => `{"generation": 1e300, "files": ${JSON.stringify(files)}}`,
        reason: 'manifest_invalid',
        generation: 1,
      },
    ];
    for (const c of cases) {
      const prefix = partitionPrefix(c.tenant, SEALED_HOUR_MS);
      const keys = [
        await writeDataFile(store, prefix, rowsFor(50, 1, SEALED_HOUR_MS, c.tenant)),
        await writeDataFile(store, prefix, rowsFor(50, 2, SEALED_HOUR_MS, c.tenant)),
      ];
      const names = keys.map((k) => k.slice(prefix.length));
      await store.put(manifestKey(prefix), new TextEncoder().encode(c.bytes(names)));
      const outcome = await run(prefix);
      assert.ok(outcome.status === 'quarantined', `${c.tenant}: ${JSON.stringify(outcome)}`);
      assert.deepEqual(
        outcome.quarantined.map((q) => [q.key, q.reason]),
        [[manifestKey(prefix), c.reason]],
        c.tenant,
      );
      assert.deepEqual(
        parsePartitionManifest((await store.get(manifestKey(prefix)))!),
        { generation: c.generation, files: names },
        c.tenant,
      );
      const next = await run(prefix);
      assert.ok(next.status === 'committed' && next.rows === 100, `${c.tenant}: ${JSON.stringify(next)}`);
    }
  });

  test('a manifest naming a missing file is rewritten without it; nothing is moved', async () => {
    const tenant = 'ghost';
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    const keys = [
      await writeDataFile(store, prefix, rowsFor(70, 1, SEALED_HOUR_MS, tenant)),
      await writeDataFile(store, prefix, rowsFor(30, 2, SEALED_HOUR_MS, tenant)),
    ];
    const names = keys.map((k) => k.slice(prefix.length));
    const ghost = `${uuidv7()}.parquet`;
    await store.put(manifestKey(prefix), encodePartitionManifest({ generation: 2, files: [...names, ghost] }));
    const outcome = await run(prefix);
    assert.ok(outcome.status === 'quarantined', JSON.stringify(outcome));
    assert.deepEqual(
      outcome.quarantined.map((q) => [q.key, q.reason, q.quarantineKey]),
      [[`${prefix}${ghost}`, 'manifest_missing_file', null]],
    );
    assert.deepEqual(parsePartitionManifest((await store.get(manifestKey(prefix)))!), { generation: 3, files: names });
    assert.deepEqual(await keysUnder(store, quarantineKeyOf(prefix)), [], 'nothing to move');
    const event = (await auditEvents(store)).find((e) => e['key'] === `${prefix}${ghost}`);
    assert.deepEqual(
      [event?.['reason'], event?.['quarantine_key'], event?.['generation']],
      ['manifest_missing_file', null, 3],
    );
    const next = await run(prefix);
    assert.ok(next.status === 'committed' && next.generation === 4 && next.rows === 100, JSON.stringify(next));
  });

  test('a storage outage is not corruption: the run fails with StorageUnavailableError and nothing is quarantined', async () => {
    const tenant = 'outage';
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    for (let i = 0; i < 3; i++) await writeDataFile(store, prefix, rowsFor(200, i, SEALED_HOUR_MS, tenant), 100);
    const before = await parquetKeys(store, prefix);
    const unavailable = (key: string): never => {
      throw new StorageUnavailableError('get_range', key, 3, 'timeout');
    };
    // Every range read fails (footers first), then only page reads fail (footers read, the merge's reads fail).
    const down = withGetRange(store, (key) => Promise.resolve().then(() => unavailable(key)));
    const pagesDown = withGetRange(store, async (key, start, end) => {
      const size = (await store.head(key))!.size;
      if (end < size) unavailable(key);
      return store.getRange(key, start, end);
    });
    for (const s of [down, pagesDown]) {
      await assert.rejects(run(prefix, { store: s }), StorageUnavailableError);
      await assert.rejects(run(prefix, { store: s, memoryBudgetBytes: 64 * 1024 }), StorageUnavailableError);
    }
    assert.deepEqual(await keysUnder(store, quarantineKeyOf(prefix)), []);
    assert.deepEqual(await parquetKeys(store, prefix), before);
    assert.equal(
      (await auditEvents(store)).filter((e) => String(e['partition']) === prefix).length,
      0,
      'no audit event',
    );
    // Storage back: the partition compacts.
    const healed = await run(prefix);
    assert.ok(healed.status === 'committed' && healed.rows === 600, JSON.stringify(healed));
  });

  test('a page that fails once but whose whole bytes read cleanly is not quarantined (the run fails and is retried)', async () => {
    const tenant = 'flaky';
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    const keys = [
      await writeDataFile(store, prefix, rowsFor(100, 1, SEALED_HOUR_MS, tenant)),
      await writeDataFile(store, prefix, rowsFor(100, 2, SEALED_HOUR_MS, tenant)),
    ];
    // A range answer of the right length but wrong bytes (zeros) for page reads: no store fault, a decode failure.
    const garbled = withGetRange(store, async (key, start, end) => {
      const size = (await store.head(key))!.size;
      return key === keys[1] && end < size ? new Uint8Array(end - start) : store.getRange(key, start, end);
    });
    await assert.rejects(run(prefix, { store: garbled }), CompactionError);
    assert.deepEqual(await keysUnder(store, quarantineKeyOf(prefix)), []);
    const healed = await run(prefix);
    assert.ok(healed.status === 'committed' && healed.rows === 200, JSON.stringify(healed));
  });

  test('an unlisted corrupt file (not live) is quarantined without a manifest change and never adopted', async () => {
    const tenant = 'unlisted';
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    const keys = [
      await writeDataFile(store, prefix, rowsFor(60, 1, SEALED_HOUR_MS, tenant)),
      await writeDataFile(store, prefix, rowsFor(40, 2, SEALED_HOUR_MS, tenant)),
    ];
    const names = keys.map((k) => k.slice(prefix.length));
    await store.put(manifestKey(prefix), encodePartitionManifest({ generation: 1, files: names }));
    const stray = `${prefix}${uuidv7()}.parquet`;
    await store.put(stray, (await encodeLogsParquet(rowsFor(10, 3, SEALED_HOUR_MS, tenant))).slice(0, 100));
    const manifestBefore = await store.getVersioned(manifestKey(prefix));
    const outcome = await run(prefix);
    assert.ok(outcome.status === 'quarantined' && outcome.generation === null, JSON.stringify(outcome));
    assert.deepEqual(
      outcome.quarantined.map((q) => [q.key, q.reason]),
      [[stray, 'parquet_unreadable']],
    );
    assert.equal((await store.getVersioned(manifestKey(prefix)))?.etag, manifestBefore?.etag, 'manifest untouched');
    const next = await run(prefix);
    assert.ok(next.status === 'committed' && next.rows === 100, JSON.stringify(next));
    assert.deepEqual(next.cleanup.stranded, []);
  });
});
