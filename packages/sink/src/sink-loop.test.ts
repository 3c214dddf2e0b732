/**
 * @module sink-loop.test
 * The sink over a real WAL (fdatasync'd segments), a real local object store and real Parquet files: what reaches
 * storage, in which order, when the checkpoint moves, and what a restart from the checkpoint re-mines.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { LogRecord } from '@sluice/core';
import { encodeLogsProtobuf } from '@sluice/otlp';
import {
  LOG_COLUMN_NAMES,
  createLocalObjectStore,
  decodeLogRows,
  openParquetFile,
  sourceFromStore,
  type ObjectStore,
  type StoredLogRow,
} from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { compareWalPositions, openWal, readCheckpoint, type Checkpoint, type WalPosition } from '@sluice/wal';
import { createSinkLoop } from './sink-loop.js';
import type { SinkEvent } from './sink-events.js';
import type { SinkSettings } from './sink-settings.js';
import { encodeWalExport } from './wal-payload.js';

/** 2026-01-01T00:00Z in ns: the sample rows start here (the first hour's partition). */
const START_NS = BigInt(Date.UTC(2026, 0, 1, 0)) * 1_000_000n;

/** A store that records the order of its puts and can fail chosen ones. */
function recordingStore(
  inner: ObjectStore,
  failPut?: (key: string, attempt: number) => boolean,
): ObjectStore & {
  readonly puts: string[];
} {
  const puts: string[] = [];
  let attempt = 0;
  return Object.assign(Object.create(inner) as ObjectStore, {
    puts,
    async put(key: string, bytes: Uint8Array, options?: Parameters<ObjectStore['put']>[2]) {
      if (failPut?.(key, attempt++)) throw new Error(`injected put failure for ${key}`);
      const r = await inner.put(key, bytes, options);
      puts.push(key);
      return r;
    },
  });
}

async function storedRows(store: ObjectStore): Promise<StoredLogRow[]> {
  const rows: StoredLogRow[] = [];
  for await (const e of store.list({ prefix: 'data/' })) {
    if (e.kind !== 'object' || !e.key.endsWith('.parquet')) continue;
    const file = await openParquetFile(sourceFromStore(store, e.key, e.size));
    for (const g of file.rowGroups) rows.push(...decodeLogRows(await file.readRowGroup(g.index, LOG_COLUMN_NAMES)));
  }
  return rows;
}

const bodyOf = (r: LogRecord): string => (r.body?.kind === 'string' ? r.body.value : '');

