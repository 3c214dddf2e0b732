/**
 * @module open-hour-compaction.test
 * Continuous compaction of the open hour (docs/design/freshness.md), on the local store with DuckDB as the oracle:
 * only level-0 (sink) files at least `openHourMinFileAgeSecs` old are merged, a younger one stays live and
 * unmerged (a live tail reads it first); level-1 outputs wait for the hour to seal; every row survives each step
 * and the sealed merge; a sink's manifest append between the merge's read and its commit is kept (the commit
 * rebases); a sink file stored while the partition gets its first manifest is live in the next generation.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  createLocalObjectStore,
  encodeLogsParquet,
  encodePartitionManifest,
  manifestKey,
  openParquetFile,
  parsePartitionManifest,
  sourceFromStore,
  uuidv7,
} from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';
import { compactPartition } from './compact-partition.js';
import { provenanceOf } from './provenance.js';
import { DuckOracle, liveKeys, partitionPrefix, rowsFor } from './testing/index.js';

const GRACE_SECS = 900;
const MIN_AGE_SECS = 10;
/**
 * Each test has its own open hour, later than the previous test's (file names are UUIDv7s from one monotonic
 * generator, so a test cannot name a file earlier than one an earlier test named); the clock sits half-way
 * through it.
 */
let hours = 0;
function openHour(): { readonly hourMs: number; readonly nowMs: number } {
  const hourMs = Date.UTC(2026, 1, 1, 0) + ++hours * 3 * 3_600_000;
  return { hourMs, nowMs: hourMs + 30 * 60_000 };
}

