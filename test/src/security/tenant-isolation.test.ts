/**
 * Tenant isolation, auth off (the default): the tenant comes from the transport on every surface, and tenant `a`
 * never reads or writes `ab` — a prefix of each other's name, the case that broke MCP before (issue 19).
 *
 * The gateway runs as the real CLI; records go in through the real OTel SDK exporters (HTTP/protobuf with the
 * tenant header, gRPC with the tenant metadata), land in Parquet, and are read back over `/v1/query` and over MCP
 * with the MCP SDK client (the tenant header on its transport). Every MCP argument that could name another tenant
 * is tried; none reaches `ab`'s rows or templates.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { buildSdkRecords, createExporter, exportBatch, type ExporterKind, type TestLog } from '../helpers/otel-sdk.js';
import { field, postQuery } from '../helpers/query-client.js';
import { readStoredRows, waitForStoredRows, type StoreLocation } from '../helpers/read-store.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

/** An answer's text with `stats.bytes_read` zeroed. */
const withoutBytesRead = (text: string): string => text.replace(/"bytes_read":\d+/, '"bytes_read":0');
const BASE_NS = 1_772_359_200_000_000_000n; // 2026-03-01T10:00:00Z
const RANGE = 'range(2026-03-01T09:00:00Z, 2026-03-01T12:00:00Z)';
const PER_EXPORTER = 15;

/** Each tenant's records have their own template shape and a marker in every body. */
const BODY: Record<'a' | 'ab', (i: number) => string> = {
  a: (i) => `order ${i} shipped to warehouse a-secret-${i}`,
  ab: (i) => `invoice ${i} paid by customer ab-secret-${i}`,
};

function logs(tenant: 'a' | 'ab', offset: number): TestLog[] {
  return Array.from({ length: PER_EXPORTER }, (_, k) => {
    const i = offset + k;
    const ns = BASE_NS + BigInt(i) * 1_000_000_000n + (tenant === 'a' ? 0n : 500_000_000n);
    return {
      body: BODY[tenant](i),
      severityNumber: 9,
      severityText: 'INFO',
      attributes: { seq: i },
      timeNs: ns,
      observedNs: ns,
      traceId: null,
      spanId: null,
    };
  });
}

async function mcpClient(url: string, tenant: string): Promise<Client> {
  const client = new Client({ name: 'isolation-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { 'X-Sluice-Tenant': tenant } },
    }),
  );
  return client;
}

function textOf(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return content[0]!.text;
}

function bodiesOf(json: string): string[] {
  const parsed = JSON.parse(json) as { records: { body?: { line?: string } }[] };
  return parsed.records.map((r) => r.body?.line ?? '');
}

