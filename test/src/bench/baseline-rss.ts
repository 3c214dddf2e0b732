/**
 * `npm run bench:baseline`: the resident baseline of a both-roles `sluice serve` (receiver, querier and compactor in
 * one process, default limits), the figure the sink ceiling's derivation leaves free (docs/deployment.md, "The
 * baseline"). Reads `VmRSS` and `VmHWM` from `/proc/<pid>/status`: once ready and idle, then after light ingest
 * (one exporter, 100-record OTLP/HTTP batches, 20 per second) with a query every second, and at the end.
 *
 * Env: BASELINE_IDLE_SECS (default 10), BASELINE_INGEST_SECS (default 30).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { makeRecords } from '../helpers/records.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const IDLE_SECS = Number(process.env.BASELINE_IDLE_SECS ?? 10);
const INGEST_SECS = Number(process.env.BASELINE_INGEST_SECS ?? 30);

/** `VmRSS` and `VmHWM` of `pid`, in bytes. */
function residentOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') * 1024, hwm: kib('VmHWM') * 1024 };
}

const mib = (bytes: number): string => (bytes / 1_048_576).toFixed(1);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const dir = tempDir('bench-baseline');
  const server = await spawnSluice(
    testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), flushAgeSecs: 5, querier: true }),
    { dir },
  );
  await server.waitReady();
  const pid = server.child.pid!;
  await sleep(IDLE_SECS * 1000);
  const idle = residentOf(pid);

  const payloads = Array.from({ length: 20 }, (_, i) =>
    Buffer.from(encodeLogsProtobuf(makeRecords(100, { start: i * 100 }))),
  );
  const deadline = Date.now() + INGEST_SECS * 1000;
  let sent = 0;
  let queries = 0;
  let lastQuery = 0;
  let maxRss = idle.rss;
  while (Date.now() < deadline) {
    const res = await fetch(`${server.otlpHttpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: payloads[sent % payloads.length],
    });
    await res.arrayBuffer();
    if (res.status === 200) sent++;
    if (Date.now() - lastQuery >= 1000) {
      lastQuery = Date.now();
      const q = await fetch(`${server.queryUrl}/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'true | range(2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z) | limit 100' }),
      });
      await q.arrayBuffer();
      if (q.status === 200) queries++;
    }
    maxRss = Math.max(maxRss, residentOf(pid).rss);
    await sleep(50);
  }
  await sleep(6000); // one age flush
  const after = residentOf(pid);
  await server.stop();
  console.log(
    [
      `baseline RSS of a both-roles sluice serve (pid ${pid}, default limits)`,
      `  idle after ready + ${IDLE_SECS} s: VmRSS ${mib(idle.rss)} MiB, VmHWM ${mib(idle.hwm)} MiB`,
      `  light ingest ${INGEST_SECS} s (${sent} batches of 100 records, ${queries} queries answered 200): max VmRSS ${mib(maxRss)} MiB`,
      `  after a flush: VmRSS ${mib(after.rss)} MiB, VmHWM ${mib(after.hwm)} MiB`,
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
