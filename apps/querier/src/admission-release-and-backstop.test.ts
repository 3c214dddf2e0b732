/**
 * @module admission-release-and-backstop.test
 * The governance scenarios (docs/design/query-governance.md) at the querier level, in process: the hono app from `createQueryApp` over a real
 * `createQueryService` and a real admission gate on paused timers. Query execution is either real (`createWorkerPool`
 * workers over a temp local store) or, for the admission/permit legs only, a test worker pool whose `run` blocks
 * until the test releases it. Covers RFC0058.5 (admission), RFC0058.7 (permit and body reservation held until the
 * response body has been sent, over a real HTTP server), RFC0058.9 (one `sluice.query.duration` point per
 * rejection, HTTP and MCP) and the worker backstop (a worker dying mid-query). No leg depends on timing: every wait
 * is for an observable state (a queue depth, a call count), and timeouts fire only when the test advances time.
 */
import { ManualTimers } from '@sluice/limits/testing';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import type { LogRecord } from '@sluice/core';
import { createAdmissionGate, createMemoryPool, type AdmissionGate, type MemoryPool } from '@sluice/limits';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type StoredLogRow } from '@sluice/storage';
import {
  ATTR_ERROR_TYPE,
  ATTR_SLUICE_QUERY_KIND,
  ATTR_SLUICE_QUERY_ROW_GROUP_STATE,
  METRIC_SLUICE_QUERY_DURATION,
  SLUICE_QUERY_ROW_GROUP_STATE_VALUE_PRUNED,
  SLUICE_QUERY_ROW_GROUP_STATE_VALUE_SCANNED,
  createLogger,
  createQueryMetrics,
} from '@sluice/telemetry';
import { createAccessGate } from '@sluice/edge';
import { createQueryApp } from './query-app.js';
import { createQueryService, type QueryObserver } from './query-service.js';
import { createWorkerPool, type JobResult, type RunControl, type WorkerPool } from './worker-pool.js';
import type { QueryWorkerData } from './worker-protocol.js';
import { footerCacheBytesPerWorker } from './worker-footer-cache.js';
import { nonCacheHeldBytes } from './worker-footer-cache.js';

/** 2026-06-01T00:00:00Z in ns. */
const T0 = 1_780_272_000_000_000_000n;
const H = 3_600_000_000_000n;
const NOW = T0 + 2n * H;
const HOUR1 = 'range(2026-06-01T00:00:00Z, 2026-06-01T01:00:00Z)';
const HOURS2 = 'range(2026-06-01T00:00:00Z, 2026-06-01T02:00:00Z)';
const SMALL = `true | ${HOUR1} | count`;
const BIG_ROWS = 8000;
const BIG_BODY_CHARS = 3000;
const silent = createLogger('test', { write: () => {} });
/** What testing/dying-query-worker.ts reserves before exiting (not imported: that module must run in a worker). */
const DYING_EXTRA_BYTES = 1 << 20;

let dir = '';

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

