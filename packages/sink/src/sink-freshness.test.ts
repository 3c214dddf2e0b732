/**
 * @module sink-freshness.test
 * Freshness (docs/design/freshness.md) at the sink: `flush_interval_ms` flushes the oldest buffered row once it
 * has waited that long, whatever `flush_age_secs` says, and reports the flush's visibility lag; a file stored into
 * a partition that already has a manifest is added to it by compare-and-swap (late data is visible at once), even
 * when another writer commits in between.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { encodeLogsProtobuf } from '@sluice/otlp';
import {
  createLocalObjectStore,
  encodePartitionManifest,
  manifestKey,
  parsePartitionManifest,
  type ObjectStore,
} from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { openWal, type WalPosition } from '@sluice/wal';
import { appendToManifest } from './manifest-append.js';
import { createSinkLoop } from './sink-loop.js';
import type { SinkEvent } from './sink-events.js';
import { encodeWalExport } from './wal-payload.js';

/** 2026-01-01T00:00Z in ns: every sample row falls in this hour. */
const START_NS = BigInt(Date.UTC(2026, 0, 1, 0)) * 1_000_000n;
const PARTITION = 'data/tenant_id=acme/year=2026/month=01/day=01/hour=00/';

describe('sink freshness', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-sink-fresh-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function fixture(
    name: string,
    exports: number,
  ): Promise<{ walDir: string; store: ObjectStore; last: WalPosition; positions: WalPosition[] }> {
    const walDir = join(root, name, 'wal');
    const store = createLocalObjectStore({ root: join(root, name, 'store') });
    const wal = await openWal({ dir: walDir, groupCommitMs: 1, segmentBytes: 64 * 1024 * 1024 });
    const rows = sampleRows(exports * 10, { seed: 3, startNs: START_NS });
    const positions: WalPosition[] = [];
    for (let i = 0; i < exports; i++) {
      const records = rows.slice(i * 10, (i + 1) * 10).map((r) => r.record);
      positions.push(await wal.append(encodeWalExport('acme', 'protobuf', encodeLogsProtobuf(records))));
    }
    await wal.close();
    return { walDir, store, last: positions.at(-1)!, positions };
  }

  /** Runs a sink with a manual clock until its first flush, then stops it. */
  async function firstFlush(
    name: string,
    flushIntervalMs: number,
    prepare?: (s: ObjectStore) => Promise<void>,
    backstopMs = 10_000,
  ): Promise<{ flushed: Extract<SinkEvent, { type: 'flushed' }> | null; store: ObjectStore }> {
    const f = await fixture(name, 3);
    const s = f.store;
    await prepare?.(s);
    let clock = 1_000_000;
    let flushed: Extract<SinkEvent, { type: 'flushed' }> | null = null;
    let onFlushed: () => void = () => undefined;
    const sawFlush = new Promise<void>((resolve) => (onFlushed = resolve));
    const sink = createSinkLoop({
      settings: {
        walDir: f.walDir,
        flushAgeSecs: 3600,
        flushIntervalMs,
        flushBytes: 1 << 30,
        ceilingBytes: 1 << 30,
        miner: {},
        replayTarget: f.last,
      },
      store: s,
      now: () => clock,
      emit: (e) => {
        if (e.type === 'replayed') clock += flushIntervalMs + 250; // the rows have now waited past the interval
        if (e.type === 'flushed' && flushed === null) {
          flushed = e;
          onFlushed();
        }
      },
    });
    const running = sink.run();
    // The interval flush happens on the sink's next wake-up (at most 1 s of real time); 10 s is only a backstop.
    await Promise.race([sawFlush, new Promise((resolve) => setTimeout(resolve, backstopMs))]);
    sink.shutdown(f.last);
    await running;
    return { flushed, store: s };
  }

  test('a sink that trails a live stream (never reaching the durable position) still flushes at the cadence; the startup replay is not cut', async () => {
    // 20 exports at startup (replay), then 40 more made durable at once: the sink reads them in one pass, as when
    // it trails a steady load. The clock moves 100 ms at every reading, so the cadence falls due mid-pass.
    const f = await fixture('trailing', 60);
    let clock = 1_000_000;
    const flushes: Extract<SinkEvent, { type: 'flushed' }>[] = [];
    let onAll: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (onAll = resolve));
    const sink = createSinkLoop({
      settings: {
        walDir: f.walDir,
        flushAgeSecs: 3600,
        flushIntervalMs: 1000,
        flushBytes: 1 << 30,
        ceilingBytes: 1 << 30,
        miner: {},
        replayTarget: f.positions[19]!,
      },
      store: f.store,
      now: () => (clock += 100),
      emit: (e) => {
        if (e.type === 'replayed') sink.durable(f.last);
        if (e.type === 'flushed') {
          flushes.push(e);
          if (flushes.reduce((n, x) => n + x.records, 0) === 600) onAll();
        }
      },
    });
    const running = sink.run();
    await all;
    sink.shutdown(f.last);
    await running;
    assert.ok(flushes.length >= 1);
    assert.ok(
      flushes[0]!.records >= 200,
      'the startup replay (20 exports, 2 s and more of the clock) is not cut by the cadence',
    );
    const live = flushes.slice(1);
    assert.ok(
      live.length >= 2 && live.every((x) => x.trigger === 'interval'),
      `the 40 live exports are stored at the cadence while the sink reads on: ${JSON.stringify(flushes.map((x) => [x.trigger, x.records]))}`,
    );
  });

  test('flush_interval_ms flushes the oldest row once it waited that long (trigger interval), long before flush_age_secs, and reports its visibility lag', async () => {
    const { flushed } = await firstFlush('interval', 500);
    assert.ok(flushed !== null, 'an interval flush happened');
    const f = flushed as Extract<SinkEvent, { type: 'flushed' }>;
    assert.equal(f.trigger, 'interval');
    assert.equal(f.records, 30);
    // Manual clock: the rows arrived at 1,000,000 and the flush stored them 750 ms later.
    assert.equal(f.visibilityLagSecs, 0.75);
  });

  test('flush_interval_ms 0 leaves the cadence to flush_age_secs: no flush before shutdown', async () => {
    // The sink re-checks its triggers at least once a second: 2.5 s of real time are two chances to flush early.
    const { flushed } = await firstFlush('interval-off', 0, undefined, 2500);
    assert.equal(flushed?.trigger, 'shutdown');
  });

  test('a flush into a partition that has a manifest adds its file to it (late data is visible at once); other names stay', async () => {
    const { store } = await firstFlush('late', 500, (s) =>
      s.put(manifestKey(PARTITION), encodePartitionManifest({ generation: 4, files: ['0000-old.parquet'] })),
    );
    const manifest = parsePartitionManifest((await store.get(manifestKey(PARTITION)))!);
    assert.equal(manifest.generation, 5);
    assert.equal(manifest.files.length, 2);
    assert.equal(manifest.files[0], '0000-old.parquet');
    const stored: string[] = [];
    for await (const e of store.list({ prefix: PARTITION }))
      if (e.kind === 'object' && e.key.endsWith('.parquet')) stored.push(e.key.slice(PARTITION.length));
    assert.deepEqual(stored, [manifest.files[1]], 'the manifest names exactly the file the sink stored');
  });

  test('appending to a manifest that another writer commits in between retries over the new generation and keeps both changes', async () => {
    const store = createLocalObjectStore({ root: join(root, 'race', 'store') });
    const key = manifestKey(PARTITION);
    await store.put(key, encodePartitionManifest({ generation: 1, files: ['a.parquet', 'b.parquet'] }));
    let raced = false;
    const racing: ObjectStore = Object.assign(Object.create(store) as ObjectStore, {
      async putConditional(...args: Parameters<ObjectStore['putConditional']>) {
        if (!raced) {
          raced = true;
          // A compactor commits first: a and b merged into c.
          await store.put(key, encodePartitionManifest({ generation: 2, files: ['c.parquet'] }));
        }
        return store.putConditional(...args);
      },
    });
    assert.equal(await appendToManifest(racing, `${PARTITION}late.parquet`), 'appended');
    assert.deepEqual(parsePartitionManifest((await store.get(key))!), {
      generation: 3,
      files: ['c.parquet', 'late.parquet'],
    });
    assert.equal(
      await appendToManifest(racing, `${PARTITION}late.parquet`),
      'listed',
      'a retried flush appends nothing',
    );
    assert.equal(
      await appendToManifest(racing, 'data/tenant_id=acme/year=2026/month=01/day=01/hour=01/x.parquet'),
      'no_manifest',
    );
    await store.put(key, new TextEncoder().encode('{not json'));
    assert.equal(await appendToManifest(racing, `${PARTITION}late2.parquet`), 'left_to_compactor');
  });
});