describe('open-hour compaction (local store)', () => {
  let root: string;
  let store: ObjectStore;
  let duck: DuckOracle;
  let seed = 500;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-open-hour-'));
    store = createLocalObjectStore({ root });
    duck = await DuckOracle.create();
  });
  after(async () => {
    await duck.close();
    await rm(root, { recursive: true, force: true });
  });

  /**
   * A sink file named as created at `createdMs` (its UUIDv7 time is the age compaction judges it by), stored as the
   * sink stores it: the put, then, when the partition has a manifest, a compare-and-swap adding it
   * (@sluice/sink manifest-append).
   */
  async function sinkFile(prefix: string, hourMs: number, createdMs: number, rows = 40): Promise<string> {
    const name = `${uuidv7(createdMs)}.parquet`;
    const tenant = prefix.split('/')[1]!.slice('tenant_id='.length);
    await store.put(`${prefix}${name}`, await encodeLogsParquet(rowsFor(rows, seed++, hourMs, tenant)));
    for (;;) {
      const current = await store.getVersioned(manifestKey(prefix));
      if (current === null) return name;
      const m = parsePartitionManifest(current.bytes);
      const put = await store.putConditional(
        manifestKey(prefix),
        encodePartitionManifest({ generation: m.generation + 1, files: [...m.files, name] }),
        { ifMatch: current.etag },
      );
      if (put.status === 'ok') return name;
    }
  }

  /** Every row of the live set, every column, as a sorted multiset of fingerprints (file boundaries ignored). */
  async function liveRows(prefix: string): Promise<string[]> {
    return (await duck.fileOrder(store, await liveKeys(store, prefix))).sort();
  }

  const run = (prefix: string, nowMs: number, extra: Partial<Parameters<typeof compactPartition>[2]> = {}) =>
    compactPartition(store, prefix, {
      now: () => nowMs,
      graceSecs: GRACE_SECS,
      openHourMinFileAgeSecs: MIN_AGE_SECS,
      ...extra,
    });

  async function isCompactionOutput(key: string): Promise<boolean> {
    const head = await store.head(key);
    return provenanceOf(await openParquetFile(sourceFromStore(store, key, head!.size))) !== null;
  }

  test('only level-0 files older than the minimum age are merged; a younger one stays live and unmerged (tail safety); rows conserved', async () => {
    const { hourMs, nowMs } = openHour();
    const prefix = partitionPrefix('tail-safety', hourMs);
    const old = [
      await sinkFile(prefix, hourMs, nowMs - 60_000),
      await sinkFile(prefix, hourMs, nowMs - 30_000),
      await sinkFile(prefix, hourMs, nowMs - MIN_AGE_SECS * 1000),
    ];
    const young = await sinkFile(prefix, hourMs, nowMs - MIN_AGE_SECS * 1000 + 1);
    const before = await liveRows(prefix);

    const outcome = await run(prefix, nowMs);
    assert.equal(outcome.status, 'committed');
    assert.ok(outcome.status === 'committed');
    assert.deepEqual([...outcome.inputs].sort(), [...old].sort());
    const manifest = parsePartitionManifest((await store.get(manifestKey(prefix)))!);
    assert.deepEqual([...manifest.files].sort(), [outcome.output, young].sort(), 'the young file is live, unmerged');
    assert.ok(await isCompactionOutput(`${prefix}${outcome.output}`));
    assert.deepEqual(await liveRows(prefix), before, 'every row of every column, once');

    // A second pass: the only level-0 file is still too young, and the level-1 output is not merged again.
    const again = await run(prefix, nowMs);
    assert.deepEqual([again.status, again.status === 'noop' ? again.reason : null], ['noop', 'too_young']);
  });

  test('passes through the hour keep merging new level-0 files into more level-1 files, and the sealed merge conserves every row of the chain', async () => {
    const { hourMs, nowMs } = openHour();
    const prefix = partitionPrefix('chain', hourMs);
    for (let i = 0; i < 3; i++) await sinkFile(prefix, hourMs, nowMs - 60_000 + i * 1000);
    const r1 = await run(prefix, nowMs);
    assert.equal(r1.status, 'committed');
    for (let i = 0; i < 4; i++) await sinkFile(prefix, hourMs, nowMs + i * 1000);
    const before = await liveRows(prefix);
    assert.equal(before.length, 7 * 40);
    const r2 = await run(prefix, nowMs + 60_000);
    assert.ok(r2.status === 'committed' && r1.status === 'committed');
    assert.equal(r2.inputs.length, 4, 'the four new level-0 files only');
    assert.ok(!r2.inputs.includes(r1.output), 'level-1 outputs wait for the hour to seal');
    assert.equal((await liveKeys(store, prefix)).length, 2);
    assert.deepEqual(await liveRows(prefix), before);

    const sealedMs = hourMs + 3_600_000 + GRACE_SECS * 1000;
    const r3 = await run(prefix, sealedMs);
    assert.ok(r3.status === 'committed');
    assert.deepEqual([...r3.inputs].sort(), [r1.output, r2.output].sort());
    assert.equal((await liveKeys(store, prefix)).length, 1);
    assert.deepEqual(await liveRows(prefix), before, 'the sealed merge of level-1 files conserves the rows too');
  });

  test('a sink file added to the manifest between the merge and its commit stays live: the commit rebases over it', async () => {
    const { hourMs, nowMs } = openHour();
    const prefix = partitionPrefix('rebase', hourMs);
    await store.put(manifestKey(prefix), encodePartitionManifest({ generation: 0, files: [] }));
    await sinkFile(prefix, hourMs, nowMs - 60_000);
    await sinkFile(prefix, hourMs, nowMs - 50_000);
    let appended: string | null = null;
    const outcome = await run(prefix, nowMs, {
      beforeCommit: async ({ output }) => {
        // The sink stores a file and adds it to the manifest while the merged output waits to be committed.
        if (output !== null && appended === null) appended = await sinkFile(prefix, hourMs, nowMs);
      },
    });
    assert.ok(outcome.status === 'committed', JSON.stringify(outcome));
    assert.equal(outcome.generation, 4, 'committed over the generation the sink added (3)');
    const manifest = parsePartitionManifest((await store.get(manifestKey(prefix)))!);
    assert.deepEqual([...manifest.files].sort(), [outcome.output, appended!].sort());
    const rows = await liveRows(prefix);
    assert.equal(rows.length, 120, 'both merged files and the appended one, each row once');
  });

  test('a sink file stored while the partition gets its first manifest is live in the next generation, not stranded', async () => {
    const { hourMs, nowMs } = openHour();
    const prefix = partitionPrefix('bootstrap', hourMs);
    await sinkFile(prefix, hourMs, nowMs - 60_000);
    await sinkFile(prefix, hourMs, nowMs - 50_000);
    let late: string | null = null;
    const outcome = await run(prefix, nowMs, {
      beforeCommit: async ({ generation, output }) => {
        // After the listing, before generation 0 lands: the sink's put completed and it saw no manifest.
        if (generation === 0 && output === null) late = await sinkFile(prefix, hourMs, nowMs - 1000);
      },
    });
    assert.ok(outcome.status === 'committed', JSON.stringify(outcome));
    const manifest = parsePartitionManifest((await store.get(manifestKey(prefix)))!);
    assert.ok(manifest.files.includes(late!), `${late} is live: ${JSON.stringify(manifest)}`);
    assert.equal((await liveRows(prefix)).length, 120);
  });

  test('without openHourMinFileAgeSecs an open hour is left alone', async () => {
    const { hourMs, nowMs } = openHour();
    const prefix = partitionPrefix('off', hourMs);
    await sinkFile(prefix, hourMs, nowMs - 60_000);
    await sinkFile(prefix, hourMs, nowMs - 50_000);
    const outcome = await run(prefix, nowMs, { openHourMinFileAgeSecs: 0 });
    assert.deepEqual([outcome.status, outcome.status === 'noop' ? outcome.reason : null], ['noop', 'unsealed']);
  });
});
