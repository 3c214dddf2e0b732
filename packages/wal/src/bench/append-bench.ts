/**
 * @module bench/append-bench
 * Measures acknowledged appends/s and MiB/s: 4 concurrent closed-loop appenders (each awaits its append
 * before the next) of 400 KiB payloads, for groupCommitMs 100 and 5, on real files with real fdatasync.
 * Usage: node packages/wal/dist/bench/append-bench.js [seconds=5] [dir=os tmpdir] [appenders=4]
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openWal } from '../wal.js';

const seconds = Number(process.argv[2] ?? 5);
const base = process.argv[3] || tmpdir();
const PAYLOAD = 400 * 1024;
const APPENDERS = Number(process.argv[4] ?? 4);

async function run(groupCommitMs: number): Promise<void> {
  const dir = fs.mkdtempSync(join(base, 'sluice-wal-bench-'));
  try {
    const wal = await openWal({ dir, groupCommitMs, segmentBytes: 128 * 1024 * 1024 });
    const payload = new Uint8Array(PAYLOAD).fill(7);
    const deadline = Date.now() + seconds * 1000;
    const latencies: number[] = [];
    let count = 0;
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: APPENDERS }, async () => {
        while (Date.now() < deadline) {
          const t = performance.now();
          await wal.append(payload);
          latencies.push(performance.now() - t);
          count++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    loopDelay.disable();
    const s = wal.stats();
    await wal.close();
    latencies.sort((a, b) => a - b);
    const p = (q: number): string =>
      (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(1);
    process.stdout.write(
      `appenders=${APPENDERS} groupCommitMs=${groupCommitMs}: ${(count / elapsed).toFixed(1)} appends/s, ` +
        `${((count * PAYLOAD) / elapsed / 1024 / 1024).toFixed(1)} MiB/s, ${s.syncs} fdatasyncs for ${count} appends, ` +
        `latency p50 ${p(0.5)} ms p99 ${p(0.99)} ms, event-loop delay p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms max ${(loopDelay.max / 1e6).toFixed(1)} ms\n`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await run(100);
await run(5);
