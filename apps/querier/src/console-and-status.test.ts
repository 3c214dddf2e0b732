/**
 * The console's files and `/v1/status` on the query listener, over a real socket: exact-path serving with the
 * right content types, cache validators and security headers; no way out of the file table (`..`, encoded
 * variants); `/` is 404 when the console is off (`querier.ui.enabled: false`, also in its env form); the status
 * answers the live figures, needs a query token when auth is on, and reads no tenant; a raw DSL body's 400
 * carries the error's position, a JSON body's does not.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { parseConfig } from '@sluice/config';
import { loadConsoleAssets } from '@sluice/console';
import { createAccessGate, hashToken } from '@sluice/edge';
import { createQueryApp, type QueryAppOptions } from './query-app.js';
import type { QuerierFigures } from './status-route.js';

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** One request with the path sent exactly as given (no URL normalization on the client side). */
function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

const FIGURES: QuerierFigures = {
  poolReservedBytes: 1234,
  poolFooterCacheBytes: 34,
  poolLimitBytes: 33_554_432,
  queueDepth: 2,
  inFlight: 3,
  tailsOpen: 1,
};

async function listen(
  options: Partial<QueryAppOptions> & Pick<QueryAppOptions, 'access'>,
): Promise<{ server: ServerType; port: number }> {
  const app = createQueryApp({
    service: { run: () => Promise.reject(new Error('not reached')) },
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve('sluice_up 1\n') },
    mcpEnabled: true,
    maxRows: 10,
    version: 'test',
    ...options,
  });
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  return { server, port: (server.address() as AddressInfo).port };
}

function close(server: ServerType): Promise<void> {
  return new Promise((resolve) => {
    (server as Server).closeAllConnections();
    server.close(() => resolve());
  });
}

const openAccess = createAccessGate({
  tokens: null,
  tenancy: { header: 'X-Sluice-Tenant', defaultTenant: 'd' },
  protectMetrics: true,
});

describe('the console on the query listener', () => {
  let server: ServerType;
  let port: number;
  const assets = loadConsoleAssets();
  before(async () => {
    ({ server, port } = await listen({ access: openAccess, consoleAssets: assets }));
  });
  after(() => close(server));

  test('/ is the page, its modules and stylesheet follow with their content types, no-cache and an ETag', async () => {
    const page = await send(port, 'GET', '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(page.body, /<script type="module" src="\/console\/js\/main\.js"><\/script>/);
    for (const [path, type] of [
      ['/console/js/main.js', 'text/javascript; charset=utf-8'],
      ['/console/js/histogram.js', 'text/javascript; charset=utf-8'],
      ['/console/console.css', 'text/css; charset=utf-8'],
      ['/console/favicon.svg', 'image/svg+xml'],
    ] as const) {
      const r = await send(port, 'GET', path);
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['content-type'], type, path);
      assert.equal(r.headers['cache-control'], 'no-cache', path);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', path);
      assert.match(String(r.headers['content-security-policy']), /script-src 'self';/, path);
      assert.match(String(r.headers['etag']), /^"[0-9a-f]{32}"$/, path);
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body), path);
    }
  });

  test('every module the page imports is served (the import graph is closed)', async () => {
    const seen = new Set<string>();
    const queue = ['/console/js/main.js'];
    while (queue.length > 0) {
      const path = queue.pop()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const r = await send(port, 'GET', path);
      assert.equal(r.status, 200, path);
      for (const m of r.body.matchAll(/from '\.\/([a-z-]+\.js)'/g)) queue.push(`/console/js/${m[1]}`);
    }
    assert.ok(seen.size >= 8, `modules: ${[...seen].join(', ')}`);
  });

  test('a matching If-None-Match gets 304 without a body; HEAD gets the headers only', async () => {
    const first = await send(port, 'GET', '/console/js/main.js');
    const again = await send(port, 'GET', '/console/js/main.js', { 'if-none-match': String(first.headers['etag']) });
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
    const head = await send(port, 'HEAD', '/');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-type'], 'text/html; charset=utf-8');
  });

  test('nothing outside the file table is reachable: dot segments, encoded and doubled variants are 404', async () => {
    for (const path of [
      '/../package.json',
      '/console/../package.json',
      '/console/../../package.json',
      '/console/js/../../package.json',
      '/console/%2e%2e/package.json',
      '/console/%2e%2e%2fpackage.json',
      '/console/js/..%2f..%2f..%2fpackage.json',
      '/console/js/%2e%2e%2f%2e%2e%2fsrc%2fconsole-assets.ts',
      '/console/..%5c..%5cpackage.json',
      '/%2e%2e/%2e%2e/package.json',
      '/console/js/main.d.ts',
      '/console/js/main.js.map',
      '/console/js/.tsbuildinfo',
      '/console/',
      '/console/js/',
      '/console/index.html',
      '/console/js/main.js%00',
      '/console//etc/passwd',
      '/console/js/main.js/',
    ]) {
      const r = await send(port, 'GET', path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.body, /"name"|@sluice|import /, path);
    }
  });

  test('the console stays small: every file together is under 300 KB', () => {
    const total = [...assets.values()].reduce((n, a) => n + a.body.byteLength, 0);
    assert.ok(total < 300 * 1024, `${total} bytes`);
  });
});

