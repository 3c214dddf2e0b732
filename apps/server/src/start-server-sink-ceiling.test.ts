/**
 * @module start-server-sink-ceiling.test
 * The derived sink ceiling reaches the sink: a real receiver-only gateway (in process, listeners on 127.0.0.1 port 0,
 * real WAL and local store) over a cgroup fixture of 360 MiB derives a 40 MiB ceiling (0.5 × 360 MiB, cut to the
 * limit less the 320 MiB baseline), and 48 MiB of exports make the sink flush with trigger `ceiling` long before
 * `flush_bytes` (1 GiB) or `flush_age_secs` (1 h) could. Its `/metrics` shows only the receiver's three budgets.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '@sluice/config';
import { cgroupFixture, type CgroupFixture } from '@sluice/limits/testing';
import { loadAccessGate } from './access-setup.js';
import { startServer } from './start-server.js';

const MiB = 1_048_576;
const cleanup: Array<() => void> = [];
after(() => cleanup.forEach((c) => c()));

/** One OTLP/JSON export of `n` records with `bodyBytes`-byte bodies. */
function exportJson(n: number, bodyBytes: number, seed: number): string {
  const body = 'x'.repeat(bodyBytes);
  const records = Array.from({ length: n }, (_, i) => ({
    timeUnixNano: String(1_767_225_600_000_000_000n + BigInt(seed * n + i) * 1_000_000n),
    body: { stringValue: body },
  }));
  return JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] });
}

async function metric(url: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

void test('a receiver-only process under a 360 MiB cgroup limit derives a 40 MiB sink ceiling and the sink flushes at it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-sink-ceiling-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  const fixture: CgroupFixture = cgroupFixture({
    'proc/self/cgroup': '0::/sluice\n',
    'proc/meminfo': 'MemTotal:       4194304 kB\n',
    'sys/fs/cgroup/cgroup.controllers': 'memory\n',
    'sys/fs/cgroup/sluice/memory.max': `${360 * MiB}\n`,
  });
  cleanup.push(() => fixture.remove());
  const parsed = parseConfig({
    fileText: `storage: { backend: local, local: { root: ${JSON.stringify(join(dir, 'data'))} } }
receiver:
  http_addr: 127.0.0.1:0
  grpc_addr: 127.0.0.1:0
  wal_dir: ${JSON.stringify(join(dir, 'wal'))}
  sink: { flush_age_secs: 3600, flush_interval_ms: 0, flush_bytes: 1073741824 }
  limits: { max_request_bytes: 16777216, max_decompressed_bytes: 16777216 }
querier: { enabled: false }
compaction: { enabled: false }
tenancy: { default_tenant: default }
`,
    env: {},
  });
  assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.error));
  const access = await loadAccessGate(parsed.value);
  assert.ok(access.ok);
  const server = await startServer(parsed.value, 'test', {
    access: access.value,
    memorySource: fixture.source,
    openFileLimit: 1024,
  });
  try {
    const url = `http://127.0.0.1:${server.receiver!.httpAddress.port}`;
    assert.equal(await metric(url, 'sluice_budget_limit', 'pool="sink_buffers"'), 40 * MiB);
    const pools = new Set(
      [...(await (await fetch(`${url}/metrics`)).text()).matchAll(/sluice_budget_pool="([a-z_]+)"/g)].map((m) => m[1]),
    );
    assert.deepEqual(
      [...pools].sort(),
      ['inflight_bodies', 'sink_buffers', 'wal_backlog'],
      'a receiver-only process has only its own budgets',
    );
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${url}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: exportJson(1000, 12 * 1024, i),
      });
      assert.equal(res.status, 200, await res.text());
    }
    const deadline = Date.now() + 60_000;
    let flushed = 0;
    while ((flushed = await metric(url, 'sluice_sink_flush_records_total', 'trigger="ceiling"')) === 0) {
      assert.ok(Date.now() < deadline, 'no ceiling flush within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(flushed >= 3000, `the ceiling flush took the buffered records (${flushed})`);
    assert.ok((await metric(url, 'sluice_budget_peak', 'pool="sink_buffers"')) >= 40 * MiB);
  } finally {
    await server.stop();
  }
});
