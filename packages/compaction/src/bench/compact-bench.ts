/**
 * @module bench/compact-bench
 * Measures one compaction of a partition of realistic rows on the local store: wall time, rows/s and the peak
 * heap + array-buffer size sampled during the run (a coarse check of the memory bound).
 * Run: `npx tsc -b packages/compaction && node packages/compaction/dist/bench/compact-bench.js [files] [rowsPerFile]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalObjectStore } from '@sluice/storage';
import { compactPartition } from '../compact-partition.js';
import { SEALED_HOUR_MS, partitionPrefix, rowsFor, writeDataFile } from '../testing/index.js';

const files = Number(process.argv[2] ?? 4);
const rowsPerFile = Number(process.argv[3] ?? 70_000);
const root = await mkdtemp(join(tmpdir(), 'sluice-compact-bench-'));
try {
  const store = createLocalObjectStore({ root });
  const prefix = partitionPrefix('bench', SEALED_HOUR_MS);
  for (let f = 0; f < files; f++)
    await writeDataFile(store, prefix, rowsFor(rowsPerFile, 1 + f, SEALED_HOUR_MS, 'bench'));
  globalThis.gc?.();
  const mem = () => process.memoryUsage();
  const base = mem();
  let peak = 0;
  const sampler = setInterval(() => {
    const m = mem();
    peak = Math.max(peak, m.heapUsed + m.arrayBuffers);
  }, 20);
  const started = performance.now();
  const outcome = await compactPartition(store, prefix, { now: Date.now, graceSecs: 900 });
  const ms = performance.now() - started;
  clearInterval(sampler);
  const rows = outcome.status === 'committed' ? outcome.rows : 0;
  process.stdout.write(
    `${JSON.stringify({
      files,
      rows,
      status: outcome.status,
      seconds: +(ms / 1000).toFixed(2),
      rowsPerSecond: Math.round(rows / (ms / 1000)),
      baseMiB: Math.round((base.heapUsed + base.arrayBuffers) / 2 ** 20),
      peakMiB: Math.round(peak / 2 ** 20),
      peakRssMiB: Math.round(mem().rss / 2 ** 20),
    })}\n`,
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
