/**
 * The budget tree, observable (docs/deployment.md, "The budget tree"): a real `sluice serve` exports
 * `sluice.budget.used` / `peak` / `limit` for every managed budget of the roles it runs, read from `/metrics`.
 * An export moves the in-flight bodies, the WAL backlog and the sink buffers; a query moves the query pool; each
 * peak keeps its high-water mark after `used` has gone back down. A querier-only process shows only the query pool.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { sampleSum, scrapeMetrics } from '../helpers/metrics-text.js';
import { postQuery } from '../helpers/query-client.js';
import { makeRecords } from '../helpers/records.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const POOL_BYTES = 64 * 1024 * 1024;
const POOLS = ['query_pool', 'compactor_loan', 'sink_buffers', 'inflight_bodies', 'wal_backlog'] as const;
type Pool = (typeof POOLS)[number];
type Figure = 'used' | 'peak' | 'limit';

/** Every `sluice_budget_<figure>{…sluice_budget_pool="<pool>"…} <value>` sample of a scrape. */
function budgets(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^sluice_budget_(used|peak|limit)\{[^}]*sluice_budget_pool="([a-z_]+)"[^}]*\} (\S+)$/.exec(line);
    if (m) out.set(`${m[2]}.${m[1]}`, Number(m[3]));
  }
  return out;
}

function figure(all: Map<string, number>, pool: Pool, what: Figure): number {
  const v = all.get(`${pool}.${what}`);
  assert.ok(v !== undefined, `no sluice_budget_${what} series for pool ${pool}`);
  return v;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v, null, 1)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The numeric field `key` of the first JSON log line with message `msg`. */
function logField(logs: readonly string[], msg: string, key: string): number {
  for (const line of logs) {
    try {
      const entry = JSON.parse(line) as { msg?: string; fields?: Record<string, unknown> };
      if (entry.msg === msg) return Number(entry.fields?.[key]);
    } catch {
      // not a JSON line
    }
  }
  throw new Error(`no "${msg}" log line`);
}

describe('budget gauges on /metrics, both roles and the compactor in one process', () => {
  let server: SluiceProcess;
  before(async () => {
    const dir = tempDir('budget-gauges');
    server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        querier: true,
        flushAgeSecs: 1,
        querierLimits: { memory_pool_bytes: POOL_BYTES },
      }),
      { dir },
    );
    await server.waitReady();
  });
  after(async () => {
    await server?.stop();
  });

  test('every managed budget has used, peak and limit; the limits are the resolved figures', async () => {
    const all = budgets(await scrapeMetrics(server.otlpHttpUrl));
    for (const pool of POOLS) for (const what of ['used', 'peak', 'limit'] as const) figure(all, pool, what);
    assert.equal(figure(all, 'query_pool', 'limit'), POOL_BYTES);
    assert.equal(figure(all, 'compactor_loan', 'limit'), POOL_BYTES / 2);
    assert.equal(figure(all, 'sink_buffers', 'limit'), logField(server.logs, 'sink ceiling sized', 'bytes'));
    assert.equal(figure(all, 'inflight_bodies', 'limit'), 268_435_456);
    assert.equal(figure(all, 'wal_backlog', 'limit'), 4_294_967_296);
    // Nothing has happened yet: every budget is empty and so is its high-water mark.
    for (const pool of POOLS) {
      assert.equal(figure(all, pool, 'used'), 0, `${pool} used`);
      assert.equal(figure(all, pool, 'peak'), 0, `${pool} peak`);
    }
    // Both listeners serve the same process-wide figures.
    const viaQuerier = budgets(await scrapeMetrics(server.queryUrl!));
    assert.equal(figure(viaQuerier, 'sink_buffers', 'limit'), figure(all, 'sink_buffers', 'limit'));
  });

  test('an export moves in-flight bodies, WAL backlog and sink buffers; a query moves the query pool; peaks stay', async () => {
    const body = Buffer.from(encodeLogsProtobuf(makeRecords(2000)));
    const res = await fetch(`${server.otlpHttpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    assert.equal(res.status, 200);
    await res.arrayBuffer();

    let all = budgets(await scrapeMetrics(server.otlpHttpUrl));
    // The body waited for its fsync, then left: the peak remembers it.
    assert.equal(figure(all, 'inflight_bodies', 'used'), 0);
    assert.equal(figure(all, 'inflight_bodies', 'peak'), body.length);
    // The sink buffers the rows, then the 1 s age flush stores them: used back to 0, peak kept, backlog drained.
    all = await until(
      async () => budgets(await scrapeMetrics(server.otlpHttpUrl)),
      (b) =>
        (b.get('sink_buffers.peak') ?? 0) > 0 && b.get('sink_buffers.used') === 0 && b.get('wal_backlog.used') === 0,
      'the sink to buffer the export and flush it',
    );
    const sinkPeak = figure(all, 'sink_buffers', 'peak');
    assert.ok(sinkPeak > 0 && sinkPeak < figure(all, 'sink_buffers', 'limit'), `sink peak ${sinkPeak}`);
    assert.ok(figure(all, 'wal_backlog', 'peak') > body.length, 'the backlog held the framed export before the flush');

    const answer = await postQuery(
      server.queryUrl!,
      'default',
      'true | range(2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z) | limit 100',
    );
    assert.equal(answer.status, 200, answer.text);
    const text = await scrapeMetrics(server.queryUrl!);
    all = budgets(text);
    // The query workers' footer caches stay reserved between queries (docs/design/query-governance.md, "Footer cache").
    const cached = sampleSum(text, 'sluice_query_pool_footer_cache') ?? 0;
    assert.equal(
      figure(all, 'query_pool', 'used') - cached,
      0,
      'the reservation is released once the response is sent',
    );
    const poolPeak = figure(all, 'query_pool', 'peak');
    assert.ok(poolPeak > 0 && poolPeak <= POOL_BYTES, `query pool peak ${poolPeak}`);
    // No merge ran (the partition is not sealed): the loan is still empty.
    assert.equal(figure(all, 'compactor_loan', 'peak'), 0);
  });
});

test('a querier-only process exports only the query pool budget', async () => {
  const dir = tempDir('budget-gauges-querier');
  const yaml =
    testConfigYaml({
      walDir: join(dir, 'wal'),
      dataDir: join(dir, 'data'),
      receiver: false,
      querier: true,
      querierLimits: { memory_pool_bytes: POOL_BYTES },
    }) + 'compaction:\n  enabled: false\n';
  const server = await spawnSluice(yaml, { dir });
  try {
    await server.waitReady();
    const all = budgets(await scrapeMetrics(server.queryUrl!));
    assert.deepEqual(
      [...all.keys()].sort(),
      ['query_pool.limit', 'query_pool.peak', 'query_pool.used'],
      'no receiver or compactor budget in a querier-only process',
    );
    assert.equal(figure(all, 'query_pool', 'limit'), POOL_BYTES);
    assert.ok(
      !server.logs.some((l) => l.includes('sink ceiling sized')),
      'no sink ceiling is planned without a receiver',
    );
  } finally {
    await server.stop();
  }
});
