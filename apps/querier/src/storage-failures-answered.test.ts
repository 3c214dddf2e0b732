/**
 * @module storage-failures-answered.test
 * Issue 18 at the querier's surfaces: a corrupt object is 500 `storage_corrupt` (fail) or served around (skip),
 * storage that does not answer is 503 `storage_unavailable` — on `/v1/query` and in MCP, with the additive error
 * fields, the `error.type` of the query's duration point, the once-per-window log line and the
 * `sluice.storage.corrupt_objects` counter. A deadline reached while storage was failing is `storage_unavailable`,
 * not a time limit: decided from the worker's storage report, never from timing luck.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MeterProvider, MetricReader, type DataPoint, type MetricData } from '@opentelemetry/sdk-metrics';
import { ManualTimers } from '@sluice/limits/testing';
import {
  createLocalObjectStore,
  dataFileKey,
  dataPartitionPrefix,
  encodeLogsParquet,
  manifestKey,
  uuidv7,
} from '@sluice/storage';
import {
  ATTR_SLUICE_STORAGE_CORRUPT_REASON,
  ATTR_SLUICE_STORAGE_SEEN_BY,
  METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS,
  createLogger,
} from '@sluice/telemetry';
import { CORRUPT_OBJECT_LOG_WINDOW_MS } from './corrupt-object-log.js';
import type { QueryObserver } from './query-service.js';
import { STORAGE_STALL_MS, type StorageWaitReport } from './storage-watch.js';
import {
  BlockingWorkers,
  COUNT,
  T0,
  createStoreFixture,
  harness as makeHarness,
  query,
  row,
  rpc,
  tracked,
  until,
  within,
  type Harness,
  type HarnessOptions,
} from './testing/query-harness.js';
import { listenForFaultyReads } from './testing/faulty-storage-reads.js';

/** A reader collected by hand. */
class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** Library and decoder words that must never reach a client. */
const ENGINE_TEXT = /PAR1|thrift|hyparquet|footer|zstd|InternalError|ECONN|socket|stack/i;

let fixture: { readonly dir: string; remove(): Promise<void> };
/** The truncated data file of tenant `damaged` (beside a healthy one of 300 rows). */
let truncatedKey = '';
/** The garbage manifest of tenant `manifested`. */
let garbageManifestKey = '';
/** The (only) data file of tenant `flaky`. */
let flakyKey = '';

before(async () => {
  fixture = await createStoreFixture(['acme', 'damaged', 'manifested', 'flaky', 'stalled', 'hung']);
  const store = createLocalObjectStore({ root: fixture.dir });
  const bytes = await encodeLogsParquet([row('damaged', T0, 'x'), row('damaged', T0 + 1n, 'y')]);
  truncatedKey = dataFileKey('damaged', T0, uuidv7());
  await store.put(truncatedKey, bytes.slice(0, Math.floor(bytes.length / 2)));
  garbageManifestKey = manifestKey(dataPartitionPrefix('manifested', Number(T0 / 1_000_000n)));
  await store.put(garbageManifestKey, new TextEncoder().encode('not a manifest'));
  for await (const e of store.list({ prefix: 'data/tenant_id=flaky/' })) if (e.kind === 'object') flakyKey = e.key;
});
after(async () => {
  await fixture.remove();
});

const harness = (o: Omit<HarnessOptions, 'dir'>): Harness => makeHarness({ ...o, dir: fixture.dir });

interface RpcAnswer {
  readonly result?: { content: { type: string; text: string }[] };
  readonly error?: { code: number; message: string; data?: Record<string, unknown> };
}

async function callTool(h: Harness, tenant: string, statement: string): Promise<RpcAnswer> {
  const res = await rpc(h, tenant, {
    id: 1,
    method: 'tools/call',
    params: { name: 'query_logs', arguments: { query: statement } },
  });
  return (await res.json()) as RpcAnswer;
}

/** An observer that keeps each query's `error.type` (what apps/server records on sluice.query.duration). */
function errorTypes(): { readonly observer: QueryObserver; readonly seen: (string | null)[] } {
  const seen: (string | null)[] = [];
  return { observer: { finished: (_kind, _s, errorKind) => seen.push(errorKind) }, seen };
}