function row(tenant: string, t: bigint, body: string): StoredLogRow {
  const record: LogRecord = {
    timeUnixNano: t,
    observedTimeUnixNano: t,
    severityNumber: 9,
    severityText: 'INFO',
    body: { kind: 'string', value: body },
    attributes: [],
    droppedAttributesCount: 0,
    flags: 0,
    traceId: new Uint8Array(0),
    spanId: new Uint8Array(0),
    eventName: '',
    resource: {
      attributes: [{ key: 'service.name', value: { kind: 'string', value: 'api' } }],
      droppedAttributesCount: 0,
      schemaUrl: '',
    },
    scope: { name: 'test', version: '1', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
  };
  return {
    tenantId: tenant,
    record,
    mined: { templateId: 1n, templateVersion: 1, params: [], confidence: 1, lossy: false },
  };
}

async function writeFile(tenant: string, hourStart: bigint, rows: StoredLogRow[], rowGroupRows: number): Promise<void> {
  const store = createLocalObjectStore({ root: dir });
  await store.put(dataFileKey(tenant, hourStart, uuidv7()), await encodeLogsParquet(rows, { rowGroupRows }));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'querier-rfc0058-'));
  // acme: 2 hours × 2 files × 250 rows (4 files), small bodies.
  for (let h = 0n; h < 2n; h++) {
    for (let f = 0; f < 2; f++) {
      const rows = Array.from({ length: 250 }, (_, i) =>
        row('acme', T0 + h * H + BigInt(f * 250 + i) * 1_000_000_000n, `request ${i} completed in ${i % 97} ms`),
      );
      await writeFile('acme', T0 + h * H, rows, 250);
    }
  }
  // wide: one row group whose decoded bodies (500 × 12 KB) exceed a 4 MiB pool.
  await writeFile(
    'wide',
    T0,
    Array.from({ length: 500 }, (_, i) => row('wide', T0 + BigInt(i) * 1_000_000_000n, `${i} ${'w'.repeat(12_000)}`)),
    500,
  );
  // big: a ~25 MB response, far more than the loopback socket buffers (wmem_max 4 MiB, a non-reading client's rcvbuf).
  await writeFile(
    'big',
    T0,
    Array.from({ length: BIG_ROWS }, (_, i) =>
      row('big', T0 + BigInt(i) * 100_000_000n, `${i} ${'b'.repeat(BIG_BODY_CHARS)}`),
    ),
    1000,
  );
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------------------------
// Harness

/** A worker pool whose jobs block until the test finishes them (admission and permit legs only). */
class BlockingWorkers implements WorkerPool {
  readonly calls: { id: string; tenant: string; finish(): void }[] = [];
  autoFinish = false;
  run(id: string, tenant: string, _nowNs: bigint, _job: unknown, control: RunControl = {}): Promise<JobResult> {
    const { signal } = control;
    control.onDispatch?.();
    return new Promise<JobResult>((resolve) => {
      const finish = (): void =>
        resolve({
          status: 'ok',
          body: new TextEncoder().encode(`{"tenant":"${tenant}"}`),
          rows: 0,
          rowGroupsScanned: 0,
          rowGroupsPruned: 0,
          peakBytes: 0,
        });
      signal?.addEventListener('abort', () => resolve({ status: 'cancelled' }), { once: true });
      this.calls.push({ id, tenant, finish });
      if (this.autoFinish) finish();
    });
  }
  async close(): Promise<void> {}
}

interface HarnessOptions {
  readonly maxConcurrent?: number;
  readonly maxQueued?: number;
  readonly queueTimeoutMs?: number;
  readonly poolBytes?: number;
  /** Per-query ceiling (default: the whole pool, as before the ceiling existed). */
  readonly maxQueryBytes?: number;
  readonly limits?: Partial<QueryWorkerData['limits']>;
  /** A test worker pool; default real workers (one per permit). */
  readonly workers?: WorkerPool;
  readonly workerUrl?: URL;
  /** V8 old-generation cap per worker (default 512 MiB). */
  readonly maxOldGenerationSizeMb?: number;
  readonly observer?: QueryObserver;
  /** Wraps the pool handed to the worker pool (to observe `releaseThread`). */
  readonly wrapPool?: (pool: MemoryPool) => MemoryPool;
  readonly onWorkerDeath?: (info: { threadId: number; queryId: string | null; reason: string }) => void;
}

interface Harness {
  readonly app: ReturnType<typeof createQueryApp>;
  readonly gate: AdmissionGate;
  readonly pool: MemoryPool;
  readonly timers: ManualTimers;
  close(): Promise<void>;
}

