/**
 * The Loki routes over a recording query service: every request reaches the service as translated IR for the
 * tenant the gate admitted (our header or `X-Scope-OrgID`, a 400 when they disagree); a rejection keeps its status
 * with Loki's plain-text body; LogQL outside the subset is a 400 that never reaches the service; every admitted
 * query's permit and reservation is released exactly once, also when a later query of the same request fails;
 * with `querier.loki.enabled: false` the routes are not there.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createAccessGate } from '@sluice/edge';
import { UNSUPPORTED_LOGQL, printQuery } from '@sluice/query';
import { createQueryApp } from '../query-app.js';
import type { QueryError } from '../query-error.js';
import type { QueryService, ServiceOutcome } from '../query-service.js';
import type { QueryJobKind } from '../worker-protocol.js';

interface Call {
  readonly tenant: string;
  readonly job: QueryJobKind;
}

const calls: Call[] = [];
let released = 0;
/** The answers the service gives, in order; `ok` bodies are the JSON given. */
let script: (Record<string, unknown> | QueryError)[] = [];

const service: QueryService = {
  run(tenant, job): Promise<ServiceOutcome> {
    calls.push({ tenant, job });
    const next = script.shift() ?? { rows: 0, stats: {}, records: [] };
    if ('kind' in next && 'message' in next) return Promise.resolve({ status: 'error', error: next as QueryError });
    const body = new TextEncoder().encode(JSON.stringify(next));
    return Promise.resolve({ status: 'ok', body, rows: 0, done: () => void released++ });
  },
};

const servers: ServerType[] = [];

async function start(loki: boolean): Promise<string> {
  const app = createQueryApp({
    service,
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve('') },
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: null },
      protectMetrics: true,
    }),
    mcpEnabled: true,
    maxRows: 10_000,
    version: 'test',
    ...(loki
      ? { loki: { tenantHeader: 'X-Scope-OrgID', sampleRows: 1000, nowNs: () => 1_772_370_000_000_000_000n } }
      : {}),
  });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let url: string;
before(async () => {
  url = await start(true);
});
after(async () => {
  for (const server of servers) {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    });
  }
});

