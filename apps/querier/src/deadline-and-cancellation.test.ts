/**
 * @module deadline-and-cancellation.test
 * Time governed like memory (docs/design/query-governance.md, "Deadlines and cancellation"), at the querier level:
 * the hono app over a real query service and admission gate (testing/query-harness.ts).
 *
 * - The 422/503 rule of a deadline, the request's shorter deadline (never a longer one) and its validation run on
 *   paused time with a test worker pool whose jobs block until stopped: no leg depends on timing luck.
 * - The backstop runs real query workers: a worker that spins without yielding (as a backtracking regex does) is
 *   terminated at its deadline or its client's disconnect, replaced, and its permit and reservations go back.
 * - A client that disconnects over a real socket while its scan is held at a storage read stops its query
 *   cooperatively; the permit and the pool are back within 100 ms and the same worker serves the next query.
 * - MCP: a tool's `timeout_ms`, and a cancellation that arrives on another request (stateless mode).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAdmissionGate, createMemoryPool, type MemoryPool } from '@sluice/limits';
import { ManualTimers } from '@sluice/limits/testing';
import { parseQuery } from '@sluice/query';
import { createLogger } from '@sluice/telemetry';
import { createQueryService } from './query-service.js';
import {
  BlockingWorkers,
  COUNT,
  WINDOW,
  createStoreFixture,
  harness as makeHarness,
  query,
  rpc,
  tracked,
  until,
  within,
  type Harness,
  type HarnessOptions,
} from './testing/query-harness.js';
import { nonCacheHeldBytes } from './worker-footer-cache.js';

let fixture: { readonly dir: string; remove(): Promise<void> };
before(async () => {
  // Tenant `redos`: lines of forty `a`s ending in `!`, on which a backtracking `(a+)+$` never returns.
  fixture = await createStoreFixture(['acme', 'gated', 'redos'], 300, (i, tenant) =>
    tenant === 'redos' ? `${'a'.repeat(40)}!` : `line ${i}`,
  );
});
after(async () => {
  await fixture.remove();
});

const harness = (o: Omit<HarnessOptions, 'dir'>): Harness => makeHarness({ ...o, dir: fixture.dir });
const silentLog = createLogger('test', { write: () => {} });

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

describe('the deadline: a query that starts beside another counts as overlapped', () => {
  test('B starts while A runs, A finishes, then B reaches its deadline: 503 query_time_contended', async () => {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 2, queryTimeoutMs: 1000, workers, timers });
    const a = query(h, 'acme', { query: COUNT });
    await until(() => workers.calls.length === 1, 'A running');
    const b = tracked(query(h, 'acme', { query: COUNT }));
    await until(() => workers.calls.length === 2, 'B running beside A');
    workers.calls[0]?.finish();
    assert.equal((await a).status, 200);
    timers.advance(1000);
    assert.equal((await b.promise).json.error.kind, 'query_time_contended');
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
    ['3000000000', 'header'],
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

describe('an answer that races its client disconnect', () => {
  test('the service: a job that finishes ok after its client went away is cancelled, and its permit and bytes are released', async () => {
    const workers = new BlockingWorkers();
    workers.ignoreStops = true;
    const gate = createAdmissionGate({ maxConcurrent: 1, maxQueued: 0, queueTimeoutMs: 1000 });
    const pool = createMemoryPool({ sizeBytes: 1 << 20 });
    const released: string[] = [];
    const watched: MemoryPool = { ...pool, releaseQuery: (id) => (released.push(id), pool.releaseQuery(id)) };
    const service = createQueryService({ gate, workers, pool: watched, log: silentLog, queryTimeoutMs: 30_000 });
    const parsed = parseQuery(COUNT);
    assert.ok(parsed.ok);
    const client = new AbortController();
    const outcome = service.run('acme', { kind: 'query', query: parsed.value }, { signal: client.signal });
    await until(() => workers.calls.length === 1, 'running');
    client.abort();
    workers.calls[0]?.finish(); // the answer was already on its way
    assert.equal((await outcome).status, 'cancelled', 'nobody will send it');
    assert.equal(gate.inFlight(), 0, 'the permit is free');
    assert.equal(released.length, 1, "the body's reservation is released");
  });

  test('HTTP: a client gone before its answer is ready holds nothing once the answer arrives', async () => {
    const workers = new BlockingWorkers();
    workers.ignoreStops = true;
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, workers });
    const server: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    try {
      const req = httpRequest({
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        method: 'POST',
        path: '/v1/query',
        headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': 'acme' },
      });
      req.on('error', () => {});
      req.end(JSON.stringify({ query: COUNT }));
      await within(5000, () => workers.calls.length === 1, 'running');
      req.destroy();
      await within(5000, () => workers.calls[0]?.stopped === true, 'the server saw the close');
      workers.calls[0]?.finish();
      await within(5000, () => h.gate.inFlight() === 0, 'the permit released');
      assert.equal(nonCacheHeldBytes(h.pool), 0);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('the backstop: a worker that does not yield is terminated and replaced', () => {
  test('four spinning queries are answered typed within the deadline + 1 s; then true | count is served, the pool reads 0 and every permit is free', async () => {
    // Paused time for the deadline: it fires once all four are seen spinning, so "four ran at once" does not
    // depend on how fast a loaded machine dispatches them. The stop grace and termination stay real.
    const timers = new ManualTimers();
    const h = harness({
      maxConcurrent: 4,
      queryTimeoutMs: 300,
      workerScript: './testing/spinning-query-worker.js',
      timers,
    });
    try {
      // Every worker started and warm first: the deadline is measured on queries, not on thread start-up.
      await Promise.all(Array.from({ length: 4 }, () => query(h, 'acme', { query: COUNT })));
      let started = 0;
      const answers = Promise.all(
        Array.from({ length: 4 }, async () => {
          const answer = await query(h, 'spin', { query: COUNT });
          return { answer, ms: performance.now() - started };
        }),
      );
      await within(
        10_000,
        () => h.pool.consumers().filter((c) => c.queryId.endsWith('-spin')).length === 4,
        'all four spinning',
      );
      started = performance.now();
      timers.advance(300);
      for (const { answer, ms } of await answers) {
        assert.equal(answer.status, 503, JSON.stringify(answer.json));
        assert.equal(answer.json.error.kind, 'query_time_contended', 'four ran at once');
        assert.ok(ms <= 1000, `answered ${Math.round(ms)} ms after the deadline`);
      }
      assert.equal(h.gate.inFlight(), 0, 'every permit is free');
      assert.equal(nonCacheHeldBytes(h.pool), 0, 'what the spinning threads held went back with them');
      const served = await query(h, 'acme', { query: COUNT });
      assert.equal(served.status, 200, JSON.stringify(served.json));
      assert.equal(served.json.aggregate?.rows?.[0]?.count ?? served.json.rows, served.json.rows);
      assert.deepEqual(h.deaths, ['stopped', 'stopped', 'stopped', 'stopped']);
      await within(
        5000,
        () => nonCacheHeldBytes(h.pool) === 0 && h.gate.inFlight() === 0,
        'all released after serving',
      );
    } finally {
      await h.close();
    }
  });

  test('a lone spinning query is 422 query_time_limit', async () => {
    // Paused time for the deadline, as above: it fires once the query is seen spinning, and the replacement
    // worker's start-up (slow on a loaded machine) is not raced against a 200 ms deadline.
    const timers = new ManualTimers();
    const h = harness({
      maxConcurrent: 1,
      queryTimeoutMs: 200,
      workerScript: './testing/spinning-query-worker.js',
      timers,
    });
    try {
      const pending = query(h, 'spin', { query: COUNT });
      await within(10_000, () => h.pool.consumers().some((c) => c.queryId.endsWith('-spin')), 'the query spinning');
      timers.advance(200);
      const answer = await pending;
      assert.equal(answer.status, 422, JSON.stringify(answer.json));
      assert.equal(answer.json.error.kind, 'query_time_limit');
      assert.equal(nonCacheHeldBytes(h.pool), 0);
      const served = await query(h, 'acme', { query: COUNT });
      assert.equal(served.status, 200, `the replacement worker serves: ${JSON.stringify(served.json)}`);
      assert.deepEqual(h.deaths, ['stopped']);
    } finally {
      await h.close();
    }
  });
});

describe('regular expressions run in linear time', () => {
  test('matches(body, "(a+)+$") over lines of forty a and a ! is answered 200 at once by a real worker', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000 });
    try {
      await query(h, 'acme', { query: COUNT }); // the worker started and warm
      const started = performance.now();
      const answer = await query(h, 'redos', { query: `matches(body, "(a+)+$") | ${WINDOW} | count` });
      const ms = performance.now() - started;
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      assert.equal(answer.json.rows, 0, 'no line ends in a');
      const matched = await query(h, 'redos', { query: `matches(body, "(a+)+!$") | ${WINDOW} | count` });
      assert.equal(matched.json.rows, 300);
      assert.ok(ms < 5000, `answered in ${ms.toFixed(0)} ms`);
      assert.deepEqual(h.deaths, [], 'no worker had to be stopped');
    } finally {
      await h.close();
    }
  });

  for (const [pattern, construct] of [
    ['(a)\\\\1', 'backreferences'],
    ['a(?=b)', 'lookahead'],
    ['(?<=a)b', 'lookbehind'],
  ] as const) {
    test(`an RE2-unsupported construct (${construct}) is a 400 naming it and its position`, async () => {
      const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, workers: new BlockingWorkers() });
      const answer = await query(h, 'acme', { query: `matches(body, "${pattern}") | count` });
      assert.equal(answer.status, 400);
      assert.equal(answer.json.error.kind, 'invalid_query');
      assert.match(answer.json.error.message, /at position \d+/);
      assert.match(answer.json.error.message, new RegExp(construct));
    });
  }
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
      const ms = await within(2000, () => h.gate.inFlight() === 0 && nonCacheHeldBytes(h.pool) === 0, 'released');
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
      await within(5000, () => nonCacheHeldBytes(h.pool) > 0, 'the query holding its bytes');
      client.destroy();
      const ms = await within(2000, () => h.gate.inFlight() === 0 && nonCacheHeldBytes(h.pool) === 0, 'released');
      assert.ok(ms <= 1000, `released ${ms.toFixed(1)} ms after the close`);
      assert.deepEqual(h.deaths, ['stopped']);
      assert.equal((await query(h, 'acme', { query: COUNT })).status, 200);
    } finally {
      await http.stop();
      await h.close();
    }
  });
});

describe('MCP: timeout_ms and cancellation', () => {
  test('query_logs with timeout_ms is stopped at that deadline: -32600 with data.kind query_time_limit and its details', async () => {
    const timers = new ManualTimers();
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 1000, workers, timers });
    const call = tracked(
      rpc(h, 'acme', {
        id: 7,
        method: 'tools/call',
        params: { name: 'query_logs', arguments: { query: COUNT, timeout_ms: 250 } },
      }).then((r) => r.json() as Promise<{ error?: { code: number; data?: Record<string, unknown> } }>),
    );
    await until(() => workers.calls.length === 1, 'running');
    timers.advance(249);
    await until(() => h.gate.inFlight() === 1, 'still running');
    assert.equal(call.done, false);
    timers.advance(1);
    const answer = await call.promise;
    assert.equal(answer.error?.code, -32600);
    assert.deepEqual(answer.error?.data, {
      kind: 'query_time_limit',
      limit: 'querier.limits.query_timeout_ms',
      value: 250,
      ceiling: 250,
      retryable: false,
    });
  });

  test('a notifications/cancelled for a running tools/call (sent on another request, as stateless MCP does) stops its query and frees the permit', async () => {
    const workers = new BlockingWorkers();
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, workers });
    const call = tracked(
      rpc(h, 'acme', {
        id: 'call-1',
        method: 'tools/call',
        params: { name: 'query_logs', arguments: { query: COUNT } },
      }),
    );
    await until(() => workers.calls.length === 1, 'running');
    // Another tenant naming the same id cancels nothing.
    const foreign = await rpc(h, 'other', { method: 'notifications/cancelled', params: { requestId: 'call-1' } });
    assert.equal(foreign.status, 202);
    await until(() => h.gate.inFlight() === 1, 'still running');
    assert.equal(workers.calls[0]?.stopped, false, "another tenant's cancellation does not reach this call");
    const cancel = await rpc(h, 'acme', { method: 'notifications/cancelled', params: { requestId: 'call-1' } });
    assert.equal(cancel.status, 202);
    await call.promise;
    assert.equal(workers.calls[0]?.stopped, true);
    assert.equal(h.gate.inFlight(), 0, 'the permit is free');
  });

  test('the MCP SDK client aborting a callTool stops the query on a real worker that does not yield', async () => {
    const h = harness({ maxConcurrent: 1, queryTimeoutMs: 30_000, workerScript: './testing/spinning-query-worker.js' });
    const server: ServerType = await new Promise((resolve) => {
      const s = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    const client = new Client({ name: 'cancel-test', version: '1' });
    try {
      const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'X-Sluice-Tenant': 'spin' } } }),
      );
      const abort = new AbortController();
      const call = client.callTool({ name: 'query_logs', arguments: { query: COUNT } }, undefined, {
        signal: abort.signal,
      });
      call.catch(() => {});
      await within(5000, () => nonCacheHeldBytes(h.pool) > 0, 'the query holding its bytes');
      abort.abort();
      await within(2000, () => h.gate.inFlight() === 0 && nonCacheHeldBytes(h.pool) === 0, 'released');
      assert.deepEqual(h.deaths, ['stopped']);
    } finally {
      await client.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
      await h.close();
    }
  });
});