function harness(o: HarnessOptions = {}): Harness {
  const timers = new ManualTimers();
  const maxConcurrent = o.maxConcurrent ?? 1;
  const gate = createAdmissionGate({
    maxConcurrent,
    maxQueued: o.maxQueued ?? 1,
    queueTimeoutMs: o.queueTimeoutMs ?? 200,
    timers,
    now: timers.now,
  });
  const pool = createMemoryPool({ sizeBytes: o.poolBytes ?? 64 << 20 });
  const workers =
    o.workers ??
    createWorkerPool({
      size: maxConcurrent,
      pool: o.wrapPool ? o.wrapPool(pool) : pool,
      maxOldGenerationSizeMb: o.maxOldGenerationSizeMb ?? 512,
      ...(o.workerUrl ? { workerUrl: o.workerUrl } : {}),
      ...(o.onWorkerDeath ? { onWorkerDeath: o.onWorkerDeath } : {}),
      data: {
        pool: pool.shared,
        storage: { backend: 'local', root: dir, requestTimeoutMs: 0 },
        defaultWindowSecs: 3600,
        recycleBytes: 1 << 30,
        heapSlackBytes: 64 << 20,
        footerCacheBytes: footerCacheBytesPerWorker(32 << 20, o.poolBytes ?? 64 << 20, maxConcurrent),
        maxOpenFiles: 256,
        onCorruptObject: 'fail',
        maxQueryBytes: o.maxQueryBytes ?? o.poolBytes ?? 64 << 20,
        limits: {
          defaultRows: 1000,
          maxRows: 10_000,
          maxListedObjects: 100_000,
          maxFiles: 10_000,
          maxResultBytes: 64 << 20,
          ...o.limits,
        },
      },
    });
  const service = createQueryService({
    gate,
    workers,
    pool,
    log: silent,
    nowNs: () => NOW,
    ...(o.observer ? { observer: o.observer } : {}),
  });
  const app = createQueryApp({
    service,
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve(null) },
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: null },
      protectMetrics: true,
    }),
    mcpEnabled: true,
    maxRows: 10_000,
    version: 'test',
  });
  return { app, gate, pool, timers, close: () => workers.close() };
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

async function query(h: Harness, tenant: string, statement: string, signal?: AbortSignal): Promise<Answer> {
  const request = new Request('http://sluice.test/v1/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': tenant },
    body: JSON.stringify({ query: statement }),
    ...(signal ? { signal } : {}),
  });
  const res = await h.app.request(request);
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text === '' ? null : JSON.parse(text) };
}

