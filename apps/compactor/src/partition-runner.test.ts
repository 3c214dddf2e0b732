/**
 * @module partition-runner.test
 * The compaction worker thread: it merges a real partition (rows conserved, manifest committed), a merge that
 * exhausts the worker's heap fails only that partition (nothing committed, the process and the next worker
 * fine), wide rows are merged in budget-sized row groups, and `sluice serve`'s default path (no injected store)
 * compacts through the worker.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '@sluice/config';
import {
  createLocalObjectStore,
  manifestKey,
  openParquetFile,
  parsePartitionManifest,
  sourceFromStore,
} from '@sluice/storage';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { createLogger } from '@sluice/telemetry';
import { compactionHeapLimitMb, createWorkerPartitionRunner } from './partition-runner.js';
import { startCompactor } from './start-compactor.js';
import {
  SEALED_HOUR_MS,
  liveKeys,
  parquetKeys,
  partitionPrefix,
  rowsFor,
  writeDataFile,
} from '@sluice/compaction/testing';

const HOUR_MS = 3_600_000;
const MiB = 1024 * 1024;

/** Rows with ~`bodyBytes`-byte, incompressible-enough bodies (wide rows, like long stack traces). */
function wideRows(count: number, seed: number, hourMs: number, bodyBytes: number): StoredLogRow[] {
  return rowsFor(count, seed, hourMs).map((r, i) => ({
    ...r,
    record: {
      ...r.record,
      body: {
        kind: 'string',
        value:
          `row ${seed}/${i} ` +
          (i * 2654435761 + seed)
            .toString(36)
            .repeat(Math.ceil(bodyBytes / 7))
            .slice(0, bodyBytes),
      },
    },
  }));
}

async function rowCount(store: ObjectStore, keys: readonly string[]): Promise<number> {
  let n = 0;
  for (const k of keys) {
    const bytes = (await store.get(k))!;
    n += (await openParquetFile(sourceFromStore(store, k, bytes.byteLength))).numRows;
  }
  return n;
}

