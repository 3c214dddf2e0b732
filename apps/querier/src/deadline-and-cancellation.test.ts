/**
 * @module deadline-and-cancellation.test
 * Time governed like memory (docs/design/query-governance.md, "Deadlines and cancellation"), at the querier level:
 * the hono app over a real query service and admission gate.
 *
 * - The 422/503 rule of a deadline, the request's shorter deadline (never a longer one) and its validation run on
 *   paused time with a test worker pool whose jobs block until stopped: no leg depends on timing luck.
 * - The backstop runs real query workers: a worker that spins without yielding (as a backtracking regex does) is
 *   terminated at its deadline or its client's disconnect, replaced, and its permit and reservations go back.
 * - A client that disconnects over a real socket while its scan is held at a storage read stops its query
 *   cooperatively; the permit and the pool are back within 100 ms and the same worker serves the next query.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { LogRecord } from '@sluice/core';
import { createAccessGate } from '@sluice/edge';
import { createAdmissionGate, createMemoryPool, type AdmissionGate, type MemoryPool } from '@sluice/limits';
import { ManualTimers } from '@sluice/limits/testing';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type StoredLogRow } from '@sluice/storage';
import { createLogger } from '@sluice/telemetry';
import { createQueryApp } from './query-app.js';
import { createQueryService } from './query-service.js';
import { createWorkerPool, type JobResult, type WorkerPool } from './worker-pool.js';

/** 2026-06-01T00:00:00Z in ns. */
const T0 = 1_780_272_000_000_000_000n;
const H = 3_600_000_000_000n;
const NOW = T0 + 2n * H;
const WINDOW = 'range(2026-06-01T00:00:00Z, 2026-06-01T01:00:00Z)';
const COUNT = `true | ${WINDOW} | count`;
const silent = createLogger('test', { write: () => {} });

let dir = '';

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
    resource: { attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
    scope: { name: 'test', version: '1', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
  };
  return {
    tenantId: tenant,
    record,
    mined: { templateId: 1n, templateVersion: 1, params: [], confidence: 1, lossy: false },
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'querier-deadline-'));
  const store = createLocalObjectStore({ root: dir });
  for (const tenant of ['acme', 'gated']) {
    const rows = Array.from({ length: 300 }, (_, i) => row(tenant, T0 + BigInt(i) * 1_000_000_000n, `line ${i}`));
    await store.put(dataFileKey(tenant, T0, uuidv7()), await encodeLogsParquet(rows, { rowGroupRows: 100 }));
  }
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A worker pool whose jobs block until the test finishes them or the service stops them. */
class BlockingWorkers implements WorkerPool {
  readonly calls: { tenant: string; finish(): void; stopped: boolean }[] = [];
  run(
    _id: string,
    tenant: string,
    _nowNs: bigint,
    _job: unknown,
    signal?: AbortSignal,
    onDispatch?: () => void,
  ): Promise<JobResult> {
    onDispatch?.();
    return new Promise<JobResult>((resolve) => {
      const call = {
        tenant,
        stopped: false,
        finish: () =>
          resolve({
            status: 'ok',
            body: new TextEncoder().encode(`{"tenant":"${tenant}"}`),
            rows: 0,
            rowGroupsScanned: 0,
            rowGroupsPruned: 0,
            peakBytes: 0,
          }),
      };
      signal?.addEventListener(
        'abort',
        () => {
          call.stopped = true;
          resolve({ status: 'cancelled' });
        },
        { once: true },
      );
      this.calls.push(call);
    });
  }
  async close(): Promise<void> {}
}

interface Harness {
  readonly app: ReturnType<typeof createQueryApp>;
  readonly gate: AdmissionGate;
  readonly pool: MemoryPool;
  readonly deaths: string[];
  close(): Promise<void>;
}

interface HarnessOptions {
  readonly maxConcurrent: number;
  readonly queryTimeoutMs: number;
  /** A test worker pool; default real workers running `workerScript`. */
  readonly workers?: WorkerPool;
  readonly workerScript?: string;
  readonly timers?: ManualTimers;
}

