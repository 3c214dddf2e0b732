/**
 * Bearer-token auth on, end to end (the real CLI, a token file of SHA-256 hashes): missing or wrong token → 401 on
 * every surface (OTLP/HTTP, OTLP/gRPC `UNAUTHENTICATED`, `/v1/query`, `/mcp`, `/metrics` on both listeners); a
 * right token with a tenant outside its set → 403 (`PERMISSION_DENIED`); a right token → served. The real OTel SDK
 * exporters authenticate through their `headers` (HTTP) and `metadata` (gRPC) options, and the MCP SDK client
 * through its transport's headers. Probes stay open. A bad token document stops startup naming the key.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { credentials, Client as GrpcClient, Metadata, type ServiceError } from '@grpc/grpc-js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { post, rpcStatusMessage } from '../helpers/http-client.js';
import { buildSdkRecords, createExporter, exportBatch, type ExporterKind } from '../helpers/otel-sdk.js';
import { makeRecords } from '../helpers/records.js';
import { waitForStoredRows } from '../helpers/read-store.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const token = (): string => randomBytes(32).toString('base64url');
const sha256 = (t: string): string => createHash('sha256').update(t, 'utf8').digest('hex');

const TOKENS = { ingestA: token(), readerA: token(), ops: token(), unknown: token() };
const bearer = (t: string): string => `Bearer ${t}`;

function tokenDocument(): string {
  return `tokens:
  - name: collector-a
    sha256: ${sha256(TOKENS.ingestA)}
    tenants: [a]
    surfaces: [ingest]
  - name: reader-a
    sha256: ${sha256(TOKENS.readerA)}
    tenants: [a]
    surfaces: [query, mcp]
  - name: ops
    sha256: ${sha256(TOKENS.ops)}
    all_tenants: true
    surfaces: [admin]
`;
}

const EXPORT = Buffer.from(
  encodeLogsProtobuf(makeRecords(2, { tag: 'auth', baseNs: BigInt(Date.now()) * 1_000_000n })),
);

function otlpPost(url: string, headers: Record<string, string>) {
  return post(`${url}/v1/logs`, EXPORT, { 'content-type': 'application/x-protobuf', ...headers });
}

function grpcExport(address: string, meta: Record<string, string>): Promise<{ code: number; details: string }> {
  const client = new GrpcClient(address, credentials.createInsecure());
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(meta)) metadata.set(k, v);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      EXPORT,
      metadata,
      (error: ServiceError | null) => {
        client.close();
        resolve(error === null ? { code: 0, details: '' } : { code: error.code, details: error.details });
      },
    );
  });
}

async function query(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; body: string }> {
  const res = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query: 'true | range(-1h, now) | limit 100' }),
  });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

const kindOf = (body: string): string => (JSON.parse(body) as { error: { kind: string } }).error.kind;

describe('auth enabled: 401 → 400 → 403 on every surface, the real SDK clients authenticate', () => {
  let server: SluiceProcess;
  let queryUrl: string;
  const dir = tempDir('auth');
  const tokensFile = join(dir, 'tokens.yaml');

  before(async () => {
    writeFileSync(tokensFile, tokenDocument());
    server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        querier: true,
        defaultTenant: null,
        flushAgeSecs: 1,
        auth: { tokensFile },
      }),
      { dir },
    );
    await server.waitReady();
    queryUrl = server.queryUrl!;
  });

  after(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  test('probes stay open without a token on both listeners; /metrics needs an admin token', async () => {
    for (const base of [server.otlpHttpUrl, queryUrl]) {
      assert.equal((await fetch(`${base}/healthz`)).status, 200);
      assert.equal((await fetch(`${base}/readyz`)).status, 200);
      for (const authorization of [undefined, bearer(TOKENS.unknown), bearer(TOKENS.readerA)]) {
        const res = await fetch(`${base}/metrics`, authorization ? { headers: { authorization } } : {});
        assert.equal(res.status, 401, `${base}/metrics with ${authorization ?? 'no token'}`);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="sluice"');
      }
      const ok = await fetch(`${base}/metrics`, { headers: { authorization: bearer(TOKENS.ops) } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /sluice_/);
    }
  });

  test('OTLP/HTTP: 401 (no, unknown, wrong-surface token; before the tenant), 400, 403, then 200', async () => {
    const cases: Record<string, string>[] = [
      {},
      { authorization: bearer(TOKENS.unknown), 'x-sluice-tenant': 'a' },
      { authorization: bearer(TOKENS.readerA), 'x-sluice-tenant': 'a' },
      { authorization: `Basic ${Buffer.from('a:b').toString('base64')}`, 'x-sluice-tenant': 'a' },
    ];
    for (const headers of cases) {
      const res = await otlpPost(server.otlpHttpUrl, headers);
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="sluice"');
      assert.match(rpcStatusMessage(res.body), /a valid bearer token for this endpoint is required/);
    }
    const noTenant = await otlpPost(server.otlpHttpUrl, { authorization: bearer(TOKENS.ingestA) });
    assert.equal(noTenant.status, 400);
    assert.match(rpcStatusMessage(noTenant.body), /missing tenant/);
    const denied = await otlpPost(server.otlpHttpUrl, {
      authorization: bearer(TOKENS.ingestA),
      'x-sluice-tenant': 'ab',
    });
    assert.equal(denied.status, 403);
    assert.match(rpcStatusMessage(denied.body), /may not use tenant "ab"/);
    const ok = await otlpPost(server.otlpHttpUrl, { authorization: bearer(TOKENS.ingestA), 'x-sluice-tenant': 'a' });
    assert.equal(ok.status, 200);
  });

  test('OTLP/gRPC: UNAUTHENTICATED, INVALID_ARGUMENT, PERMISSION_DENIED, then OK (metadata authorization)', async () => {
    const at = server.otlpGrpcAddress;
    assert.equal((await grpcExport(at, { 'x-sluice-tenant': 'a' })).code, 16);
    assert.equal((await grpcExport(at, { authorization: bearer(TOKENS.unknown), 'x-sluice-tenant': 'a' })).code, 16);
    assert.equal((await grpcExport(at, { authorization: bearer(TOKENS.readerA), 'x-sluice-tenant': 'a' })).code, 16);
    assert.equal((await grpcExport(at, { authorization: bearer(TOKENS.ingestA) })).code, 3);
    const denied = await grpcExport(at, { authorization: bearer(TOKENS.ingestA), 'x-sluice-tenant': 'ab' });
    assert.equal(denied.code, 7);
    assert.match(denied.details, /may not use tenant "ab"/);
    assert.equal((await grpcExport(at, { authorization: bearer(TOKENS.ingestA), 'x-sluice-tenant': 'a' })).code, 0);
  });

  test('the real OTel SDK exporters authenticate with their headers / metadata options; without, they are refused', async () => {
    const target = { httpUrl: server.otlpHttpUrl, grpcAddress: server.otlpGrpcAddress };
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    const records = await buildSdkRecords(
      { resource: { 'service.name': 'sdk-auth' }, scopeName: 'auth', scopeVersion: '1' },
      [0, 1, 2].map((i) => ({
        body: `sdk export ${i} authenticated`,
        severityNumber: 9,
        severityText: 'INFO',
        attributes: {},
        timeNs: nowNs + BigInt(i),
        observedNs: nowNs + BigInt(i),
        traceId: null,
        spanId: null,
      })),
    );
    for (const kind of ['http-json', 'http-proto', 'grpc'] as ExporterKind[]) {
      const good = createExporter(kind, target, {
        tenant: 'a',
        gzip: kind !== 'http-json',
        headers: { Authorization: bearer(TOKENS.ingestA) },
      });
      const bad = createExporter(kind, target, {
        tenant: 'a',
        gzip: false,
        headers: { Authorization: bearer(TOKENS.unknown) },
      });
      try {
        await exportBatch(good, records);
        await assert.rejects(exportBatch(bad, records), `${kind}: a wrong token is refused`);
      } finally {
        await good.shutdown();
        await bad.shutdown();
      }
    }
    // 2 raw exports (HTTP + gRPC tests above, 2 records each) are not counted here: wait for the SDK's 9 at least.
    await waitForStoredRows({ backend: 'local', root: join(dir, 'data') }, 9);
  });

  test('/v1/query: 401 before the tenant header, then 400, 403, and the right token is served its tenant', async () => {
    const cases: Record<string, string>[] = [
      {},
      { 'X-Sluice-Tenant': 'a' },
      { authorization: bearer(TOKENS.unknown), 'X-Sluice-Tenant': 'a' },
      { authorization: bearer(TOKENS.ingestA), 'X-Sluice-Tenant': 'a' },
      { authorization: bearer(TOKENS.ops), 'X-Sluice-Tenant': 'a' },
    ];
    for (const headers of cases) {
      const r = await query(queryUrl, headers);
      assert.equal(r.status, 401, JSON.stringify(headers));
      assert.equal(kindOf(r.body), 'unauthenticated');
      assert.equal(r.headers.get('www-authenticate'), 'Bearer realm="sluice"');
    }
    const noTenant = await query(queryUrl, { authorization: bearer(TOKENS.readerA) });
    assert.equal(noTenant.status, 400);
    assert.equal(kindOf(noTenant.body), 'missing_tenant');
    const badTenant = await query(queryUrl, { authorization: bearer(TOKENS.readerA), 'X-Sluice-Tenant': 'a/b' });
    assert.equal(badTenant.status, 400);
    assert.equal(kindOf(badTenant.body), 'invalid_tenant');
    const denied = await query(queryUrl, { authorization: bearer(TOKENS.readerA), 'X-Sluice-Tenant': 'ab' });
    assert.equal(denied.status, 403);
    assert.equal(kindOf(denied.body), 'tenant_denied');
    const ok = await query(queryUrl, { authorization: bearer(TOKENS.readerA), 'X-Sluice-Tenant': 'a' });
    assert.equal(ok.status, 200, ok.body.slice(0, 300));
    assert.match(ok.body, /sdk export \d authenticated/);
  });

  test('/mcp: 401 without or with a wrong token, 403 for another tenant; the MCP SDK client with the token is served', async () => {
    const rpc = (headers: Record<string, string>) =>
      fetch(`${queryUrl}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const cases: Record<string, string>[] = [
      { 'X-Sluice-Tenant': 'a' },
      { authorization: bearer(TOKENS.ingestA), 'X-Sluice-Tenant': 'a' },
    ];
    for (const headers of cases) {
      const res = await rpc(headers);
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="sluice"');
      assert.equal(kindOf(await res.text()), 'unauthenticated');
    }
    const getStream = await fetch(`${queryUrl}/mcp`, { headers: { accept: 'text/event-stream' } });
    assert.equal(getStream.status, 401, 'the gate runs before the method check');
    const denied = await rpc({ authorization: bearer(TOKENS.readerA), 'X-Sluice-Tenant': 'ab' });
    assert.equal(denied.status, 403);
    assert.equal(kindOf(await denied.text()), 'tenant_denied');

    const refused = new Client({ name: 'auth-test', version: '1' });
    await assert.rejects(
      refused.connect(
        new StreamableHTTPClientTransport(new URL(`${queryUrl}/mcp`), {
          requestInit: { headers: { authorization: bearer(TOKENS.unknown), 'X-Sluice-Tenant': 'a' } },
        }),
      ),
      (e: unknown) => {
        assert.equal((e as { code?: number }).code, 401);
        assert.match(String(e), /"kind":"unauthenticated"/);
        return true;
      },
    );
    const client = new Client({ name: 'auth-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${queryUrl}/mcp`), {
        requestInit: { headers: { authorization: bearer(TOKENS.readerA), 'X-Sluice-Tenant': 'a' } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'query_logs',
        arguments: { query: 'contains(body, "authenticated") | range(-1h, now) | limit 100' },
      })) as { content: { text: string }[] };
      assert.match(result.content[0]!.text, /sdk export \d authenticated/);
    } finally {
      await client.close();
    }
  });
});

describe('auth configuration at startup', () => {
  test('the inline token document (auth.tokens via ${env:…}) works like the file', async () => {
    const dir = tempDir('auth-inline');
    const doc = JSON.stringify({
      tokens: [{ name: 'inline', sha256: sha256(TOKENS.ingestA), tenants: ['a'], surfaces: ['ingest'] }],
    });
    const server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        defaultTenant: null,
        auth: { tokens: '${env:SLUICE_TEST_TOKENS}' },
      }),
      { dir, env: { SLUICE_TEST_TOKENS: doc } },
    );
    try {
      await server.waitReady();
      assert.equal((await otlpPost(server.otlpHttpUrl, { 'x-sluice-tenant': 'a' })).status, 401);
      const ok = await otlpPost(server.otlpHttpUrl, { authorization: bearer(TOKENS.ingestA), 'x-sluice-tenant': 'a' });
      assert.equal(ok.status, 200);
    } finally {
      await server.stop();
    }
  });

  test('a bad token document stops startup with exit 2, naming auth.tokens_file and every problem, echoing nothing', async () => {
    const dir = tempDir('auth-bad');
    const tokensFile = join(dir, 'tokens.yaml');
    writeFileSync(
      tokensFile,
      `tokens:\n  - name: x\n    token: ${TOKENS.ops}\n    tenants: [a]\n    surfaces: [ingest, everything]\n`,
    );
    await assert.rejects(
      spawnSluice(testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), auth: { tokensFile } }), {
        dir,
      }),
      (e: unknown) => {
        const text = String(e);
        assert.match(text, /code 2/);
        assert.match(text, /auth\.tokens_file: tokens\[0\]\.token: tokens are never stored in plain text/);
        assert.match(text, /auth\.tokens_file: tokens\[0\]\.sha256: must be 64 hexadecimal characters/);
        assert.match(text, /auth\.tokens_file: tokens\[0\]\.surfaces\[1\]: must be one of ingest, query, mcp, admin/);
        assert.ok(!text.includes(TOKENS.ops), 'the plaintext token is not echoed');
        return true;
      },
    );
  });
});