describe('compaction worker thread', () => {
  let root: string;
  let store: ObjectStore;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-compaction-worker-'));
    store = createLocalObjectStore({ root });
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('the heap cap follows the budget: 3 × budget + 64 MiB', () => {
    assert.equal(compactionHeapLimitMb(64 * MiB), 256);
    assert.equal(compactionHeapLimitMb(16 * MiB), 112);
  });

  test('a worker asks for its memory before merging (not for a single-file partition), merges wide rows in budget-sized row groups and conserves every row', async () => {
    const prefix = partitionPrefix('acme', SEALED_HOUR_MS);
    for (let i = 0; i < 3; i++) await writeDataFile(store, prefix, wideRows(1_500, i, SEALED_HOUR_MS, 4096));
    const inputs = await parquetKeys(store, prefix);
    const runner = createWorkerPartitionRunner({
      data: {
        storage: { backend: 'local', root, requestTimeoutMs: 30_000 },
        graceSecs: 900,
        memoryBudgetBytes: 16 * MiB,
      },
    });
    const grants: string[] = [];
    try {
      const r = await runner.run(prefix, async () => {
        // The worker waits for this grant: nothing is committed yet.
        grants.push(`granted with ${(await liveKeys(store, prefix)).length} live files`);
      });
      assert.equal(r.status, 'ok');
      assert.equal(r.status === 'ok' && r.outcome.status, 'committed');
      // Now one file: the worker answers without asking for memory.
      const again = await runner.run(prefix, async () => void grants.push('asked again'));
      assert.equal(again.status === 'ok' && again.outcome.status, 'noop');
    } finally {
      await runner.close();
    }
    assert.deepEqual(
      grants,
      ['granted with 3 live files'],
      'memory is asked for once, before the merge, and not for a partition that needs none',
    );
    const live = await liveKeys(store, prefix);
    assert.equal(live.length, 1);
    assert.equal(await rowCount(store, live), await rowCount(store, inputs));
    const out = await openParquetFile(sourceFromStore(store, live[0]!, (await store.get(live[0]!))!.byteLength));
    // ~4 KiB bodies under a 16 MiB budget: far fewer rows per group than the 65,536 a narrow partition gets.
    const biggest = Math.max(...out.rowGroups.map((g) => g.numRows));
    assert.ok(
      out.rowGroups.length > 1 && biggest < 4_500,
      `row groups ${out.rowGroups.map((g) => g.numRows).join(',')}`,
    );
  });

  test('a merge that exhausts the worker heap fails only that partition; a new worker compacts it afterwards', async () => {
    const prefix = partitionPrefix('acme', SEALED_HOUR_MS + HOUR_MS);
    for (let i = 0; i < 2; i++)
      await writeDataFile(store, prefix, wideRows(4_000, 10 + i, SEALED_HOUR_MS + HOUR_MS, 8192));
    const before = await parquetKeys(store, prefix);
    // A budget far above the heap cap makes the merge hold everything at once (~64 MiB of bodies) in a 32 MiB heap.
    const starved = createWorkerPartitionRunner({
      data: {
        storage: { backend: 'local', root, requestTimeoutMs: 30_000 },
        graceSecs: 900,
        memoryBudgetBytes: 1024 * MiB,
      },
      maxOldGenerationSizeMb: 32,
    });
    try {
      const r = await starved.run(prefix);
      assert.equal(r.status, 'error');
      assert.match(
        r.status === 'error' ? r.message : '',
        /exhausted the compaction worker's 32 MiB heap .*compaction\.memory_budget_bytes.*nothing was committed/,
      );
    } finally {
      await starved.close();
    }
    // At most the generation-0 bootstrap (the same live set, by design); never a merged generation.
    const m = await store.get(manifestKey(prefix));
    if (m !== null && m !== undefined) assert.equal(parsePartitionManifest(m).generation, 0);
    assert.deepEqual(await liveKeys(store, prefix), before, 'readers see exactly the input files');
    assert.deepEqual(await parquetKeys(store, prefix), before, 'no file was added or removed');
    const healthy = createWorkerPartitionRunner({
      data: {
        storage: { backend: 'local', root, requestTimeoutMs: 30_000 },
        graceSecs: 900,
        memoryBudgetBytes: 16 * MiB,
      },
    });
    try {
      const r = await healthy.run(prefix);
      assert.equal(r.status === 'ok' && r.outcome.status, 'committed');
    } finally {
      await healthy.close();
    }
    assert.equal(await rowCount(store, await liveKeys(store, prefix)), 8_000);
  });

  test('startCompactor without an injected store compacts through the worker (the sluice serve path)', async () => {
    const d = await mkdtemp(join(tmpdir(), 'sluice-compactor-default-'));
    try {
      const s = createLocalObjectStore({ root: d });
      const prefix = partitionPrefix('acme', SEALED_HOUR_MS);
      for (let i = 0; i < 2; i++) await writeDataFile(s, prefix, rowsFor(400, 50 + i, SEALED_HOUR_MS));
      const parsed = parseConfig({
        fileText: `storage: { backend: local, local: { root: ${JSON.stringify(d)} } }\ncompaction: { enabled: true, interval_secs: 3600, grace_secs: 900, memory_budget_bytes: 33554432 }\n`,
        env: {},
      });
      assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.error));
      const lines: string[] = [];
      const compactor = startCompactor(parsed.value, {
        log: createLogger('compactor-test', { write: (l: string) => void lines.push(l) }),
      });
      try {
        const report = await compactor.sweepOnce();
        assert.deepEqual(
          report.outcomes.map((o) => o.status),
          ['committed'],
          lines.join('\n'),
        );
      } finally {
        await compactor.stop();
      }
      assert.equal(parsePartitionManifest((await s.get(manifestKey(prefix)))!).generation, 1);
      assert.equal(await rowCount(s, await liveKeys(s, prefix)), 800);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});