function harness(o: HarnessOptions): Harness {
  const gate = createAdmissionGate({
    maxConcurrent: o.maxConcurrent,
    maxQueued: 4,
    queueTimeoutMs: 10_000,
    ...(o.timers ? { timers: o.timers, now: o.timers.now } : {}),
  });
  const pool = createMemoryPool({ sizeBytes: 64 << 20 });
  const deaths: string[] = [];
  const workers =
    o.workers ??
    createWorkerPool({
      size: o.maxConcurrent,
      pool,
      maxOldGenerationSizeMb: 256,
      ...(o.workerScript ? { workerUrl: new URL(o.workerScript, import.meta.url) } : {}),
      onWorkerDeath: (info) => deaths.push(info.reason),
      data: {
        pool: pool.shared,
        storage: { backend: 'local', root: dir },
        defaultWindowSecs: 3600,
        recycleBytes: 1 << 30,
        heapSlackBytes: 64 << 20,
        maxQueryBytes: 32 << 20,
        limits: { defaultRows: 1000, maxRows: 10_000, maxListedObjects: 1000, maxFiles: 1000, maxResultBytes: 1 << 24 },
      },
    });
  const service = createQueryService({
    gate,
    workers,
    pool,
    log: silent,
    nowNs: () => NOW,
    queryTimeoutMs: o.queryTimeoutMs,
    ...(o.timers ? { timers: o.timers, now: o.timers.now } : {}),
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
  return { app, gate, pool, deaths, close: () => workers.close() };
}

interface Answer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

async function query(
  h: Harness,
  tenant: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await h.app.request('/v1/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': tenant, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

/** Yields to the event loop until `cond` holds (waits for an observable state, never for a duration). */
async function until(cond: () => boolean, what: string, maxTurns = 200_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never observed: ${what}`);
}

/** Polls `cond` on real time (for real worker threads), failing after `ms`. */
async function within(ms: number, cond: () => boolean, what: string): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (cond()) return performance.now() - start;
    if (performance.now() - start > ms) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function tracked<T>(p: Promise<T>): { readonly promise: Promise<T>; readonly done: boolean } {
  const state = { done: false, promise: p };
  void p.then(() => (state.done = true));
  return state;
}

describe('the deadline: 422 when the query alone is too slow, 503 when others ran beside it', () => {
  test('a lone query past query_timeout_ms is stopped and answered 422 query_time_limit with its details', async () => {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 2, queryTimeoutMs: 1000, workers, timers });
    const a = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 1, 'A running');
    timers.advance(999);
    await until(() => h.gate.inFlight() === 1, 'A still running');
    assert.equal(a.done, false, 'not stopped before the deadline');
    timers.advance(1);
    const answer = await a.promise;
    assert.equal(answer.status, 422);
    assert.deepEqual(
      { ...answer.json.error, message: undefined },
      {
        kind: 'query_time_limit',
        message: undefined,
        limit: 'querier.limits.query_timeout_ms',
        value: 1000,
        ceiling: 1000,
        retryable: false,
      },
    );
    assert.match(answer.json.error.message, /querier\.limits\.query_timeout_ms/);
    assert.equal(workers.calls[0]?.stopped, true, 'the job was told to stop');
    assert.equal(h.gate.inFlight(), 0, 'the permit is free');
  });

  test('a query overlapped by a concurrent hog is answered 503 query_time_contended, and the hog still completes', async () => {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 2, queryTimeoutMs: 1000, workers, timers });
    const a = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 1, 'A running');
    timers.advance(500);
    const hog = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 2, 'the hog running beside A');
    timers.advance(500);
    const answer = await a.promise;
    assert.equal(answer.status, 503);
    assert.equal(answer.json.error.kind, 'query_time_contended');
    assert.equal(answer.json.error.retryable, true);
    assert.equal(hog.done, false, "the hog's own deadline is later");
    workers.calls[1]?.finish();
    assert.equal((await hog.promise).status, 200);
    assert.equal(h.gate.inFlight(), 0);
  });

  test('overlap at any moment counts: a query whose neighbour finished long before its deadline is still 503', async () => {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 2, queryTimeoutMs: 1000, workers, timers });
    const a = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 1, 'A running');
    const b = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 2, 'B running');
    workers.calls[1]?.finish();
    assert.equal((await b.promise).status, 200);
    timers.advance(1000);
    assert.equal((await a.promise).json.error.kind, 'query_time_contended');
  });
});

describe("the request's own deadline shortens query_timeout_ms, never lengthens it", () => {
  const cases: Array<{ name: string; body: Record<string, unknown>; headers?: Record<string, string>; at: number }> = [
    {
      name: 'header X-Sluice-Query-Timeout-Ms: 200',
      body: { query: COUNT },
      headers: { 'X-Sluice-Query-Timeout-Ms': '200' },
      at: 200,
    },
    { name: 'body timeout_ms 300', body: { query: COUNT, timeout_ms: 300 }, at: 300 },
    {
      name: 'both: the smaller (body 300, header 500)',
      body: { query: COUNT, timeout_ms: 300 },
      headers: { 'X-Sluice-Query-Timeout-Ms': '500' },
      at: 300,
    },
    {
      name: 'header 5000 above the configured 1000: the configured one',
      body: { query: COUNT },
      headers: { 'X-Sluice-Query-Timeout-Ms': '5000' },
      at: 1000,
    },
    { name: 'body timeout_ms 99999: the configured one', body: { query: COUNT, timeout_ms: 99_999 }, at: 1000 },
  ];
  for (const c of cases) {
    test(`${c.name} → stopped at ${c.at} ms`, async () => {
      const timers = new ManualTimers();
      const workers = new BlockingWorkers();
      const h = harness({ maxConcurrent: 1, queryTimeoutMs: 1000, workers, timers });
      const a = tracked(query(h, 'acme', c.body, c.headers));
      await until(() => workers.calls.length === 1, 'running');
      timers.advance(c.at - 1);
      await until(() => h.gate.inFlight() === 1, 'still running');
      assert.equal(a.done, false, `not stopped before ${c.at} ms`);
      timers.advance(1);
      const answer = await a.promise;
      assert.equal(answer.status, 422);
      assert.equal(answer.json.error.kind, 'query_time_limit');
      assert.equal(answer.json.error.ceiling, c.at);
      if (c.at < 1000) assert.match(answer.json.error.message, /timeout_ms|X-Sluice-Query-Timeout-Ms/);
    });
  }

  for (const [value, where] of [
    ['0', 'header'],
    ['soon', 'header'],
    ['-1', 'header'],
    ['1.5', 'header'],
  ] as const) {
    test(`an invalid ${where} value ${JSON.stringify(value)} is a 400 naming it`, async () => {
      const h = harness({ maxConcurrent: 1, queryTimeoutMs: 1000, workers: new BlockingWorkers() });
      const answer = await query(h, 'acme', { query: COUNT }, { 'X-Sluice-Query-Timeout-Ms': value });
      assert.equal(answer.status, 400);
      assert.equal(answer.json.error.kind, 'invalid_query');
      assert.match(answer.json.error.message, /X-Sluice-Query-Timeout-Ms must be an integer/);
    });
  }

  test('with query_timeout_ms 0 (no deadline) a request may still set one', async () => {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 0, workers, timers });
    const a = tracked(query(h, 'acme', { query: COUNT, timeout_ms: 50 }));
    await until(() => workers.calls.length === 1, 'running');
    timers.advance(50);
    assert.equal((await a.promise).json.error.kind, 'query_time_limit');
    const b = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 2, 'running');
    assert.equal(timers.pending(), 0, 'no deadline armed without one');
    workers.calls[1]?.finish();
    assert.equal((await b.promise).status, 200);
  });
});

describe('the backstop: a worker that does not yield is terminated and replaced', () => {
  test('four spinning queries are answered typed within the deadline + 1 s; then true | count is served, the pool reads 0 and every permit is free', async () => {
    const h = harness({ maxConcurrent: 4, queryTimeoutMs: 300, workerScript: './testing/spinning-query-worker.js' });
    try {
      // Every worker started and warm first: the deadline is measured on queries, not on thread start-up.
      await Promise.all(Array.from({ length: 4 }, () => query(h, 'acme', { query: COUNT })));
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const answer = await query(h, 'spin', { query: COUNT });
          return { answer, ms: performance.now() - started };
        }),
      );
      for (const { answer, ms } of answers) {
        assert.equal(answer.status, 503, JSON.stringify(answer.json));
        assert.equal(answer.json.error.kind, 'query_time_contended', 'four ran at once');
        assert.ok(ms <= 300 + 1000, `answered after ${Math.round(ms)} ms`);
      }
      assert.equal(h.gate.inFlight(), 0, 'every permit is free');
      assert.equal(h.pool.reserved(), 0, 'what the spinning threads held went back with them');
      const served = await query(h, 'acme', { query: COUNT });
      assert.equal(served.status, 200, JSON.stringify(served.json));
      assert.equal(served.json.aggregate?.rows?.[0]?.count ?? served.json.rows, served.json.rows);
      assert.deepEqual(h.deaths, ['stopped', 'stopped', 'stopped', 'stopped']);
      await within(5000, () => h.pool.reserved() === 0 && h.gate.inFlight() === 0, 'all released after serving');
    } finally {
      await h.close();
    }
  });

  test('a lone spinning query is 422 query_time_limit', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 200, workerScript: './testing/spinning-query-worker.js' });
    try {
      const answer = await query(h, 'spin', { query: COUNT });
      assert.equal(answer.status, 422);
      assert.equal(answer.json.error.kind, 'query_time_limit');
      assert.equal(h.pool.reserved(), 0);
      assert.equal((await query(h, 'acme', { query: COUNT })).status, 200, 'the replacement worker serves');
    } finally {
      await h.close();
    }
  });
});

describe('cancellation that stops work', () => {
  /** Starts the app on a loopback port; a raw request whose socket the test destroys mid-execution. */
  async function listen(h: Harness): Promise<{ port: number; stop(): Promise<void> }> {
    const server: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    return {
      port: (server.address() as AddressInfo).port,
      stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  function openQuery(port: number, tenant: string): { destroy(): void } {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/query',
      headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': tenant },
    });
    req.on('error', () => {});
    req.end(JSON.stringify({ query: COUNT }));
    return { destroy: () => req.destroy() };
  }

  test('a client that disconnects while its scan is held at a read: permit and pool back within 100 ms, the same worker serves the next query at once', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, workerScript: './testing/gated-query-worker.js' });
    const http = await listen(h);
    try {
      const client = openQuery(http.port, 'gated');
      await within(5000, () => h.gate.inFlight() === 1 && h.pool.consumers().length === 1, 'the query executing');
      client.destroy();
      const ms = await within(2000, () => h.gate.inFlight() === 0 && h.pool.reserved() === 0, 'released');
      assert.ok(ms <= 100, `permit and pool released ${ms.toFixed(1)} ms after the close`);
      assert.equal(h.pool.consumers().length, 0);
      const next = await query(h, 'acme', { query: COUNT });
      assert.equal(next.status, 200);
      assert.deepEqual(h.deaths, [], 'the worker yielded: no termination, no replacement');
    } finally {
      await http.stop();
      await h.close();
    }
  });

  test('a client that disconnects from a query that does not yield: the worker is terminated after the grace and replaced', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, workerScript: './testing/spinning-query-worker.js' });
    const http = await listen(h);
    try {
      const client = openQuery(http.port, 'spin');
      await within(5000, () => h.pool.reserved() > 0, 'the query holding its bytes');
      client.destroy();
      const ms = await within(2000, () => h.gate.inFlight() === 0 && h.pool.reserved() === 0, 'released');
      assert.ok(ms <= 1000, `released ${ms.toFixed(1)} ms after the close`);
      assert.deepEqual(h.deaths, ['stopped']);
      assert.equal((await query(h, 'acme', { query: COUNT })).status, 200);
    } finally {
      await http.stop();
      await h.close();
    }
  });
});
