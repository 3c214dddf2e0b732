/**
 * Isolation, end to end: both roles in one process; a real OTel SDK exporter streams logs while a dashboard lane
 * (2 clients polling normal queries every 500 ms) and a storm lane (8 clients sending over-budget queries back to
 * back) query it. Every export is acknowledged, every rejection is a typed kind, and the pool reads 0 at the end.
 * Duration: SLUICE_ISOLATION_SECS (default 60).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runGovernanceLoad, TYPED_REFUSALS } from '../helpers/governance-load.js';
import { queryHeldPoolBytes } from '../helpers/metrics.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const SECS = Number(process.env.SLUICE_ISOLATION_SECS ?? 60);

test(
  `isolation: exports are all acknowledged while 2 dashboard and 8 storm clients hammer the querier for ${SECS} s`,
  { timeout: (SECS + 120) * 1000 },
  async () => {
    const dir = tempDir('isolation');
    const server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        flushAgeSecs: 1,
        querier: true,
        querierLimits: {
          memory_pool_bytes: 48 * 1024 * 1024,
          max_concurrent_queries: 4,
          max_queued_queries: 8,
          queue_timeout_ms: 1500,
          max_result_bytes: 2 * 1024 * 1024,
        },
      }),
      { dir },
    );
    try {
      await server.waitReady();
      const report = await runGovernanceLoad({
        otlpHttpUrl: server.otlpHttpUrl,
        otlpGrpcAddress: server.otlpGrpcAddress,
        queryUrl: server.queryUrl!,
        tenant: 'load',
        durationMs: SECS * 1000,
        dashboardClients: 2,
        dashboardIntervalMs: 500,
        stormClients: 8,
        heavyQueries: [
          'true | limit 10000',
          'contains(body, "load") | limit 10000',
          'true | sort ts desc | limit 10000',
        ],
        lightQueries: ['severity >= error | limit 5', 'true | count by service', 'contains(body, "took 7 ms") | count'],
      });
      console.log(JSON.stringify(report));
      assert.equal(report.exportsFailed, 0, `every export acknowledged: ${report.exportErrors.join('; ')}`);
      assert.ok(report.exportsAcked > 0);
      for (const kind of Object.keys(report.rejections))
        assert.ok(TYPED_REFUSALS.has(kind), `rejection kind ${kind} is a typed governance kind`);
      // The querier keeps idle connections 65 s, longer than this load runs: no request meets a closed socket.
      assert.equal(
        report.queryTransportRetries,
        0,
        `no query request failed at the transport: ${report.queryTransportErrors.join('; ')}`,
      );
      assert.ok(Object.values(report.rejections).reduce((a, b) => a + b, 0) > 0, 'the heavy queries were refused');
      assert.ok(report.lanes.dashboard.ok > 0, 'normal queries were served');
      assert.equal(await queryHeldPoolBytes(server.queryUrl!), 0, 'the pool reads 0 at the end');
    } finally {
      const exit = await server.stop();
      assert.equal(exit.code, 0);
    }
  },
);