describe('storage_corrupt: fail answers 500 naming the object, skip serves the rest', () => {
  test('fail: HTTP 500 storage_corrupt with key, reason and retryable false, in our words only; error.type storage_corrupt', async () => {
    const types = errorTypes();
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, observer: types.observer });
    try {
      const a = await query(h, 'damaged', { query: COUNT });
      assert.equal(a.status, 500);
      assert.deepEqual(
        { ...a.json.error, message: undefined },
        {
          kind: 'storage_corrupt',
          message: undefined,
          key: truncatedKey,
          reason: 'parquet_unreadable',
          retryable: false,
        },
      );
      assert.ok(a.json.error.message.includes(truncatedKey), a.json.error.message);
      assert.match(a.json.error.message, /querier\.on_corrupt_object/);
      assert.doesNotMatch(a.json.error.message, ENGINE_TEXT);

      const m = await query(h, 'manifested', { query: COUNT });
      assert.equal(m.status, 500);
      assert.deepEqual(
        { kind: m.json.error.kind, key: m.json.error.key, reason: m.json.error.reason },
        { kind: 'storage_corrupt', key: garbageManifestKey, reason: 'manifest_invalid' },
      );
      assert.deepEqual(types.seen, ['storage_corrupt', 'storage_corrupt']);
      assert.equal((await query(h, 'acme', { query: COUNT })).json.rows, 300, 'other tenants are unaffected');
    } finally {
      await h.close();
    }
  });

  test('fail: MCP query_logs is internal_error (-32603) with data.kind storage_corrupt, key, reason, retryable false', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000 });
    try {
      const answer = await callTool(h, 'damaged', COUNT);
      assert.equal(answer.error?.code, -32603);
      assert.deepEqual(answer.error?.data, {
        kind: 'storage_corrupt',
        key: truncatedKey,
        reason: 'parquet_unreadable',
        retryable: false,
      });
      assert.ok(answer.error?.message.includes(truncatedKey));
      assert.doesNotMatch(answer.error?.message ?? '', ENGINE_TEXT);
    } finally {
      await h.close();
    }
  });

  test('skip: HTTP 200 without the object, stats.objects_skipped and skipped_objects; MCP answers the same, its footers from the cache', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, onCorruptObject: 'skip' });
    try {
      const a = await query(h, 'damaged', { query: COUNT });
      assert.equal(a.status, 200);
      assert.equal(a.json.rows, 300);
      assert.equal(a.json.stats.objects_skipped, 1);
      assert.deepEqual(a.json.stats.skipped_objects, [{ key: truncatedKey, reason: 'parquet_unreadable' }]);
      const tool = await callTool(h, 'damaged', COUNT);
      // The same worker answers again with the good file's footer from its cache: stats.bytes_read counts bytes read
      // from storage (docs/design/query-governance.md, "Footer cache"), so only that figure may be smaller.
      const again = JSON.parse(tool.result?.content[0]?.text ?? 'null');
      assert.ok(again.stats.bytes_read < a.json.stats.bytes_read, 'the footer came from the cache');
      assert.deepEqual(
        { ...again, stats: { ...again.stats, bytes_read: 0 } },
        { ...a.json, stats: { ...a.json.stats, bytes_read: 0 } },
      );
      const m = await query(h, 'manifested', { query: COUNT });
      assert.equal(m.status, 200);
      assert.equal(m.json.rows, 0, 'a damaged manifest leaves out its whole partition');
      assert.deepEqual(m.json.stats.skipped_objects, [{ key: garbageManifestKey, reason: 'manifest_invalid' }]);
    } finally {
      await h.close();
    }
  });

  test('every meeting is counted on sluice.storage.corrupt_objects; the warn line is written once per key per window', async () => {
    const reader = new ManualReader();
    const provider = new MeterProvider({ readers: [reader] });
    const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
    const log = createLogger('querier', { write: (line) => lines.push(JSON.parse(line)) });
    let clock = 0;
    const h = harness({
      maxConcurrent: 1,
      queryTimeoutMs: 30_000,
      onCorruptObject: 'skip',
      log,
      meter: provider.getMeter('sluice'),
      corruptLogNow: () => clock,
    });
    const corruptLines = (): typeof lines => lines.filter((l) => l.msg === 'corrupt object in storage');
    const counted = async (): Promise<Record<string, number>> => {
      const out: Record<string, number> = {};
      const metrics: MetricData[] = (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
      for (const m of metrics) {
        if (m.descriptor.name !== METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS) continue;
        for (const p of m.dataPoints as DataPoint<number>[])
          out[
            `${String(p.attributes[ATTR_SLUICE_STORAGE_CORRUPT_REASON])}/${String(p.attributes[ATTR_SLUICE_STORAGE_SEEN_BY])}`
          ] = p.value;
      }
      return out;
    };
    try {
      assert.equal((await query(h, 'damaged', { query: COUNT })).status, 200);
      assert.deepEqual(
        corruptLines().map((l) => ({ level: l.level, key: l.fields?.['key'], reason: l.fields?.['reason'] })),
        [{ level: 'warn', key: truncatedKey, reason: 'parquet_unreadable' }],
      );
      assert.equal(corruptLines()[0]?.fields?.['on_corrupt_object'], 'skip');
      clock += CORRUPT_OBJECT_LOG_WINDOW_MS - 1;
      assert.equal((await query(h, 'damaged', { query: COUNT })).status, 200);
      assert.equal(corruptLines().length, 1, 'a repeat inside the window is only counted');
      assert.deepEqual(await counted(), { 'parquet_unreadable/querier': 2 });
      clock += 1;
      assert.equal((await query(h, 'damaged', { query: COUNT })).status, 200);
      assert.equal(corruptLines().length, 2, 'logged again once the window has passed');
      assert.equal(corruptLines()[1]?.fields?.['repeats'], 1, 'with the meetings that went unlogged');
      assert.equal((await query(h, 'manifested', { query: COUNT })).status, 200);
      assert.equal(corruptLines().length, 3, 'another key has its own window');
      assert.deepEqual(await counted(), { 'parquet_unreadable/querier': 3, 'manifest_invalid/querier': 1 });
    } finally {
      await h.close();
    }
  });
});