let rpcId = 0;
/** An MCP `tools/call` of `query_logs` over the streamable HTTP endpoint (stateless, JSON response). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function mcpQuery(h: Harness, tenant: string, statement: string): Promise<any> {
  const res = await h.app.request('/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'X-Sluice-Tenant': tenant,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++rpcId,
      method: 'tools/call',
      params: { name: 'query_logs', arguments: { tenant, query: statement } },
    }),
  });
  assert.equal(res.status, 200, 'a tool error is a JSON-RPC error, never a transport failure');
  return res.json();
}

function kindOf(a: Answer): string | undefined {
  return (a.json as { error?: { kind?: string } } | null)?.error?.kind;
}

/** Yields to the event loop until `cond` holds (waits for an observable state, never for a duration). */
async function until(cond: () => boolean, what: string, maxTurns = 200_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never observed: ${what}`);
}

/** A few event-loop turns, so any settled promise chain has run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

function tracked<T>(p: Promise<T>): { promise: Promise<T>; readonly done: boolean } {
  const state = { done: false, promise: p };
  void p.finally(() => (state.done = true));
  return state;
}

// ---------------------------------------------------------------------------------------------------------------
// RFC0058.5

describe('RFC0058.5: admission waits, then rejects', () => {
  test('RFC0058.5: with A holding the only permit, C is 503 query_queue_full at once and B is 503 query_queue_timeout when 200 ms of paused time pass; no Retry-After', async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 200, workers });
    const a = query(h, 'acme', SMALL);
    await until(() => workers.calls.length === 1, 'A running');
    assert.equal(h.gate.inFlight(), 1);
    const b = tracked(query(h, 'acme', SMALL));
    await until(() => h.gate.queueDepth() === 1, 'B waiting');
    const c = await query(h, 'acme', SMALL);
    assert.equal(c.status, 503);
    assert.equal(kindOf(c), 'query_queue_full');
    assert.equal(c.headers.get('retry-after'), null, 'no Retry-After on query_queue_full');
    assert.equal(h.gate.queueDepth(), 1, 'B still waits');
    h.timers.advance(199);
    await settle();
    assert.equal(b.done, false, 'B is not rejected before queue_timeout_ms');
    h.timers.advance(1);
    const bAnswer = await b.promise;
    assert.equal(bAnswer.status, 503);
    assert.equal(kindOf(bAnswer), 'query_queue_timeout');
    assert.match(bAnswer.json.error.message, /waited 200 ms/);
    assert.equal(bAnswer.headers.get('retry-after'), null, 'no Retry-After on query_queue_timeout');
    assert.equal(workers.calls.length, 1, 'neither B nor C ever ran');
    workers.calls[0]?.finish();
    assert.equal((await a).status, 200);
    await settle();
    assert.equal(h.gate.inFlight(), 0);
    assert.equal(h.gate.queueDepth(), 0);
  });

  test('RFC0058.5: with a long timeout, B and a later D (arriving after B is observed waiting) are admitted in FIFO order when A finishes', async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, maxQueued: 2, queueTimeoutMs: 10_000, workers });
    const a = query(h, 'a', SMALL);
    await until(() => workers.calls.length === 1, 'A running');
    const b = query(h, 'b', SMALL);
    await until(() => h.gate.queueDepth() === 1, 'B waiting');
    const d = query(h, 'd', SMALL);
    await until(() => h.gate.queueDepth() === 2, 'D waiting');
    workers.calls[0]?.finish();
    await until(() => workers.calls.length === 2, 'next admitted');
    assert.equal(workers.calls[1]?.tenant, 'b', 'B is admitted first');
    assert.equal(h.gate.queueDepth(), 1, 'D still waits while B runs');
    workers.calls[1]?.finish();
    await until(() => workers.calls.length === 3, 'D admitted');
    assert.equal(workers.calls[2]?.tenant, 'd');
    workers.calls[2]?.finish();
    const answers = await Promise.all([a, b, d]);
    assert.deepEqual(
      answers.map((x) => x.status),
      [200, 200, 200],
    );
    assert.deepEqual(
      answers.map((x) => x.json.tenant),
      ['a', 'b', 'd'],
    );
    await settle();
    assert.equal(h.gate.inFlight(), 0);
  });

  test("RFC0058.5: a waiting query whose client disconnects leaves the queue, and A's permit is released when A's client goes away mid-execution", async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 10_000, workers });
    const aClient = new AbortController();
    const a = query(h, 'a', SMALL, aClient.signal);
    await until(() => workers.calls.length === 1, 'A running');
    const bClient = new AbortController();
    const b = query(h, 'b', SMALL, bClient.signal);
    await until(() => h.gate.queueDepth() === 1, 'B waiting');
    bClient.abort();
    await until(() => h.gate.queueDepth() === 0, 'B left the queue');
    assert.equal((await b).status, 499, 'the disconnected client gets no error body');
    // The freed slot is usable: C queues where B was (queue_full would mean the slot leaked).
    const c = query(h, 'c', SMALL);
    await until(() => h.gate.queueDepth() === 1, 'C waiting in the freed slot');
    aClient.abort(); // the worker reports cancelled; the service releases A's permit
    assert.equal((await a).status, 499);
    await until(() => workers.calls.length === 2, "C admitted on A's released permit");
    assert.equal(workers.calls[1]?.tenant, 'c');
    workers.calls[1]?.finish();
    assert.equal((await c).status, 200);
    await settle();
    assert.equal(h.gate.inFlight(), 0);
    assert.equal(h.gate.queueDepth(), 0);
  });

  test('RFC0058.5: the same gate applies to an MCP query_logs call: -32603 with data.kind query_queue_full', async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, maxQueued: 1, queueTimeoutMs: 10_000, workers });
    const a = query(h, 'acme', SMALL);
    await until(() => workers.calls.length === 1, 'A running');
    const b = query(h, 'acme', SMALL);
    await until(() => h.gate.queueDepth() === 1, 'B waiting');
    const rpc = await mcpQuery(h, 'acme', SMALL);
    assert.equal(rpc.error?.code, -32603, JSON.stringify(rpc));
    assert.deepEqual(rpc.error?.data, {
      kind: 'query_queue_full',
      limit: 'querier.limits.max_queued_queries',
      value: null,
      ceiling: 1,
      retryable: true,
    });
    assert.match(rpc.error?.message ?? '', /querier\.limits\.max_queued_queries/);
    workers.autoFinish = true;
    workers.calls[0]?.finish();
    assert.equal((await a).status, 200);
    assert.equal((await b).status, 200);
    // With the permit free, the MCP call is admitted through the same gate.
    const ok = await mcpQuery(h, 'acme', SMALL);
    assert.equal(ok.error, undefined, JSON.stringify(ok));
    assert.equal(ok.result?.content?.[0]?.text, '{"tenant":"acme"}');
    await settle();
    assert.equal(h.gate.inFlight(), 0);
  });

  test('RFC0058.5: 32 concurrent arrivals against one held permit with max_queued_queries = 4 → exactly 4 waiters and 28 query_queue_full; depth and in-flight return to 0', async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, maxQueued: 4, queueTimeoutMs: 10_000, workers });
    const a = query(h, 'holder', SMALL);
    await until(() => workers.calls.length === 1, 'A running');
    const arrivals = Array.from({ length: 32 }, (_, i) => tracked(query(h, `t${i}`, SMALL)));
    await until(() => arrivals.filter((x) => x.done).length === 28, '28 arrivals answered');
    await settle();
    assert.equal(arrivals.filter((x) => x.done).length, 28, 'the other 4 still wait');
    assert.equal(h.gate.queueDepth(), 4);
    const early = await Promise.all(arrivals.filter((x) => x.done).map((x) => x.promise));
    assert.ok(early.every((x) => x.status === 503 && kindOf(x) === 'query_queue_full'));
    workers.autoFinish = true;
    workers.calls[0]?.finish();
    const all = await Promise.all(arrivals.map((x) => x.promise));
    assert.equal((await a).status, 200);
    assert.equal(all.filter((x) => x.status === 200).length, 4);
    assert.equal(all.filter((x) => kindOf(x) === 'query_queue_full').length, 28);
    assert.equal(workers.calls.length, 5);
    await settle();
    assert.equal(h.gate.queueDepth(), 0);
    assert.equal(h.gate.inFlight(), 0);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// RFC0058.7 (querier level)

describe('RFC0058.7: the permit and the reservation are held until the response body has been sent', () => {
  test(
    'RFC0058.7: with max_concurrent_queries = 1, a second query waits while the first ~25 MB response is unread, and the pool holds the body meanwhile',
    { timeout: 60_000 },
    async () => {
      const h = harness({ maxConcurrent: 1, maxQueued: 4, queueTimeoutMs: 10_000, poolBytes: 512 << 20 });
      const server: ServerType = await new Promise((resolve) => {
        const s = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
      });
      const { port } = server.address() as AddressInfo;
      try {
        const payload = JSON.stringify({ query: `true | ${HOUR1} | limit ${BIG_ROWS}` });
        const socket = connect(port, '127.0.0.1');
        const head = await new Promise<string>((resolve, reject) => {
          socket.once('error', reject);
          socket.once('data', (chunk: Buffer) => {
            socket.pause(); // from here on the client reads nothing: the body cannot have been sent
            resolve(chunk.toString('latin1'));
          });
          socket.write(
            `POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Sluice-Tenant: big\r\n` +
              `Content-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
          );
        });
        assert.match(head, /^HTTP\/1\.1 200/);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? NaN);
        assert.ok(length > 20_000_000, `the body (${length} bytes) exceeds every socket buffer on the way`);
        assert.ok(
          nonCacheHeldBytes(h.pool) >= length,
          `the pool (${nonCacheHeldBytes(h.pool)}) includes the body's ${length} bytes`,
        );
        assert.equal(h.gate.inFlight(), 1, 'the permit is still held');

        const second = tracked(
          fetch(`http://127.0.0.1:${port}/v1/query`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': 'acme' },
            body: JSON.stringify({ query: SMALL }),
          }),
        );
        await until(() => h.gate.queueDepth() === 1, 'the second query waits for the permit');
        await settle();
        assert.equal(second.done, false);
        assert.ok(nonCacheHeldBytes(h.pool) >= length);

        let received = head.length;
        const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
        socket.on('data', (chunk: Buffer) => (received += chunk.length));
        socket.resume();
        await ended;
        assert.ok(received >= length, 'the client read the whole body');
        const res = await second.promise;
        assert.equal(res.status, 200, 'the second query runs once the first body has been sent');
        assert.equal(((await res.json()) as { rows: number }).rows, 500);
        await until(() => nonCacheHeldBytes(h.pool) === 0 && h.gate.inFlight() === 0, 'pool and permits released');
        socket.destroy();
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await h.close();
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// RFC0058.9