describe('tenant isolation: the tenant comes from the transport on every surface (auth off)', () => {
  let server: SluiceProcess;
  let url: string;
  const dir = tempDir('isolation');
  const location: StoreLocation = { backend: 'local', root: join(dir, 'data') };

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        querier: true,
        defaultTenant: null,
        flushAgeSecs: 1,
      }),
      { dir },
    );
    await server.waitReady();
    url = server.queryUrl!;
    const target = { httpUrl: server.otlpHttpUrl, grpcAddress: server.otlpGrpcAddress };
    // Each tenant writes through both transports: HTTP (tenant header) and gRPC (tenant metadata).
    let offset = 0;
    for (const tenant of ['a', 'ab'] as const) {
      for (const kind of ['http-proto', 'grpc'] as ExporterKind[]) {
        const records = await buildSdkRecords(
          { resource: { 'service.name': `svc-${tenant}` }, scopeName: 'isolation', scopeVersion: '1' },
          logs(tenant, offset),
        );
        offset += PER_EXPORTER;
        const exporter = createExporter(kind, target, { tenant, gzip: false });
        try {
          await exportBatch(exporter, records);
        } finally {
          await exporter.shutdown();
        }
      }
    }
    await waitForStoredRows(location, 4 * PER_EXPORTER);
  });

  after(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  test('ingest over HTTP and gRPC stores each export under its transport tenant only', async () => {
    const rows = await readStoredRows(location);
    assert.equal(rows.length, 4 * PER_EXPORTER);
    for (const row of rows) {
      const body = row.record.body;
      const line = body !== null && body.kind === 'string' ? body.value : '';
      const owner = line.includes('ab-secret-') ? 'ab' : 'a';
      assert.equal(row.tenantId, owner, line);
    }
  });

  test('/v1/query with header a returns only a, with header ab only ab; a repeated header is refused', async () => {
    for (const tenant of ['a', 'ab'] as const) {
      const answer = await postQuery(url, tenant, `true | ${RANGE} | limit 1000`);
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      const bodies = bodiesOf(answer.text);
      assert.equal(bodies.length, 2 * PER_EXPORTER, tenant);
      const own = tenant === 'a' ? /a-secret-/ : /ab-secret-/;
      for (const b of bodies) assert.match(b, own);
      if (tenant === 'a') assert.ok(!answer.text.includes('ab-secret-'), 'a never sees ab');
    }
    const res = await fetch(`${url}/v1/query`, {
      method: 'POST',
      headers: [
        ['content-type', 'application/json'],
        ['X-Sluice-Tenant', 'a'],
        ['X-Sluice-Tenant', 'ab'],
      ],
      body: JSON.stringify({ query: `true | ${RANGE}` }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { kind: string } }).error.kind, 'invalid_tenant');
  });

  test('MCP with header a cannot read ab by any argument: tenant_denied, and every answer holds only a', async () => {
    const client = await mcpClient(url, 'a');
    try {
      // Without the argument, and with it equal to the header: tenant a, exactly what /v1/query answers.
      const statement = `true | ${RANGE} | limit 1000`;
      const http = await postQuery(url, 'a', statement);
      for (const args of [{ query: statement }, { query: statement, tenant: 'a' }]) {
        const text = textOf(await client.callTool({ name: 'query_logs', arguments: args }));
        // stats.bytes_read counts bytes read from storage, which a worker's footer cache may spare one of the two
        // runs; everything else is the same text.
        assert.equal(withoutBytesRead(text), withoutBytesRead(http.text), JSON.stringify(args));
        assert.ok(!text.includes('ab-secret-'));
      }
      const templates = textOf(await client.callTool({ name: 'list_templates', arguments: {} }));
      assert.match(templates, /order <\*> shipped to warehouse <\*>/);
      assert.doesNotMatch(templates, /invoice/, "ab's templates are not listed for a");
      const drift = textOf(
        await client.callTool({ name: 'template_drift', arguments: { from: '2026-03-01T00:00:00Z', to: 'now' } }),
      );
      assert.equal(drift, (await postQuery(url, 'a', 'drift from 2026-03-01T00:00:00Z to now')).text);

      // Every spelling of another tenant in the argument is refused before any data is read.
      const others = ['ab', 'AB', ' ab', 'ab ', 'a,ab', 'ab\n', 'a b', '', 'default'];
      const tools: [string, Record<string, unknown>][] = [
        ['query_logs', { query: statement }],
        ['list_templates', {}],
        ['template_drift', { from: '2026-03-01T00:00:00Z', to: 'now' }],
      ];
      for (const [name, base] of tools) {
        for (const tenant of others) {
          await assert.rejects(
            client.callTool({ name, arguments: { ...base, tenant } }),
            (e: unknown) => {
              assert.ok(e instanceof McpError, `${name} ${JSON.stringify(tenant)}: ${String(e)}`);
              assert.equal(e.code, -32600);
              assert.deepEqual(e.data, { kind: 'tenant_denied', retryable: false });
              return true;
            },
            `${name} with tenant ${JSON.stringify(tenant)}`,
          );
        }
        // Not a string, or a differently named argument: refused as bad input, never as another tenant.
        for (const args of [{ tenant: ['ab'] }, { tenant: { id: 'ab' } }, { tenant_id: 'ab' }, { tenants: ['ab'] }]) {
          await assert.rejects(client.callTool({ name, arguments: { ...base, ...args } }), (e: unknown) => {
            assert.ok(e instanceof McpError);
            assert.equal(e.code, -32602);
            assert.deepEqual(e.data, { kind: 'invalid_query', retryable: false });
            return true;
          });
        }
      }
      // A statement that names the other tenant inside the DSL still runs in a's prefix only.
      for (const query of [
        `resource["tenant_id"] == "ab" | ${RANGE}`,
        `contains(body, "ab-secret") | ${RANGE}`,
        `service == "svc-ab" | ${RANGE}`,
      ]) {
        const text = textOf(await client.callTool({ name: 'query_logs', arguments: { query } }));
        assert.equal(field(JSON.parse(text) as never, 'rows'), 0, query);
      }
    } finally {
      await client.close();
    }
  });

  test('MCP with header ab reads ab (the control: the rule is the header, not a fixed tenant)', async () => {
    const client = await mcpClient(url, 'ab');
    try {
      const text = textOf(
        await client.callTool({ name: 'query_logs', arguments: { query: `true | ${RANGE} | limit 1000` } }),
      );
      const bodies = bodiesOf(text);
      assert.equal(bodies.length, 2 * PER_EXPORTER);
      for (const b of bodies) assert.match(b, /ab-secret-/);
      await assert.rejects(client.callTool({ name: 'list_templates', arguments: { tenant: 'a' } }), McpError);
    } finally {
      await client.close();
    }
  });

  test('MCP without a tenant header (no default tenant) is refused 400 missing_tenant before dispatch', async () => {
    const client = new Client({ name: 'isolation-test', version: '1.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`))), /400|missing/);
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_templates', arguments: { tenant: 'ab' } },
      }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { kind: string } }).error.kind, 'missing_tenant');
  });
});
