/**
 * @module observe-and-stream.test
 * The gateway process end to end (`sluice serve`, querier only, over a local store): `querier.limits.enforcement:
 * observe` as the configuration wires it serves what enforce mode refuses — a result past max_result_bytes and a
 * query past max_query_memory_bytes — and `/metrics` counts each on `sluice.query.budget_exceeded` by limit, while
 * `sluice.query.response.size` has one point per answered query (JSON, NDJSON, MCP). The same queries under the
 * default (enforce) are refused. An NDJSON answer parses line by line to its trailer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { buildQueryCorpus, CORPUS_WINDOW } from '../bench/bench-corpus.js';
import { scrapeMetrics, sampleSum } from '../helpers/metrics-text.js';
import { postQuery } from '../helpers/query-client.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const TENANT = 'acme';
const ROWS = 3000;
const ALL = `true | ${CORPUS_WINDOW} | limit 2000`;

let dir: string;
before(async () => {
  dir = tempDir('observe-stream');
  await buildQueryCorpus(join(dir, 'data'), { rows: ROWS, tenant: TENANT });
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function start(limits: Record<string, number | string>): Promise<SluiceProcess> {
  const server = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, `wal-${Date.now()}`),
      dataDir: join(dir, 'data'),
      receiver: false,
      querier: true,
      querierLimits: { memory_pool_bytes: 256 * 1024 ** 2, light_query_permits: 0, ...limits },
    }),
    { dir },
  );
  await server.waitReady();
  return server;
}

/** `sluice_query_budget_exceeded_total` for one limit. */
function exceeded(text: string, limit: string): number | undefined {
  return sampleSum(
    text
      .split('\n')
      .filter((l) => l.includes(`sluice_query_limit="${limit}"`))
      .join('\n'),
    'sluice_query_budget_exceeded_total',
  );
}

describe('enforcement: observe in the gateway process', () => {
  test('max_result_bytes and max_query_memory_bytes: 422 under enforce, served and counted on /metrics under observe', async () => {
    const ceilings = { max_result_bytes: 100_000, max_query_memory_bytes: 64 * 1024 };
    const enforce = await start(ceilings);
    try {
      const refused = await postQuery(enforce.queryUrl!, TENANT, ALL);
      assert.equal(refused.status, 422);
      const text = await scrapeMetrics(enforce.queryUrl!);
      assert.equal(exceeded(text, 'max_result_bytes'), 0);
      assert.equal(exceeded(text, 'max_query_memory_bytes'), 0);
    } finally {
      await enforce.stop();
    }
    const observe = await start({ ...ceilings, enforcement: 'observe' });
    try {
      const served = await postQuery(observe.queryUrl!, TENANT, ALL);
      assert.equal(served.status, 200);
      const text = await scrapeMetrics(observe.queryUrl!);
      assert.equal(exceeded(text, 'max_result_bytes'), 1);
      assert.equal(exceeded(text, 'max_query_memory_bytes'), 1);
      assert.equal(exceeded(text, 'max_rows'), 0);
      assert.ok(
        observe.logs.some((l) => /past a result ceiling served/.test(l) && /"fingerprint":"[0-9a-f]{16}"/.test(l)),
        'the warning names the fingerprint',
      );
    } finally {
      await observe.stop();
    }
  });

  test('sluice.query.response.size has one point per answered query, JSON, NDJSON and MCP alike', async () => {
    const server = await start({});
    try {
      const url = server.queryUrl!;
      const json = await postQuery(url, TENANT, `true | ${CORPUS_WINDOW} | limit 10`);
      assert.equal(json.status, 200);
      const res = await fetch(`${url}/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sluice-tenant': TENANT, accept: 'application/x-ndjson' },
        body: JSON.stringify({ query: `true | ${CORPUS_WINDOW} | limit 500` }),
      });
      assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
      const ndjson = await res.text();
      const lines = ndjson
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.equal(lines.length, 501);
      assert.equal(lines.at(-1)?.['rows'], ROWS);
      const mcp = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-sluice-tenant': TENANT,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'query_logs', arguments: { query: `true | ${CORPUS_WINDOW}`, limit: 3 } },
        }),
      });
      assert.equal(mcp.status, 200);
      await mcp.text();
      const refused = await postQuery(url, TENANT, 'not a query (');
      assert.equal(refused.status, 400);
      const text = await scrapeMetrics(url);
      assert.equal(sampleSum(text, 'sluice_query_response_size_count'), 3, 'three answers, the refusal none');
      const sum = sampleSum(text, 'sluice_query_response_size_sum') ?? 0;
      assert.ok(sum >= Buffer.byteLength(json.text) + Buffer.byteLength(ndjson), `sum ${sum}`);
    } finally {
      await server.stop();
    }
  });
});