describe('the sink over a real WAL and store', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-sink-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A fresh WAL and store with `exports` exports of `perExport` rows (tenants alternate), appended durably. */
  async function fixture(name: string, exports: number, perExport: number, segmentBytes = 64 * 1024 * 1024) {
    const walDir = join(root, name, 'wal');
    const store = createLocalObjectStore({ root: join(root, name, 'store') });
    const wal = await openWal({ dir: walDir, groupCommitMs: 1, segmentBytes });
    const rows = sampleRows(exports * perExport, { seed: 7, startNs: START_NS });
    const positions: WalPosition[] = [];
    for (let i = 0; i < exports; i++) {
      const tenant = i % 2 === 0 ? 'acme' : 'globex';
      const records = rows.slice(i * perExport, (i + 1) * perExport).map((r) => r.record);
      positions.push(await wal.append(encodeWalExport(tenant, 'protobuf', encodeLogsProtobuf(records))));
    }
    await wal.close();
    const records = rows.map((r) => r.record);
    return { walDir, store, positions, records };
  }

  const settingsFor = (walDir: string, replayTarget: WalPosition | null, flushBytes = 1 << 30): SinkSettings => ({
    walDir,
    flushAgeSecs: 3600,
    flushBytes,
    ceilingBytes: 1 << 30,
    miner: {},
    replayTarget,
  });

  /** Runs a sink to `until` and shuts it down there; returns its events (every one when `withBuffer`). */
  async function runTo(
    settings: SinkSettings,
    store: ObjectStore,
    until: WalPosition,
    withBuffer = false,
  ): Promise<SinkEvent[]> {
    const events: SinkEvent[] = [];
    const sink = createSinkLoop({ settings, store, emit: (e) => events.push(e) });
    const running = sink.run();
    sink.shutdown(until);
    await running;
    // Buffer levels have their own test; the others check the sequence of the remaining events.
    return withBuffer ? events : events.filter((e) => e.type !== 'buffer');
  }

  test('buffer reports carry the high-water mark: each flush is preceded by its level, and peakBytes is the largest level', async () => {
    const f = await fixture('buffer-peak', 12, 40);
    const last = f.positions.at(-1)!;
    // Size flushes at 8 KiB during replay: the buffer fills and empties several times.
    const events = await runTo(settingsFor(f.walDir, last, 8 * 1024), f.store, last, true);
    const flushedAt = events.flatMap((e, i) => (e.type === 'flushed' ? [i] : []));
    assert.ok(flushedAt.length >= 2, JSON.stringify(events.map((e) => e.type)));
    let levelsBefore: number[] = [];
    let peak = 0;
    for (const e of events) {
      if (e.type === 'buffer') {
        assert.ok(e.peakBytes >= e.bytes && e.peakBytes >= peak, 'the peak never falls and is at least the level');
        peak = e.peakBytes;
        levelsBefore.push(e.bytes);
      } else if (e.type === 'flushed') {
        // The report just before a flush is the level it took: the buffer held that much.
        assert.ok((levelsBefore.at(-1) ?? 0) > 0, 'a buffer report precedes every flush');
        levelsBefore = [];
      }
    }
    const levels = events.flatMap((e) => (e.type === 'buffer' ? [e.bytes] : []));
    assert.equal(peak, Math.max(...levels), 'the peak is the highest level the buffer reached');
    assert.ok(peak >= 8 * 1024, 'a size flush happens only once the buffer reached flush_bytes');
  });

  test('a shutdown stores audit files before data files, one data file per (tenant, hour), and checkpoints at the last frame', async () => {
    const f = await fixture('shutdown', 6, 50);
    const store = recordingStore(f.store);
    const last = f.positions.at(-1)!;
    const events = await runTo(settingsFor(f.walDir, last), store, last);

    assert.deepEqual(
      events.map((e) => e.type),
      ['replayed', 'flushed'],
    );
    assert.deepEqual(events[0], { type: 'replayed', exports: 6 });
    const flushed = events[1]!;
    assert.ok(flushed.type === 'flushed');
    assert.equal(flushed.trigger, 'shutdown');
    assert.equal(flushed.records, 300);
    assert.deepEqual(flushed.checkpoint, last);

    // The audit barrier: every audit file is stored before the first data file.
    const firstData = store.puts.findIndex((k) => k.startsWith('data/'));
    const lastAudit = store.puts.findLastIndex((k) => k.startsWith('audit/'));
    assert.ok(lastAudit >= 0 && firstData > lastAudit, store.puts.join('\n'));
    const dataKeys = store.puts.filter((k) => k.startsWith('data/'));
    assert.equal(flushed.files, dataKeys.length);
    assert.equal(new Set(dataKeys.map((k) => k.slice(0, k.lastIndexOf('/')))).size, dataKeys.length);

    const rows = await storedRows(f.store);
    assert.deepEqual(rows.map((r) => bodyOf(r.record)).sort(), f.records.map(bodyOf).sort());
    assert.deepEqual(new Set(rows.map((r) => r.tenantId)), new Set(['acme', 'globex']));
    const checkpoint = await readCheckpoint(f.walDir);
    assert.deepEqual(checkpoint?.position, last);
  });

  test('the size trigger flushes during replay and segments below the checkpoint are deleted', async () => {
    const f = await fixture('size', 12, 40, 16 * 1024);
    const segmentsBefore = (await readdir(f.walDir)).filter((n) => n.endsWith('.wal')).length;
    const last = f.positions.at(-1)!;
    const events = await runTo(settingsFor(f.walDir, last, 8 * 1024), f.store, last);
    const replayedAt = events.findIndex((e) => e.type === 'replayed');
    const sized = events.filter((e, i) => e.type === 'flushed' && e.trigger === 'size' && i < replayedAt);
    assert.ok(sized.length >= 2, JSON.stringify(events));
    assert.equal((await storedRows(f.store)).length, 480);
    const segmentsAfter = (await readdir(f.walDir)).filter((n) => n.endsWith('.wal')).length;
    assert.ok(segmentsBefore > 1 && segmentsAfter < segmentsBefore, `${segmentsBefore} → ${segmentsAfter}`);
  });

  test('a failed upload leaves the checkpoint unmoved; the retry stores every row once', async () => {
    const f = await fixture('fail', 4, 30);
    // The first data-file put fails: nothing of that flush's data is stored, so the retry stores each row once.
    let failed = false;
    const store = recordingStore(f.store, (key) => {
      if (failed || !key.startsWith('data/')) return false;
      failed = true;
      return true;
    });
    const checkpointsAtFailure: Promise<Checkpoint | null>[] = [];
    const events: SinkEvent[] = [];
    const last = f.positions.at(-1)!;
    const sink = createSinkLoop({
      settings: settingsFor(f.walDir, last),
      store,
      emit: (e) => {
        events.push(e);
        // The retry waits 250 ms before it runs again: this read sees the state the failure left.
        if (e.type === 'flush_failed') checkpointsAtFailure.push(readCheckpoint(f.walDir));
      },
    });
    const running = sink.run();
    sink.shutdown(last);
    await running;

    assert.equal(checkpointsAtFailure.length, 1);
    assert.equal(await checkpointsAtFailure[0], null, 'no checkpoint before the rows are stored');
    const failure = events.find((e) => e.type === 'flush_failed');
    assert.match(failure?.type === 'flush_failed' ? failure.message : '', /injected put failure/);
    const flushed = events.filter((e) => e.type === 'flushed');
    assert.equal(flushed.length, 1);
    assert.equal(flushed[0]!.type === 'flushed' && flushed[0]!.records, 120);
    const rows = await storedRows(f.store);
    assert.deepEqual(rows.map((r) => bodyOf(r.record)).sort(), f.records.map(bodyOf).sort());
    assert.deepEqual((await readCheckpoint(f.walDir))?.position, last);
  });

  test('a flush that fails after some files landed (or whose put landed but answered an error) stores every row exactly once on retry, under the same keys', async () => {
    const f = await fixture('landed', 4, 30);
    const last = f.positions.at(-1)!;
    // Two tenants: two data files. The first data put lands but answers an error (a timeout after the server
    // accepted the write); the second data put then fails outright. Each retry must not store anything twice.
    let dataPuts = 0;
    const attempted: string[] = [];
    const store = Object.assign(Object.create(f.store) as ObjectStore, {
      async put(key: string, bytes: Uint8Array, options?: Parameters<ObjectStore['put']>[2]) {
        attempted.push(key);
        if (!key.startsWith('data/')) return f.store.put(key, bytes, options);
        dataPuts++;
        if (dataPuts === 1) {
          await f.store.put(key, bytes, options);
          throw new Error('injected: the answer to a landed put was lost');
        }
        if (dataPuts === 2) throw new Error('injected put failure');
        return f.store.put(key, bytes, options);
      },
    });
    const events = await runTo(settingsFor(f.walDir, last), store, last);
    assert.equal(events.filter((e) => e.type === 'flush_failed').length, 2);
    const rows = await storedRows(f.store);
    assert.equal(rows.length, 120, 'each row stored once');
    assert.deepEqual(rows.map((r) => bodyOf(r.record)).sort(), f.records.map(bodyOf).sort());
    const dataKeys = attempted.filter((k) => k.startsWith('data/'));
    assert.equal(new Set(dataKeys).size, 2, `two data keys, retried under the same names: ${dataKeys.join(', ')}`);
    const flushed = events.find((e) => e.type === 'flushed');
    assert.equal(flushed?.type === 'flushed' && flushed.files, 2);
    assert.deepEqual((await readCheckpoint(f.walDir))?.position, last);
  });

  test('a size flush that keeps failing gives up after 3 attempts once a shutdown is asked for: run() resolves, nothing is checkpointed, the WAL keeps the rows', async () => {
    const f = await fixture('silent', 12, 40, 16 * 1024);
    const last = f.positions.at(-1)!;
    // Object storage that never accepts a data file (a blackholed endpoint, after the store's own retries).
    const store = recordingStore(f.store, (key) => key.startsWith('data/'));
    const events: SinkEvent[] = [];
    const sink = createSinkLoop({
      settings: settingsFor(f.walDir, last, 8 * 1024),
      store,
      emit: (e) => events.push(e),
    });
    const running = sink.run();
    // Wait for the replay's size flush to be failing, then ask for the stop.
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'flush_failed'); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      events.some((e) => e.type === 'flush_failed' && e.trigger === 'size'),
      JSON.stringify(events),
    );
    sink.shutdown(last);
    await running;
    const failed = events.filter((e) => e.type === 'flush_failed');
    assert.equal(failed.length, 3, 'three attempts, then the run ends: the rest of the WAL is not flushed either');
    assert.equal(events.filter((e) => e.type === 'flushed').length, 0);
    assert.equal(await readCheckpoint(f.walDir), null, 'nothing checkpointed: the WAL keeps every row');
  });

  test('a failing flush backs off: new durable frames do not cut the back-off short (a full store is not hammered at the ingest rate)', async () => {
    const f = await fixture('backoff', 12, 40, 16 * 1024);
    const last = f.positions.at(-1)!;
    // A full store volume: every data put fails with ENOSPC until the test frees it.
    let full = true;
    const store = recordingStore(f.store, (key) => full && key.startsWith('data/'));
    const failures: (SinkEvent & { type: 'flush_failed' })[] = [];
    const sink = createSinkLoop({
      settings: settingsFor(f.walDir, last, 8 * 1024),
      store: Object.assign(Object.create(store) as ObjectStore, {
        async put(key: string, bytes: Uint8Array, options?: Parameters<ObjectStore['put']>[2]) {
          try {
            return await store.put(key, bytes, options);
          } catch (error) {
            throw Object.assign(new Error(`ENOSPC: no space left on device, open '${key}'`), {
              code: 'ENOSPC',
              cause: error,
            });
          }
        },
      }),
      emit: (e) => {
        if (e.type === 'flush_failed') failures.push(e);
      },
    });
    const running = sink.run();
    try {
      for (let i = 0; i < 200 && failures.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(failures[0]?.code, 'ENOSPC', 'the failure carries the error code');
      // 600 ms of a steady stream telling the sink about new durable frames every 5 ms. The back-off (250 ms, then
      // 500 ms) allows at most two more attempts in that time; waking on every durable frame would make ~100.
      const streamStart = failures.length;
      const until = Date.now() + 600;
      while (Date.now() < until) {
        sink.durable(last);
        await new Promise((r) => setTimeout(r, 5));
      }
      const during = failures.length - streamStart;
      assert.ok(during <= 2, `${during} attempts in 600 ms of durable frames`);
    } finally {
      // Even when an assertion failed: free the store and stop the sink, or its retries keep the test alive.
      full = false;
      sink.shutdown(last);
      await running;
    }
    const rows = await storedRows(f.store);
    assert.deepEqual(rows.map((r) => bodyOf(r.record)).sort(), f.records.map(bodyOf).sort(), 'each row once');
    assert.deepEqual((await readCheckpoint(f.walDir))?.position, last);
  });

  test('a restart from the checkpoint re-mines the rest of the WAL to the template ids of an uninterrupted run', async () => {
    const whole = await fixture('whole', 8, 50);
    const wholeLast = whole.positions.at(-1)!;
    await runTo(settingsFor(whole.walDir, wholeLast), whole.store, wholeLast);
    const expected = new Map((await storedRows(whole.store)).map((r) => [bodyOf(r.record), r.mined.templateId]));

    const split = await fixture('split', 8, 50);
    const middle = split.positions[3]!;
    const splitLast = split.positions.at(-1)!;
    // First process: consumes half the WAL and checkpoints there (with the miner snapshot).
    await runTo(settingsFor(split.walDir, middle), split.store, middle);
    assert.deepEqual((await readCheckpoint(split.walDir))?.position, middle);
    // Second process: restores the snapshot and replays only what follows the checkpoint.
    const events = await runTo(settingsFor(split.walDir, splitLast), split.store, splitLast);
    assert.deepEqual(events[0], { type: 'replayed', exports: 4 });

    const got = await storedRows(split.store);
    assert.equal(got.length, 400, 'each row stored once');
    for (const r of got) assert.equal(r.mined.templateId, expected.get(bodyOf(r.record)), bodyOf(r.record));
    assert.ok(compareWalPositions((await readCheckpoint(split.walDir))!.position, splitLast) === 0);
  });

  test('a WAL record that no longer decodes is reported and skipped; the others are stored', async () => {
    const walDir = join(root, 'undecodable', 'wal');
    const store = createLocalObjectStore({ root: join(root, 'undecodable', 'store') });
    const wal = await openWal({ dir: walDir, groupCommitMs: 1, segmentBytes: 1 << 20 });
    const records = sampleRows(10, { startNs: START_NS }).map((r) => r.record);
    await wal.append(encodeWalExport('acme', 'json', new TextEncoder().encode('{"resourceLogs": [')));
    const last = await wal.append(encodeWalExport('acme', 'protobuf', encodeLogsProtobuf(records)));
    await wal.close();
    const events = await runTo(settingsFor(walDir, last), store, last);
    assert.deepEqual(events[0], { type: 'parse_failures', reason: 'undecodable_wal_record', count: 1 });
    assert.equal((await storedRows(store)).length, 10);
  });
});
