/**
 * @module bench/engine-bench
 * Measures the executor over ~1M realistic rows (16 files × 65,536 rows, 4 hour partitions, local store):
 * a full-scan `count by template_id` and a substring `contains(body, …) | count`, reporting wall time, the peak
 * reservation (pool slot peak) and process memory growth. Also compares hyparquet's string decoding + `includes`
 * with `utf8: false` byte decoding + `Buffer.indexOf` for the substring scan of one file.
 *
 * Run: `npx tsc -b packages/engine && node --expose-gc packages/engine/dist/bench/engine-bench.js`
 * (hyparquet and @bokuweb/zstd-wasm are imported directly here, for the utf8 comparison only).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parquetRead } from 'hyparquet';
import type { AsyncBuffer } from 'hyparquet';
import { decompress } from '@bokuweb/zstd-wasm';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import {
  createLocalObjectStore,
  dataFileKey,
  encodeLogsParquet,
  ensureZstd,
  openParquetFile,
  sourceFromStore,
  uuidv7,
} from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { executeQuery } from '../execute.js';

const out = (s: string): void => {
  process.stdout.write(`${s}\n`);
};
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);
const MB = (n: number): string => `${(n / 1048576).toFixed(1)} MB`;

const T0 = 1_764_547_200_000_000_000n; // 2025-12-01T00:00:00Z
const H = 3_600_000_000_000n;
const FILES = Number(process.env.BENCH_FILES ?? 16);
const ROWS = 65_536;

const dir = await mkdtemp(join(tmpdir(), 'engine-bench-'));
try {
  const store = createLocalObjectStore({ root: dir });
  let t = performance.now();
  const keys: { key: string; size: number }[] = [];
  for (let f = 0; f < FILES; f++) {
    const start = T0 + BigInt(Math.floor(f / 4)) * H;
    const rows = sampleRows(ROWS, { seed: f + 1, startNs: start, tenant: 'acme' });
    const bytes = await encodeLogsParquet(rows);
    const key = dataFileKey('acme', start, uuidv7());
    await store.put(key, bytes);
    keys.push({ key, size: bytes.byteLength });
  }
  out(
    `generated ${FILES * ROWS} rows in ${FILES} files (${MB(keys.reduce((a, k) => a + k.size, 0))}) in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );

  const pool = createMemoryPool({ sizeBytes: 2 * 1024 ** 3 });
  const range = 'range(2025-12-01T00:00:00Z, 2025-12-01T04:00:00Z)';
  for (const dsl of [`true | ${range} | count by template_id`, `contains(body, "timeout") | ${range} | count`]) {
    const parsed = parseQuery(dsl);
    if (!parsed.ok) throw new Error(parsed.error.message);
    for (let run = 0; run < 3; run++) {
      gc();
      const base = process.memoryUsage();
      let peakRss = base.rss;
      let peakHeap = base.heapUsed + base.arrayBuffers;
      const timer = setInterval(() => {
        const m = process.memoryUsage();
        peakRss = Math.max(peakRss, m.rss);
        peakHeap = Math.max(peakHeap, m.heapUsed + m.arrayBuffers);
      }, 5);
      const reservation = pool.createQuery(`bench-${run}`);
      t = performance.now();
      const o = await executeQuery({
        store,
        tenant: 'acme',
        query: parsed.value,
        nowNs: T0 + 4n * H,
        defaultWindowSecs: 3600,
        limits: {
          defaultRows: 1000,
          maxRows: 10_000,
          maxListedObjects: 100_000,
          maxFiles: 10_000,
          maxResultBytes: 64 << 20,
        },
        reservation,
      });
      const ms = performance.now() - t;
      clearInterval(timer);
      const peak = pool.consumers().find((c) => c.queryId === `bench-${run}`)?.peakBytes ?? 0;
      if (o.status !== 'ok') throw new Error(JSON.stringify(o.error));
      const head = o.body.toString('utf8').slice(0, 120);
      o.budget.release();
      reservation.releaseAll();
      out(
        `${dsl}: ${ms.toFixed(0)} ms, rows=${o.rows}, stats=${JSON.stringify(o.stats)}, peak reservation ${MB(peak)}, ` +
          `peak rss +${MB(peakRss - base.rss)}, peak heap+arrayBuffers +${MB(peakHeap - base.heapUsed - base.arrayBuffers)}` +
          (run === 0 ? `\n  ${head}…` : ''),
      );
    }
  }

  // utf8 strings + includes vs utf8:false bytes + Buffer.indexOf, one file's body column, decode + search.
  await ensureZstd();
  const first = keys[0];
  if (first) {
    const handle = await openParquetFile(sourceFromStore(store, first.key, first.size));
    const file: AsyncBuffer = {
      byteLength: first.size,
      slice: async (s, e) => {
        const b = await store.getRange(first.key, s, e ?? first.size);
        return b.slice().buffer;
      },
    };
    const needle = 'timeout';
    const needleBytes = Buffer.from(needle);
    for (let run = 0; run < 3; run++) {
      for (const utf8 of [true, false]) {
        gc();
        t = performance.now();
        let hits = 0;
        for (const g of handle.rowGroups) {
          await parquetRead({
            file,
            metadata: handle.metadata,
            columns: ['body'],
            rowStart: g.rowStart,
            rowEnd: g.rowStart + g.numRows,
            utf8,
            compressors: {
              ZSTD: (input: Uint8Array, n: number) => decompress(input, { defaultHeapSize: Math.max(n, 1) }),
            },
            onChunk: (chunk) => {
              const data = chunk.columnData as ArrayLike<unknown>;
              for (let i = 0; i < data.length; i++) {
                const v = data[i];
                if (typeof v === 'string') {
                  if (v.includes(needle)) hits++;
                } else if (v instanceof Uint8Array) {
                  if (Buffer.from(v.buffer, v.byteOffset, v.byteLength).indexOf(needleBytes) >= 0) hits++;
                }
              }
            },
          });
        }
        out(`substring scan, 65,536 rows, utf8=${utf8}: ${(performance.now() - t).toFixed(0)} ms, hits=${hits}`);
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
