/**
 * MCP answers exactly what /v1/query answers (same statement, same tenant), maps failures to JSON-RPC errors
 * with `data.kind`; and a small configured pool refuses an over-budget query with a typed error, reads 0
 * afterwards, and the next small query succeeds — on the local store and on S3 (s3rver).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { metricValue, queryHeldPoolBytes } from '../helpers/metrics.js';
import { big, field, postQuery } from '../helpers/query-client.js';
import { corpusRecords, exportRecords } from '../helpers/query-corpus.js';
import { waitForStoredRows, type StoreLocation } from '../helpers/read-store.js';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const RANGE = 'range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z)';
const POOL_BYTES = 33_554_432; // the 32 MiB minimum
const RECORDS = 6000;

async function mcpClient(url: string, tenant = 'acme'): Promise<Client> {
  const client = new Client({ name: 'sluice-test', version: '1.0.0' });
  // The tenant comes from the header, as on /v1/query; the tools' `tenant` argument below must equal it.
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { 'X-Sluice-Tenant': tenant } },
    }),
  );
  return client;
}

function text(result: unknown): string {
  const content = (result as { content: { type: string; text: string }[] }).content;
  assert.equal(content[0]?.type, 'text');
  return content[0]!.text;
}

for (const backend of ['local', 's3'] as const) {
  describe(`querier on ${backend}: MCP parity and the memory pool`, () => {
    let s3: TestS3Server | undefined;
    let server: SluiceProcess;
    let url: string;
    const dir = tempDir(`mcp-pool-${backend}`);

    before(async () => {
      if (backend === 's3') s3 = await startS3Server();
      const location: StoreLocation = s3 ? { backend: 's3', s3 } : { backend: 'local', root: join(dir, 'data') };
      server = await spawnSluice(
        testConfigYaml({
          walDir: join(dir, 'wal'),
          dataDir: join(dir, 'data'),
          ...(s3 ? { s3 } : {}),
          flushAgeSecs: 1,
          querier: true,
          // The scenario is the pool rule: one lane, and one query may use the whole pool (the ceiling is the pool).
          querierLimits: { memory_pool_bytes: POOL_BYTES, max_query_memory_bytes: POOL_BYTES, light_query_permits: 0 },
        }),
        { dir },
      );
      await server.waitReady();
      url = server.queryUrl!;
      // Long bodies make the decoded data of a full scan far larger than the 32 MiB pool.
      const records = corpusRecords(0, RECORDS).map((r, i) => ({
        ...r,
        body: {
          kind: 'string' as const,
          value: `${(r.body as { value: string }).value} ${'x'.repeat(6000 + (i % 7))}`,
        },
      }));
      await exportRecords(server.otlpHttpUrl, 'acme', records, 500);
      await waitForStoredRows(location, RECORDS);
    });
    after(async () => {
      if (server.child.exitCode === null) await server.stop();
      await s3?.stop();
    });

    interface QueryAnswer {
      readonly stats: { readonly bytes_read: number } & Record<string, unknown>;
    }
    const withoutBytesRead = (a: QueryAnswer): unknown => ({ ...a, stats: { ...a.stats, bytes_read: 0 } });

    test('query_logs, template_drift and list_templates over MCP answer what /v1/query answers', async () => {
      const client = await mcpClient(url);
      try {
        for (const statement of [
          `severity >= error | ${RANGE} | limit 20`,
          `true | ${RANGE} | count by service`,
          `contains(body, "timed out") | ${RANGE} | count`,
        ]) {
          const http = await postQuery(url, 'acme', statement);
          assert.equal(http.status, 200, http.text.slice(0, 300));
          const mcp = await client.callTool({ name: 'query_logs', arguments: { tenant: 'acme', query: statement } });
          // stats.bytes_read counts bytes read from storage: either run may find the footers in its worker's footer
          // cache (docs/design/query-governance.md, "Footer cache"), which depends on which worker ran it.
          const [viaMcp, viaHttp] = [JSON.parse(text(mcp)), JSON.parse(http.text)] as QueryAnswer[];
          assert.ok(viaMcp !== undefined && viaHttp !== undefined);
          assert.deepEqual(withoutBytesRead(viaMcp), withoutBytesRead(viaHttp), statement);
        }
        const drift = await postQuery(url, 'acme', 'drift from 2026-03-01T00:00:00Z to now');
        const mcpDrift = await client.callTool({
          name: 'template_drift',
          arguments: { tenant: 'acme', from: '2026-03-01T00:00:00Z', to: 'now' },
        });
        assert.equal(text(mcpDrift), drift.text);
        const templates = JSON.parse(
          text(await client.callTool({ name: 'list_templates', arguments: { tenant: 'acme' } })),
        ) as { templates: unknown[] };
        assert.ok(templates.templates.length >= 5, 'the corpus templates are listed');
      } finally {
        await client.close();
      }
    });

    test('MCP failures are JSON-RPC errors carrying data.kind', async () => {
      const client = await mcpClient(url);
      try {
        await assert.rejects(
          client.callTool({ name: 'query_logs', arguments: { tenant: 'acme', query: 'severity >= | count' } }),
          (e: unknown) => {
            assert.ok(e instanceof McpError);
            assert.equal(e.code, -32602);
            assert.deepEqual(e.data, { kind: 'invalid_query', retryable: false });
            return true;
          },
        );
        await assert.rejects(
          client.callTool({
            name: 'query_logs',
            arguments: { tenant: 'acme', query: `true | ${RANGE} | limit 10000` },
          }),
          (e: unknown) => {
            assert.ok(e instanceof McpError);
            assert.equal(e.code, -32600, 'a limit rejection is invalid_request');
            const data = e.data as Record<string, unknown>;
            assert.deepEqual(
              { kind: data['kind'], limit: data['limit'], ceiling: data['ceiling'], retryable: data['retryable'] },
              {
                kind: 'query_memory_limit',
                limit: 'querier.limits.memory_pool_bytes',
                ceiling: POOL_BYTES,
                retryable: false,
              },
            );
            assert.ok(typeof data['value'] === 'number' && data['value'] > POOL_BYTES, 'value: the bytes needed');
            return true;
          },
        );
      } finally {
        await client.close();
      }
    });

    test('an over-budget query is refused with query_memory_limit, the pool reads 0 after, and a small query succeeds', async () => {
      const big1 = await postQuery(url, 'acme', `true | ${RANGE} | limit 10000`);
      assert.equal(big1.status, 422, big1.text.slice(0, 300));
      assert.equal(field(field(big1.json, 'error'), 'kind'), 'query_memory_limit');
      assert.match(String(field(field(big1.json, 'error'), 'message')), /querier\.limits\.memory_pool_bytes/);
      assert.equal(await queryHeldPoolBytes(url), 0, 'nothing left reserved');
      assert.equal(await metricValue(url, 'sluice_query_pool_limit'), POOL_BYTES);
      const small = await postQuery(url, 'acme', `severity >= error | ${RANGE} | limit 5`);
      assert.equal(small.status, 200, small.text.slice(0, 300));
      assert.equal((field(small.json, 'records') as unknown[]).length, 5);
      assert.ok(big(field(small.json, 'rows')) > 5n);
      assert.equal(await queryHeldPoolBytes(url), 0);
    });
  });
}
