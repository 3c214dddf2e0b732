/**
 * `npm run bench:ingest`: sustained OTLP/HTTP protobuf ingest against a real `sluice serve` (fsync before ack,
 * default 100 ms group commit, mining and Parquet on), 1000-record batches from several concurrent exporters.
 * Prints acknowledged records/s, ack latency p50/p99, and how far the sink (mining + Parquet + upload) kept up.
 *
 * Env: BENCH_SECS (default 20), BENCH_EXPORTERS (default 8), BENCH_BATCH (default 1000), BENCH_GROUP_COMMIT_MS (100),
 * BENCH_MIN_FREE_DISK_PERCENT (receiver.limits.min_free_disk_percent, default 10; 0 runs without the disk guard).
 */
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { makeRecords } from '../helpers/records.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const SECS = Number(process.env.BENCH_SECS ?? 20);
const EXPORTERS = Number(process.env.BENCH_EXPORTERS ?? 8);
const BATCH = Number(process.env.BENCH_BATCH ?? 1000);
const GROUP_COMMIT_MS = Number(process.env.BENCH_GROUP_COMMIT_MS ?? 100);
const MIN_FREE_DISK_PERCENT = Number(process.env.BENCH_MIN_FREE_DISK_PERCENT ?? 10);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function flushedRecords(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('sluice_sink_flush_records')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

async function main(): Promise<void> {
  const dir = tempDir('bench-ingest');
  const server = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, 'wal'),
      dataDir: join(dir, 'data'),
      // The shipped flush cadence (receiver.sink.flush_interval_ms 1000, flush_age_secs 300): the drain after the
      // load is then what an operator sees, not a test's 5 s age trigger.
      flushAgeSecs: null,
      flushIntervalMs: null,
      groupCommitMs: GROUP_COMMIT_MS,
      receiverLimits: { min_free_disk_percent: MIN_FREE_DISK_PERCENT },
    }),
    { dir },
  );
  await server.waitReady();
  const payloads = Array.from({ length: 16 }, (_, i) =>
    Buffer.from(encodeLogsProtobuf(makeRecords(BATCH, { start: i * BATCH }))),
  );
  const agent = new Agent({ keepAlive: true, maxSockets: EXPORTERS });
  const url = new URL(`${server.otlpHttpUrl}/v1/logs`);
  const latencies: number[] = [];
  let acked = 0;
  let failed = 0;
  const deadline = Date.now() + SECS * 1000;
  const started = performance.now();
  const send = (body: Buffer): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: EXPORTERS }, async (_, e) => {
      for (let n = e; Date.now() < deadline; n += EXPORTERS) {
        const t0 = performance.now();
        const status = await send(payloads[n % payloads.length]!);
        latencies.push(performance.now() - t0);
        if (status === 200) acked += BATCH;
        else failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const flushedAtEnd = await flushedRecords(server.otlpHttpUrl);
  // Let the sink drain, to see how long it trails the acks.
  const drainStart = performance.now();
  let flushed = flushedAtEnd;
  while (flushed < acked && performance.now() - drainStart < 120_000) {
    await new Promise((r) => setTimeout(r, 500));
    flushed = await flushedRecords(server.otlpHttpUrl);
  }
  const drainSecs = (performance.now() - drainStart) / 1000;
  latencies.sort((a, b) => a - b);
  await server.stop();
  agent.destroy();
  const lines = [
    `ingest bench: OTLP/HTTP protobuf, ${EXPORTERS} exporters, ${BATCH}-record batches, group commit ${GROUP_COMMIT_MS} ms, disk guard ${MIN_FREE_DISK_PERCENT === 0 ? 'off' : `${MIN_FREE_DISK_PERCENT} %`}, shipped flush cadence, ${seconds.toFixed(1)} s`,
    `  acknowledged: ${acked} records (${(acked / seconds).toFixed(0)} records/s), ${failed} non-200 responses`,
    `  ack latency: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`,
    `  sink: ${flushedAtEnd} records in Parquet when the load stopped (${(flushedAtEnd / seconds).toFixed(0)} records/s); all ${flushed} after a further ${drainSecs.toFixed(1)} s`,
    `  end to end: ${(flushed / (seconds + drainSecs)).toFixed(0)} records/s (every record in Parquet over load plus drain)`,
  ];
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
