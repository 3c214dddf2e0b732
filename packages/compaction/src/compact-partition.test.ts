/**
 * @module compact-partition.test
 * compactPartition on the local store: rows and every column conserved (DuckDB oracle), output order and
 * tie-break, idempotent rerun, unsealed partitions untouched, manifest-governed live sets, the lost
 * compare-and-swap race and grace-gated orphan deletion.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  createLocalObjectStore,
  encodePartitionManifest,
  manifestKey,
  openParquetFile,
  parsePartitionManifest,
  sourceFromStore,
  uuidv7Timestamp,
} from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';
import { createCasEnforcingStore } from '@sluice/storage/testing';
import { CompactionError, compactPartition } from './compact-partition.js';
import { provenanceOf } from './provenance.js';
import {
  DuckOracle,
  SEALED_HOUR_MS,
  barrier,
  liveKeys,
  parquetKeys,
  partitionPrefix,
  rowsFor,
  writeDataFile,
} from './testing/index.js';

const GRACE_SECS = 900;
const GRACE_MS = GRACE_SECS * 1000;

describe('compactPartition (local store)', () => {
  let root: string;
  let scratch: string;
  let store: ObjectStore;
  let duck: DuckOracle;
  const now = () => Date.now();

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-compactor-'));
    scratch = await mkdtemp(join(tmpdir(), 'sluice-compactor-scratch-'));
    store = createLocalObjectStore({ root });
    duck = await DuckOracle.create();
  });
  after(async () => {
    await duck.close();
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  /** A sealed partition of `files` files with interleaved times and a few exact (service, time) ties. */
  async function seed(
    tenant: string,
    files: number,
    rowsPerFile: number,
    rowGroupRows?: number,
  ): Promise<{ prefix: string; keys: string[] }> {
    const prefix = partitionPrefix(tenant, SEALED_HOUR_MS);
    const keys: string[] = [];
    const first = rowsFor(rowsPerFile, 100, SEALED_HOUR_MS, tenant);
    for (let f = 0; f < files; f++) {
      let rows = f === 0 ? first : rowsFor(rowsPerFile, 100 + f, SEALED_HOUR_MS, tenant);
      // Rows with the sort keys of rows of file 0 but other bodies: only the input-file tie-break orders them.
      const ties = first
        .slice(10, 15)
        .map((r, j) => ({ ...r, record: { ...r.record, body: { kind: 'string' as const, value: `tie ${f}.${j}` } } }));
      if (f > 0) rows = [...rows.slice(0, rowsPerFile - 5), ...ties];
      keys.push(await writeDataFile(store, prefix, rows, rowGroupRows));
    }
    return { prefix, keys };
  }

  test('the external merge conserves every row and column and writes them in (service NULL first, time, file, row) order', async () => {
    const { prefix, keys } = await seed('merge', 4, 700, 300);
    const expected = await duck.expectedOrder(store, keys);
    const outcome = await compactPartition(store, prefix, {
      now,
      graceSecs: GRACE_SECS,
      rowGroupRows: 500,
      scratchDir: scratch,
    });
    assert.equal(outcome.status, 'committed');
    assert.ok(outcome.status === 'committed');
    assert.equal(outcome.rows, 2800);
    assert.equal(outcome.generation, 1);
    assert.deepEqual(
      outcome.inputs,
      keys.map((k) => k.slice(prefix.length)),
    );
    const manifest = parsePartitionManifest((await store.get(manifestKey(prefix)))!);
    assert.deepEqual(manifest, { generation: 1, files: [outcome.output] });
    const live = await liveKeys(store, prefix);
    assert.deepEqual(live, [`${prefix}${outcome.output}`]);
    const got = await duck.fileOrder(store, live);
    assert.equal(got.length, expected.length);
    assert.deepEqual(got, expected, 'same rows, every column, in the compacted order');
    const file = await openParquetFile(sourceFromStore(store, live[0]!, (await store.head(live[0]!))!.size));
    assert.deepEqual(
      file.rowGroups.map((g) => g.numRows),
      [500, 500, 500, 500, 500, 300],
      'output row groups of rowGroupRows',
    );
    assert.deepEqual(provenanceOf(file)?.replaces, outcome.inputs);
    assert.deepEqual(await readdir(scratch), [], 'spilled runs are removed');
  });

  test('the in-memory path (one output row group) gives the same rows and order', async () => {
    const { prefix, keys } = await seed('small', 3, 200);
    const expected = await duck.expectedOrder(store, keys);
    const outcome = await compactPartition(store, prefix, { now, graceSecs: GRACE_SECS, scratchDir: scratch });
    assert.equal(outcome.status, 'committed');
    assert.deepEqual(await duck.fileOrder(store, await liveKeys(store, prefix)), expected);
  });

  test('a rerun on a compacted partition is a no-op: no new file, the same manifest', async () => {
    const { prefix } = await seed('rerun', 2, 100);
    const first = await compactPartition(store, prefix, { now, graceSecs: GRACE_SECS, scratchDir: scratch });
    assert.equal(first.status, 'committed');
    const before = await parquetKeys(store, prefix);
    const manifestBefore = await store.getVersioned(manifestKey(prefix));
    const again = await compactPartition(store, prefix, { now, graceSecs: GRACE_SECS, scratchDir: scratch });
    assert.equal(again.status, 'noop');
    assert.ok(again.status === 'noop' && again.reason === 'single_file');
    assert.deepEqual(await parquetKeys(store, prefix), before);
    const manifestAfter = await store.getVersioned(manifestKey(prefix));
    assert.equal(manifestAfter?.etag, manifestBefore?.etag);
    assert.deepEqual(manifestAfter?.bytes, manifestBefore?.bytes);
  });

  test('an unsealed partition (hour + grace not over) is left untouched', async () => {
    const hour = Math.floor(now() / 3_600_000) * 3_600_000 - 3_600_000; // the previous hour: ended, grace not over
    const prefix = partitionPrefix('unsealed', hour);
    await writeDataFile(store, prefix, rowsFor(50, 1, hour, 'unsealed'));
    await writeDataFile(store, prefix, rowsFor(50, 2, hour, 'unsealed'));
    const before = await parquetKeys(store, prefix);
    const nowMs = hour + 3_600_000 + GRACE_MS - 1;
    const outcome = await compactPartition(store, prefix, {
      now: () => nowMs,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
    });
    assert.deepEqual(outcome, {
      status: 'noop',
      partition: prefix,
      reason: 'unsealed',
      cleanup: { deleted: [], stranded: [] },
    });
    assert.deepEqual(await parquetKeys(store, prefix), before);
    assert.equal(await store.get(manifestKey(prefix)), null);
    const sealed = await compactPartition(store, prefix, {
      now: () => nowMs + 2,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
    });
    assert.equal(sealed.status, 'committed', 'one millisecond past the grace it qualifies');
  });

  test('a manifest-governed partition ignores nothing acknowledged: an unlisted receiver file (late data) is adopted into the next generation', async () => {
    const prefix = partitionPrefix('governed', SEALED_HOUR_MS);
    const a = await writeDataFile(store, prefix, rowsFor(120, 1, SEALED_HOUR_MS, 'governed'));
    const b = await writeDataFile(store, prefix, rowsFor(80, 2, SEALED_HOUR_MS, 'governed'));
    const stray = await writeDataFile(store, prefix, rowsFor(33, 3, SEALED_HOUR_MS, 'governed'));
    const name = (k: string) => k.slice(prefix.length);
    await store.put(manifestKey(prefix), encodePartitionManifest({ generation: 7, files: [name(a), name(b)] }));
    const expected = await duck.expectedOrder(store, [a, b, stray]);
    const outcome = await compactPartition(store, prefix, { now, graceSecs: GRACE_SECS, scratchDir: scratch });
    assert.ok(outcome.status === 'committed');
    assert.equal(outcome.generation, 8);
    assert.equal(outcome.rows, 233, "the late file's rows are merged in");
    assert.deepEqual(outcome.cleanup.stranded, [stray]);
    assert.deepEqual(await duck.fileOrder(store, await liveKeys(store, prefix)), expected);
    // Far past every grace: the retired inputs, the adopted file included, are deleted; nothing is stranded.
    const later = await compactPartition(store, prefix, {
      now: () => now() + 10 * GRACE_MS,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
    });
    assert.ok(later.status === 'noop');
    assert.deepEqual([...later.cleanup.deleted].sort(), [a, b, stray].sort());
    assert.deepEqual(later.cleanup.stranded, []);
    assert.deepEqual(await parquetKeys(store, prefix), [`${prefix}${outcome.output}`]);
  });

  test('lost CAS race on generation n: two compactors that both read it commit once; the loser’s output is an orphan deleted only after the grace', async () => {
    const cas = createCasEnforcingStore(store);
    const prefix = partitionPrefix('race', SEALED_HOUR_MS);
    const inputs = [
      await writeDataFile(cas, prefix, rowsFor(150, 1, SEALED_HOUR_MS, 'race')),
      await writeDataFile(cas, prefix, rowsFor(150, 2, SEALED_HOUR_MS, 'race')),
      await writeDataFile(cas, prefix, rowsFor(150, 3, SEALED_HOUR_MS, 'race')),
    ];
    const name = (k: string) => k.slice(prefix.length);
    await cas.put(manifestKey(prefix), encodePartitionManifest({ generation: 4, files: inputs.map(name) }));
    const expected = await duck.expectedOrder(cas, inputs);
    const bothRead = barrier(2);
    const t0 = now();
    const run = () =>
      compactPartition(cas, prefix, {
        now: () => t0,
        graceSecs: GRACE_SECS,
        scratchDir: scratch,
        beforeCommit: bothRead,
      });
    const results = await Promise.all([run(), run()]);
    const winner = results.find((r) => r.status === 'committed');
    const loser = results.find((r) => r.status === 'lost_race');
    assert.ok(
      winner?.status === 'committed' && loser?.status === 'lost_race',
      `one winner, one loser: ${results.map((r) => r.status).join(', ')}`,
    );
    assert.equal(winner.generation, 5);
    assert.equal(loser.generation, 5);
    assert.ok(loser.output !== null, 'the loser had written its output');
    assert.deepEqual(parsePartitionManifest((await cas.get(manifestKey(prefix)))!), {
      generation: 5,
      files: [winner.output],
    });
    const orphan = `${prefix}${loser.output}`;
    assert.ok((await parquetKeys(cas, prefix)).includes(orphan), 'the loser’s output exists as an orphan');
    assert.deepEqual(
      await duck.fileOrder(cas, await liveKeys(cas, prefix)),
      expected,
      'the live set holds each row exactly once',
    );

    // Within the grace nothing is deleted (a concurrent compactor could still be about to commit its output).
    const orphanMs = uuidv7Timestamp(loser.output.slice(0, -'.parquet'.length))!;
    const early = await compactPartition(cas, prefix, {
      now: () => orphanMs + GRACE_MS,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
    });
    assert.ok(early.status === 'noop' && early.reason === 'single_file');
    assert.deepEqual(early.cleanup.deleted, []);
    assert.equal((await parquetKeys(cas, prefix)).length, 5);

    const late = await compactPartition(cas, prefix, {
      now: () => Math.max(orphanMs, t0) + GRACE_MS + 1000,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
    });
    assert.ok(late.status === 'noop');
    assert.deepEqual(
      [...late.cleanup.deleted].sort(),
      [...inputs, orphan].sort(),
      'orphan and retired inputs deleted after the grace',
    );
    assert.deepEqual(late.cleanup.stranded, []);
    assert.deepEqual(await parquetKeys(cas, prefix), [`${prefix}${winner.output}`]);
    assert.deepEqual(await duck.fileOrder(cas, await liveKeys(cas, prefix)), expected);
  });

  test('lost CAS race without a manifest: one compactor creates generation 0, the other loses before writing any output', async () => {
    const cas = createCasEnforcingStore(store);
    const prefix = partitionPrefix('race-new', SEALED_HOUR_MS);
    const inputs = [
      await writeDataFile(cas, prefix, rowsFor(100, 1, SEALED_HOUR_MS, 'race-new')),
      await writeDataFile(cas, prefix, rowsFor(100, 2, SEALED_HOUR_MS, 'race-new')),
    ];
    const expected = await duck.expectedOrder(cas, inputs);
    const bothRead = barrier(2);
    const run = () =>
      compactPartition(cas, prefix, { now, graceSecs: GRACE_SECS, scratchDir: scratch, beforeCommit: bothRead });
    const results = await Promise.all([run(), run()]);
    const winner = results.find((r) => r.status === 'committed');
    const loser = results.find((r) => r.status === 'lost_race');
    assert.ok(
      winner?.status === 'committed' && loser?.status === 'lost_race',
      `one winner, one loser: ${results.map((r) => r.status).join(', ')}`,
    );
    assert.deepEqual([loser.generation, loser.output], [0, null]);
    assert.equal(winner.generation, 1);
    assert.deepEqual(parsePartitionManifest((await cas.get(manifestKey(prefix)))!), {
      generation: 1,
      files: [winner.output],
    });
    assert.deepEqual(
      await parquetKeys(cas, prefix),
      [...inputs, `${prefix}${winner.output}`].sort(),
      'no orphan output',
    );
    assert.deepEqual(await duck.fileOrder(cas, await liveKeys(cas, prefix)), expected);
  });

  test('a compactor stalled past half the grace before its commit commits nothing; its output never becomes live and is deleted later', async () => {
    const prefix = partitionPrefix('stall', SEALED_HOUR_MS);
    const inputs = [
      await writeDataFile(store, prefix, rowsFor(60, 1, SEALED_HOUR_MS, 'stall')),
      await writeDataFile(store, prefix, rowsFor(60, 2, SEALED_HOUR_MS, 'stall')),
    ];
    const expected = await duck.expectedOrder(store, inputs);
    let clock = now();
    const stall = (info: { readonly output: string | null }) => {
      if (info.output !== null) clock += GRACE_MS / 2 + 1;
      return Promise.resolve();
    };
    await assert.rejects(
      compactPartition(store, prefix, {
        now: () => clock,
        graceSecs: GRACE_SECS,
        scratchDir: scratch,
        beforeCommit: stall,
      }),
      CompactionError,
    );
    assert.deepEqual(parsePartitionManifest((await store.get(manifestKey(prefix)))!), {
      generation: 0,
      files: inputs.map((k) => k.slice(prefix.length)),
    });
    const keys = await parquetKeys(store, prefix);
    assert.equal(keys.length, 3, 'the stalled output exists, unlisted');
    assert.deepEqual(
      await duck.expectedOrder(store, await liveKeys(store, prefix)),
      expected,
      'readers still see the inputs only',
    );
    // UUIDv7 names are monotonic per process, so earlier tests that ran "in the future" can push this output's
    // name time ahead of `clock`: judge it from well past every such time.
    const next = await compactPartition(store, prefix, {
      now: () => clock + 100 * GRACE_MS,
      graceSecs: GRACE_SECS,
      scratchDir: scratch,
    });
    assert.ok(next.status === 'committed');
    assert.equal(next.generation, 1);
    assert.deepEqual(
      next.cleanup.deleted,
      keys.filter((k) => !inputs.includes(k)),
      'the stalled output is deleted once past the grace',
    );
    assert.deepEqual(await duck.fileOrder(store, await liveKeys(store, prefix)), expected);
  });
});