/** A reader collected by hand. */
class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * The same observer shape as apps/server's `createQueryObserver` (apps/server depends on this package, so a test
 * here cannot import it): one `sluice.query.duration` point per query, `error.type` on rejections.
 */
function queryObserver(provider: MeterProvider): QueryObserver {
  const m = createQueryMetrics(provider.getMeter('sluice'));
  return {
    finished(kind, seconds, errorKind, rowGroups) {
      m.duration.record(
        seconds,
        errorKind === null
          ? { [ATTR_SLUICE_QUERY_KIND]: kind }
          : { [ATTR_SLUICE_QUERY_KIND]: kind, [ATTR_ERROR_TYPE]: errorKind },
      );
      if (rowGroups !== null) {
        m.rowGroups.add(rowGroups.scanned, {
          [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: SLUICE_QUERY_ROW_GROUP_STATE_VALUE_SCANNED,
        });
        m.rowGroups.add(rowGroups.pruned, {
          [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: SLUICE_QUERY_ROW_GROUP_STATE_VALUE_PRUNED,
        });
      }
    },
  };
}

describe('RFC0058.9: telemetry is error.type on the existing histogram', () => {
  test(
    'RFC0058.9: each of the six rejections, over HTTP and over MCP, is exactly one sluice.query.duration point with its error.type, and nothing else',
    { timeout: 60_000 },
    async () => {
      const reader = new ManualReader();
      const provider = new MeterProvider({ readers: [reader] });
      const h = harness({
        maxConcurrent: 1,
        maxQueued: 1,
        queueTimeoutMs: 200,
        poolBytes: 4 << 20,
        limits: { maxFiles: 3, maxResultBytes: 20_000 },
        observer: queryObserver(provider),
      });
      const collect = async (): Promise<MetricData[]> =>
        (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
      /** Duration point counts keyed by `kind/error.type`. */
      const durationCounts = async (): Promise<Map<string, number>> => {
        const out = new Map<string, number>();
        for (const m of await collect()) {
          if (m.descriptor.name !== METRIC_SLUICE_QUERY_DURATION) continue;
          for (const p of m.dataPoints as DataPoint<Histogram>[]) {
            out.set(
              `${String(p.attributes[ATTR_SLUICE_QUERY_KIND])}/${String(p.attributes[ATTR_ERROR_TYPE] ?? '-')}`,
              p.value.count,
            );
          }
        }
        return out;
      };
      const exactlyOne = async (errorType: string, trigger: () => Promise<void>): Promise<void> => {
        const before = await durationCounts();
        await trigger();
        const afterCounts = await durationCounts();
        const diff: Record<string, number> = {};
        for (const [k, v] of afterCounts) if (v !== (before.get(k) ?? 0)) diff[k] = v - (before.get(k) ?? 0);
        assert.deepEqual(diff, { [`logs/${errorType}`]: 1 }, `one point for ${errorType}`);
      };
      type Surface = 'http' | 'mcp';
      /** Runs `statement` on `surface` and checks the rejection kind (HTTP body kind / MCP data.kind). */
      const rejected = async (surface: Surface, tenant: string, statement: string, kind: string): Promise<void> => {
        const askForLess = ['query_memory_limit', 'query_file_limit', 'query_result_limit'].includes(kind);
        if (surface === 'http') {
          const a = await query(h, tenant, statement);
          assert.equal(kindOf(a), kind, JSON.stringify(a.json));
          assert.equal(a.status, askForLess ? 422 : 503);
          // The details: the limit's key, and whether retrying unchanged can help.
          assert.match(a.json.error.limit, /^querier\.limits\./);
          assert.equal(a.json.error.retryable, !askForLess);
        } else {
          const rpc = await mcpQuery(h, tenant, statement);
          const { kind: dataKind, limit, retryable } = rpc.error?.data ?? {};
          assert.deepEqual({ kind: dataKind, retryable }, { kind, retryable: !askForLess }, JSON.stringify(rpc));
          assert.match(limit, /^querier\.limits\./);
          assert.equal(
            rpc.error?.code,
            askForLess ? -32600 : -32603,
            'invalid_request for ask-for-less, internal_error for overload',
          );
        }
      };
      const start = (surface: Surface, statement: string): Promise<unknown> =>
        surface === 'http' ? query(h, 'acme', statement) : mcpQuery(h, 'acme', statement);
      try {
        for (const surface of ['http', 'mcp'] as const) {
          await exactlyOne('query_file_limit', () =>
            rejected(surface, 'acme', `true | ${HOURS2} | count`, 'query_file_limit'),
          );
          await exactlyOne('query_result_limit', () =>
            rejected(surface, 'acme', `true | ${HOUR1} | limit 1000`, 'query_result_limit'),
          );
          await exactlyOne('query_memory_limit', () =>
            // Sorted, so every wide body is decoded (an unsorted limit decodes only the pages it renders).
            rejected(surface, 'wide', `true | ${HOUR1} | sort ts asc | limit 10`, 'query_memory_limit'),
          );
          const hog = h.pool.createQuery('hog');
          assert.equal(hog.tryGrow(h.pool.size - 32 * 1024).status, 'ok');
          await exactlyOne('query_memory_contended', () => rejected(surface, 'acme', SMALL, 'query_memory_contended'));
          hog.releaseAll();
          // Admission: the test holds the only permit itself.
          const held = await h.gate.acquire();
          assert.equal(held.status, 'admitted');
          let waiting: Promise<unknown> = Promise.resolve();
          await exactlyOne('query_queue_full', async () => {
            waiting = start(surface, SMALL);
            await until(() => h.gate.queueDepth() === 1, 'a waiter');
            await rejected(surface, 'acme', SMALL, 'query_queue_full');
          });
          await exactlyOne('query_queue_timeout', async () => {
            h.timers.advance(200);
            const answer = await waiting;
            if (surface === 'http') assert.equal(kindOf(answer as Answer), 'query_queue_timeout');
            else
              assert.deepEqual((answer as { error?: { data?: unknown } }).error?.data, {
                kind: 'query_queue_timeout',
                limit: 'querier.limits.queue_timeout_ms',
                value: 200,
                ceiling: 200,
                retryable: true,
              });
          });
          if (held.status === 'admitted') held.permit.release();
          assert.equal(nonCacheHeldBytes(h.pool), 0);
        }
        const final = await durationCounts();
        assert.deepEqual(
          Object.fromEntries([...final].sort()),
          Object.fromEntries(
            [
              'query_file_limit',
              'query_memory_contended',
              'query_memory_limit',
              'query_queue_full',
              'query_queue_timeout',
              'query_result_limit',
            ].map((k) => [`logs/${k}`, 2]),
          ),
          'two points per error.type (HTTP + MCP), no unlabelled point',
        );
        // No other metric carries anything for a rejection: only the pre-seeded row-group zeros exist besides.
        for (const m of await collect()) {
          if (m.descriptor.name === METRIC_SLUICE_QUERY_DURATION) continue;
          for (const p of m.dataPoints)
            assert.equal(p.value, 0, `${m.descriptor.name} recorded nothing for rejections`);
        }
      } finally {
        await h.close();
        await provider.shutdown();
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------------------------
// Worker backstop

describe('worker backstop (defence in depth behind the pool)', () => {
  test(
    'a worker that dies mid-query fails only that query with a typed error, its reservations are released via releaseThread, and the next query runs on the replacement',
    { timeout: 60_000 },
    async () => {
      const releasedByThread: number[] = [];
      const deaths: { threadId: number; queryId: string | null; reason: string }[] = [];
      const h = harness({
        maxConcurrent: 1,
        workerUrl: new URL('./testing/dying-query-worker.js', import.meta.url),
        onWorkerDeath: (info) => deaths.push(info),
        wrapPool: (pool) => ({
          size: pool.size,
          maxQueries: pool.maxQueries,
          shared: pool.shared,
          reserved: () => pool.reserved(),
          peakReserved: () => pool.peakReserved(),
          available: () => pool.available(),
          createQuery: (id) => pool.createQuery(id),
          consumers: () => pool.consumers(),
          topConsumers: (n) => pool.topConsumers(n),
          releaseQuery: (id) => pool.releaseQuery(id),
          fenceThread: (id) => pool.fenceThread(id),
          repairTotal: () => pool.repairTotal(),
          releaseThread: (id) => {
            const bytes = pool.releaseThread(id);
            releasedByThread.push(bytes);
            return bytes;
          },
        }),
      });
      try {
        const before = await query(h, 'acme', SMALL);
        assert.equal(before.status, 200, 'the wrapped worker serves ordinary queries');
        const dead = await query(h, 'die', SMALL);
        assert.equal(dead.status, 500);
        assert.deepEqual(dead.json, {
          error: { kind: 'internal', message: 'the query worker failed while running this query', retryable: false },
        });
        assert.equal(deaths.length, 1);
        assert.match(deaths[0]?.queryId ?? '', /^q\d+-\d+$/, 'the death is attributed to the running query');
        assert.equal(releasedByThread.length, 1);
        assert.ok(
          (releasedByThread[0] ?? 0) >= DYING_EXTRA_BYTES,
          `releaseThread gave back what the dead thread held (${releasedByThread[0]} bytes)`,
        );
        assert.equal(nonCacheHeldBytes(h.pool), 0, 'the pool reads 0 after the death');
        assert.equal(h.gate.inFlight(), 0, 'the permit was released');
        const next = await query(h, 'acme', SMALL);
        assert.equal(next.status, 200, 'the next query succeeds on the replacement worker');
        assert.deepEqual(next.json, before.json);
        await until(() => nonCacheHeldBytes(h.pool) === 0, 'pool 0');
      } finally {
        await h.close();
      }
    },
  );
  test(
    'a worker that exhausts its V8 heap fails only that query as query_memory_limit (422), gives its bytes back, and is replaced',
    { timeout: 60_000 },
    async () => {
      const deaths: { threadId: number; queryId: string | null; reason: string }[] = [];
      const h = harness({
        maxConcurrent: 1,
        maxOldGenerationSizeMb: 48,
        workerUrl: new URL('./testing/exhausting-query-worker.js', import.meta.url),
        onWorkerDeath: (info) => deaths.push(info),
      });
      try {
        const before = await query(h, 'acme', SMALL);
        assert.equal(before.status, 200, 'a 48 MiB worker serves an ordinary query');
        const dead = await query(h, 'exhaust', SMALL);
        assert.equal(dead.status, 422);
        assert.equal(dead.json.error.kind, 'query_memory_limit');
        assert.match(dead.json.error.message, /query-worker heap .*querier\.limits\.memory_pool_bytes/);
        assert.equal(dead.headers.get('retry-after'), null);
        assert.deepEqual(
          deaths.map((d) => d.reason),
          ['out_of_memory'],
        );
        assert.equal(nonCacheHeldBytes(h.pool), 0, "the dead thread's reservations went back to the pool");
        assert.equal(h.gate.inFlight(), 0, 'the permit was released');
        const next = await query(h, 'acme', SMALL);
        assert.equal(next.status, 200, 'the replacement worker serves the next query');
        assert.deepEqual(next.json, before.json);
        await until(() => nonCacheHeldBytes(h.pool) === 0, 'pool 0');
        await h.close();
        assert.deepEqual(
          deaths.map((d) => d.reason),
          ['out_of_memory'],
          'closing the pool terminates its workers without reporting deaths',
        );
      } finally {
        await h.close();
      }
    },
  );
});