describe('storage_unavailable: 503, retryable, naming the operation and the object', () => {
  const faulty = (o: Omit<HarnessOptions, 'dir'>): Harness =>
    harness({ ...o, workerScript: './testing/faulty-storage-query-worker.js' });

  test('a read that runs out of attempts: HTTP 503 with operation, key, attempts, reason; MCP -32603; error.type storage_unavailable', async () => {
    const types = errorTypes();
    const h = faulty({ maxConcurrent: 1, queryTimeoutMs: 30_000, observer: types.observer });
    try {
      const a = await query(h, 'flaky', { query: COUNT });
      assert.equal(a.status, 503);
      assert.deepEqual(
        { ...a.json.error, message: undefined },
        {
          kind: 'storage_unavailable',
          message: undefined,
          operation: 'get_range',
          key: flakyKey,
          attempts: 2,
          reason: 'server_error',
          retryable: true,
        },
      );
      assert.ok(a.json.error.message.includes(flakyKey), a.json.error.message);
      assert.doesNotMatch(a.json.error.message, ENGINE_TEXT);
      const answer = await callTool(h, 'flaky', COUNT);
      assert.equal(answer.error?.code, -32603);
      assert.deepEqual(answer.error?.data, {
        kind: 'storage_unavailable',
        operation: 'get_range',
        key: flakyKey,
        attempts: 2,
        reason: 'server_error',
        retryable: true,
      });
      assert.deepEqual(types.seen, ['storage_unavailable', 'storage_unavailable']);
      assert.equal((await query(h, 'acme', { query: COUNT })).json.rows, 300, 'other tenants read normally');
    } finally {
      await h.close();
    }
  });

  test('a real worker stopped at its deadline while its read was retried and then hung: 503 storage_unavailable, not a time limit', async () => {
    const types = errorTypes();
    const timers = new ManualTimers();
    const reads = listenForFaultyReads();
    const h = faulty({ maxConcurrent: 1, queryTimeoutMs: 300, observer: types.observer, timers });
    try {
      // Paused time: the deadline fires once the retry (the second read of the file) is under way and hanging.
      const pending = query(h, 'stalled', { query: COUNT });
      await within(60_000, () => reads.keys.filter((k) => k.includes('tenant_id=stalled/')).length >= 2, 'the retry');
      // A pending call counts once it has waited half the deadline (storage-watch.ts); it began before its
      // announcement arrived, so a real wait of the whole deadline after it is a lower bound, not a race.
      await delay(300);
      timers.advance(300);
      const a = await pending;
      assert.equal(a.status, 503, JSON.stringify(a.json));
      assert.equal(a.json.error.kind, 'storage_unavailable');
      assert.equal(a.json.error.operation, 'get_range');
      assert.match(a.json.error.key, /^data\/tenant_id=stalled\//);
      assert.equal(a.json.error.attempts, 2, 'the retry under way');
      assert.equal(a.json.error.retryable, true);
      assert.match(a.json.error.message, /deadline of 300 ms/);
      assert.deepEqual(types.seen, ['storage_unavailable']);
      assert.equal(h.gate.inFlight(), 0);
      assert.equal((await query(h, 'acme', { query: COUNT })).json.rows, 300, 'the worker serves the next query');
    } finally {
      reads.close();
      await h.close();
    }
  });

  test('a real worker stopped at its deadline while its first read hung (no retry yet): 503 storage_unavailable', async () => {
    const timers = new ManualTimers();
    const reads = listenForFaultyReads();
    const h = faulty({ maxConcurrent: 1, queryTimeoutMs: 400, timers });
    try {
      // Paused time: the deadline fires once the first read is under way and hanging.
      const pending = query(h, 'hung', { query: COUNT });
      await within(60_000, () => reads.keys.some((k) => k.includes('tenant_id=hung/')), 'the first read');
      await delay(400); // past half the deadline of real waiting, as above
      timers.advance(400);
      const a = await pending;
      assert.equal(a.status, 503, JSON.stringify(a.json));
      assert.deepEqual(
        { kind: a.json.error.kind, operation: a.json.error.operation, attempts: a.json.error.attempts },
        { kind: 'storage_unavailable', operation: 'get_range', attempts: 1 },
      );
    } finally {
      reads.close();
      await h.close();
    }
  });
});

describe('the deadline rule with a storage report (paused time, no workers)', () => {
  const report = (over: Partial<StorageWaitReport>): StorageWaitReport => ({
    retries: 0,
    lastRetry: null,
    pending: null,
    ...over,
  });
  /** Runs one query to its 1000 ms deadline; the job reports `storage` when it is stopped. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function stoppedWith(storage: StorageWaitReport | undefined): Promise<{ status: number; error: any }> {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 1000, workers, timers });
    const a = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 1, 'running');
    if (storage) workers.calls[0]!.storage = storage;
    timers.advance(1000);
    const answer = await a.promise;
    assert.equal(workers.calls[0]?.stopped, true);
    return { status: answer.status, error: answer.json.error };
  }
  const key = 'data/tenant_id=acme/year=2026/month=06/day=01/hour=00/x.parquet';

  test('no storage trouble: the lone query is still 422 query_time_limit', async () => {
    assert.equal((await stoppedWith(undefined)).error.kind, 'query_time_limit');
    assert.equal((await stoppedWith(report({}))).error.kind, 'query_time_limit');
  });

  test('a call pending for less than the stall floor is an ordinary read: 422 query_time_limit', async () => {
    const r = await stoppedWith(report({ pending: { operation: 'get_range', key, waitedMs: 499 } }));
    assert.equal(r.error.kind, 'query_time_limit');
  });

  test('a call pending for half the deadline (under STORAGE_STALL_MS) is storage not answering: 503 storage_unavailable', async () => {
    assert.ok(500 < STORAGE_STALL_MS);
    const r = await stoppedWith(report({ pending: { operation: 'get_range', key, waitedMs: 500 } }));
    assert.equal(r.status, 503);
    assert.deepEqual(
      { ...r.error, message: undefined },
      {
        kind: 'storage_unavailable',
        message: undefined,
        operation: 'get_range',
        key,
        attempts: 1,
        reason: 'timeout',
        retryable: true,
      },
    );
  });

  test('one retry reported during the query is enough, even with nothing pending at the stop', async () => {
    const r = await stoppedWith(
      report({ retries: 1, lastRetry: { operation: 'head', key, attempt: 1, reason: 'connection' } }),
    );
    assert.equal(r.status, 503);
    assert.deepEqual(
      { kind: r.error.kind, operation: r.error.operation, key: r.error.key, attempts: r.error.attempts },
      { kind: 'storage_unavailable', operation: 'head', key, attempts: 1 },
    );
  });
});