async function get(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const u = new URL(path, url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  const res = await fetch(u, { headers });
  return {
    status: res.status,
    text: await res.text(),
    kind: res.headers.get('x-sluice-error-kind'),
    type: res.headers.get('content-type'),
  };
}

function reset(answers: (Record<string, unknown> | QueryError)[] = []): void {
  calls.length = 0;
  released = 0;
  script = answers;
}

const RANGE = { start: '1772359200000000000', end: '1772370000000000000' };

describe('Loki routes over the query service', () => {
  test('a log query runs as IR for the tenant of X-Scope-OrgID: window, newest first, limit', async () => {
    reset();
    const r = await get(
      '/loki/api/v1/query_range',
      { query: '{service_name="checkout"} |= "timed out"', ...RANGE, limit: '7', direction: 'backward' },
      { 'X-Scope-OrgID': 'acme' },
    );
    assert.equal(r.status, 200, r.text);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.tenant, 'acme');
    const job = calls[0]!.job;
    assert.equal(job.kind, 'query');
    if (job.kind !== 'query') return;
    assert.equal(
      printQuery(job.query),
      'service == "checkout" and contains(body, "timed out") | range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z) | sort ts desc | limit 7',
    );
    assert.deepEqual(JSON.parse(r.text).data.result, []);
  });

  test('bytes_over_time runs as sum(body_bytes); records without the label are recovered with their bytes, a window of empty lines is 0', async () => {
    reset([
      {
        rows: 5,
        stats: { rows_excluded: 3 },
        records: [],
        aggregate: [{ key: ['x', '2026-03-01T10:00:00Z'], count: 2, value: 30 }],
      },
      {
        rows: 5,
        stats: {},
        records: [],
        aggregate: [
          { key: ['2026-03-01T10:00:00Z'], count: 3, value: 30 },
          { key: ['2026-03-01T11:00:00Z'], count: 2, value: 12 },
        ],
      },
    ]);
    const r = await get(
      '/loki/api/v1/query_range',
      { query: 'sum by (app) (bytes_over_time({env="prod"}[1h]))', ...RANGE, step: '3600s' },
      { 'X-Scope-OrgID': 'acme' },
    );
    assert.equal(r.status, 200, r.text);
    const printed = calls.map((c) => (c.job.kind === 'query' ? printQuery(c.job.query) : c.job.kind));
    assert.deepEqual(printed, [
      'resource.env == "prod" | range(2026-03-01T09:00:00Z, 2026-03-01T13:00:00Z) | sum(body_bytes) by resource.app, bucket(1h)',
      'resource.env == "prod" | range(2026-03-01T09:00:00Z, 2026-03-01T13:00:00Z) | sum(body_bytes) by bucket(1h)',
    ]);
    const result = JSON.parse(r.text).data.result as { metric: Record<string, string>; values: [number, string][] }[];
    const byApp = new Map(result.map((s) => [JSON.stringify(s.metric), s.values]));
    assert.deepEqual(byApp.get('{"app":"x"}'), [[1772362800, '30']]);
    // The record without `app` in the 10:00 bucket had an empty line: present with 0 bytes, not absent.
    assert.deepEqual(byApp.get('{}'), [
      [1772362800, '0'],
      [1772366400, '12'],
    ]);
  });

  test('an instant sum(bytes_rate(…[5m])) is one unbucketed sum(body_bytes) over the range, divided by its seconds', async () => {
    reset([{ rows: 4, stats: {}, records: [], aggregate: [{ key: [], count: 4, value: 600 }] }]);
    const r = await get(
      '/loki/api/v1/query',
      { query: 'sum(bytes_rate({env="prod"}[5m]))', time: '1772370000' },
      { 'X-Scope-OrgID': 'acme' },
    );
    assert.equal(r.status, 200, r.text);
    const job = calls[0]!.job;
    assert.equal(
      job.kind === 'query' && printQuery(job.query),
      'resource.env == "prod" | range(2026-03-01T12:55:00Z, 2026-03-01T13:00:00Z) | sum(body_bytes)',
    );
    const result = JSON.parse(r.text).data.result as { metric: Record<string, string>; value: [number, string] }[];
    assert.deepEqual(result, [{ metric: {}, value: [1772370000, '2'] }]);
  });

  test('a POST with a form body is read like the query string (Loki accepts both)', async () => {
    reset();
    const res = await fetch(new URL('/loki/api/v1/query_range', url), {
      method: 'POST',
      headers: { 'X-Scope-OrgID': 'acme', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: '{app=~"api|web"}', ...RANGE, limit: '3', direction: 'forward' }).toString(),
    });
    assert.equal(res.status, 200, await res.text());
    const job = calls[0]!.job;
    assert.ok(job.kind === 'query');
    assert.equal(
      printQuery(job.query),
      'resource.app =~ "^(?:api|web)$" | range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z) | sort ts | limit 3',
    );
  });

  test('our tenant header works alone; with X-Scope-OrgID naming another tenant it is a 400; neither is 400', async () => {
    reset();
    const ours = await get('/loki/api/v1/labels', RANGE, { 'X-Sluice-Tenant': 'beta' });
    assert.equal(ours.status, 200, ours.text);
    assert.equal(calls[0]!.tenant, 'beta');
    const same = await get('/loki/api/v1/labels', RANGE, { 'X-Sluice-Tenant': 'beta', 'X-Scope-OrgID': 'beta' });
    assert.equal(same.status, 200, same.text);
    reset();
    const both = await get('/loki/api/v1/labels', RANGE, { 'X-Sluice-Tenant': 'beta', 'X-Scope-OrgID': 'acme' });
    assert.equal(both.status, 400);
    assert.match(both.text, /X-Sluice-Tenant and X-Scope-OrgID name different tenants/);
    const none = await get('/loki/api/v1/labels', RANGE);
    assert.equal(none.status, 400);
    assert.equal(none.kind, 'missing_tenant');
    assert.equal(calls.length, 0);
  });

  const rejections: [QueryError, number][] = [
    [{ kind: 'query_memory_limit', message: 'the query needs more memory than querier.limits.memory_pool_bytes' }, 422],
    [{ kind: 'query_queue_full', message: 'too many queries are waiting (querier.limits.max_queued_queries)' }, 503],
    [{ kind: 'query_time_limit', message: 'the query ran past querier.limits.query_timeout_ms' }, 422],
  ];
  for (const [error, status] of rejections) {
    test(`a ${error.kind} rejection keeps its status ${status} with a plain-text body`, async () => {
      reset([error]);
      const r = await get(
        '/loki/api/v1/query_range',
        { query: 'sum by (level) (count_over_time({app="a"}[1m]))', ...RANGE, step: '60000ms' },
        { 'X-Scope-OrgID': 'acme' },
      );
      assert.equal(r.status, status);
      assert.equal(r.kind, error.kind);
      assert.equal(r.type, 'text/plain; charset=utf-8');
      assert.equal(r.text, `${error.message}\n`);
    });
  }

  test('LogQL outside the subset is a 400 naming the construct and never reaches the service', async () => {
    reset();
    for (const [query, construct] of UNSUPPORTED_LOGQL) {
      const r = await get('/loki/api/v1/query_range', { query, ...RANGE, step: '60s' }, { 'X-Scope-OrgID': 'acme' });
      assert.equal(r.status, 400, query);
      assert.equal(r.kind, 'unsupported_logql', query);
      assert.ok(r.text.includes(construct), `${query}: ${r.text}`);
    }
    assert.equal(calls.length, 0);
  });

  test('every admitted query is released once, also when a later query of the same request is refused', async () => {
    // A grouping by a label some records lack runs a second count when the first excluded rows.
    reset([
      {
        rows: 3,
        stats: { rows_excluded: 1 },
        records: [],
        aggregate: [{ key: ['x', '2026-03-01T10:00:00Z'], count: 2 }],
      },
      { kind: 'query_queue_full', message: 'too many queries are waiting' },
    ]);
    const r = await get(
      '/loki/api/v1/query_range',
      { query: 'sum by (app) (count_over_time({env="prod"}[1h]))', ...RANGE, step: '3600s' },
      { 'X-Scope-OrgID': 'acme' },
    );
    assert.equal(r.status, 503);
    assert.equal(calls.length, 2);
    assert.equal(released, 1);
    reset([{ rows: 1, stats: {}, records: [] }]);
    const ok = await get('/loki/api/v1/labels', RANGE, { 'X-Scope-OrgID': 'acme' });
    assert.equal(ok.status, 200);
    // 'finish' fires as the body is handed to the socket, before or just after the client has read it.
    for (let i = 0; i < 100 && released < 1; i++) await new Promise((r2) => setTimeout(r2, 10));
    assert.equal(released, 1);
  });

  test('with querier.loki.enabled false the Loki routes answer 404', async () => {
    const off = await start(false);
    const res = await fetch(`${off}/loki/api/v1/labels`, { headers: { 'X-Scope-OrgID': 'acme' } });
    assert.equal(res.status, 404);
    await res.text();
  });
});