describe('the console switched off', () => {
  test('querier.ui.enabled defaults to true and false (file or SLUICE_QUERIER_UI_ENABLED) turns it off', () => {
    const base = { SLUICE_TENANCY_DEFAULT_TENANT: 'd' };
    const on = parseConfig({ env: base });
    assert.ok(on.ok);
    assert.equal(on.value.querier.ui.enabled, true);
    const off = parseConfig({ env: { ...base, SLUICE_QUERIER_UI_ENABLED: 'false' } });
    assert.ok(off.ok);
    assert.equal(off.value.querier.ui.enabled, false);
    const file = parseConfig({ env: {}, fileText: 'querier:\n  ui:\n    enabled: false\n' });
    assert.ok(file.ok);
    assert.equal(file.value.querier.ui.enabled, false);
  });

  test('without the console, / and its files are 404', async () => {
    const { server, port } = await listen({ access: openAccess });
    try {
      for (const path of ['/', '/console/js/main.js', '/console/console.css']) {
        assert.equal((await send(port, 'GET', path)).status, 404, path);
      }
    } finally {
      await close(server);
    }
  });
});

describe('/v1/status', () => {
  const status = (access = openAccess) => ({
    access,
    version: 'test',
    features: { mcp: true, tail: true },
    defaultTenantSet: true,
    figures: () => FIGURES,
  });

  test('answers the live figures, the tenant header name and the features, with no tenant header sent', async () => {
    const { server, port } = await listen({ access: openAccess, status: status() });
    try {
      const r = await send(port, 'GET', '/v1/status');
      assert.equal(r.status, 200);
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.deepEqual(JSON.parse(r.body), {
        version: 'test',
        pool: { reserved_bytes: 1234, footer_cache_bytes: 34, limit_bytes: 33_554_432 },
        queue: { depth: 2, in_flight: 3 },
        tails: { open: 1 },
        tenancy: { header: 'X-Sluice-Tenant', default_tenant_set: true },
        auth: { enabled: false },
        features: { mcp: true, tail: true },
      });
    } finally {
      await close(server);
    }
  });

  test('with auth on it needs a token granted the query surface (401 otherwise), whatever its tenants', async () => {
    const access = createAccessGate({
      tokens: {
        grants: [
          { name: 'reader', sha256: hashToken('tok-reader'), tenants: new Set(['a']), surfaces: new Set(['query']) },
          { name: 'ingest', sha256: hashToken('tok-ingest'), tenants: 'all', surfaces: new Set(['ingest']) },
        ],
      },
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: null },
      protectMetrics: true,
    });
    const { server, port } = await listen({ access, status: status(access) });
    try {
      const none = await send(port, 'GET', '/v1/status');
      assert.equal(none.status, 401);
      assert.equal(none.headers['www-authenticate'], 'Bearer realm="sluice"');
      assert.equal(JSON.parse(none.body).error.kind, 'unauthenticated');
      assert.equal((await send(port, 'GET', '/v1/status', { authorization: 'Bearer tok-ingest' })).status, 401);
      const ok = await send(port, 'GET', '/v1/status', { authorization: 'Bearer tok-reader' });
      assert.equal(ok.status, 200);
      assert.equal(JSON.parse(ok.body).auth.enabled, true);
      assert.doesNotMatch(ok.body, /tok-|reader/, 'no token or principal in the answer');
    } finally {
      await close(server);
    }
  });
});

describe('the position of a syntax error', () => {
  test('a raw DSL body gets position {start, end} into the statement; a JSON body gets none', async () => {
    const { server, port } = await listen({ access: openAccess });
    try {
      const raw = await send(port, 'POST', '/v1/query', { 'content-type': 'text/plain' }, 'severity >= and x');
      assert.equal(raw.status, 400);
      const e = JSON.parse(raw.body).error;
      assert.equal(e.kind, 'invalid_query');
      assert.deepEqual(e.position, { start: 12, end: 15 });
      assert.equal('severity >= and x'.slice(e.position.start, e.position.end), 'and');
      const json = await send(
        port,
        'POST',
        '/v1/query',
        { 'content-type': 'application/json' },
        JSON.stringify({ query: 'severity >= and x' }),
      );
      assert.equal(json.status, 400);
      assert.equal(JSON.parse(json.body).error.position, undefined);
    } finally {
      await close(server);
    }
  });
});
