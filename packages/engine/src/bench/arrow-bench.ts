/**
 * @module bench/arrow-bench
 * JSON against Arrow answers (docs/design/query-engine.md, "Arrow results") for the same statements over one
 * realistic file (65,536 rows, local store), in process, interleaved A B A B: wall time of `executeQuery`, the
 * body's size and the query's peak reservation, for `limit 10000` records, a projected `limit 10000`, and a
 * `count by template_id, severity`.
 *
 * Run: `npx tsc -b packages/engine && node --expose-gc packages/engine/dist/bench/arrow-bench.js`
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, ensureZstd, uuidv7 } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import type { ResultFormat } from '../execute.js';
import { executeQuery } from '../execute.js';

const out = (s: string): void => {
  process.stdout.write(`${s}\n`);
};
const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => undefined);
const T0 = 1_764_547_200_000_000_000n; // 2025-12-01T00:00:00Z
const H = 3_600_000_000_000n;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const W = 'range(2025-12-01T00:00:00Z, 2025-12-01T01:00:00Z)';
const STATEMENTS = [
  `true | ${W} | limit 10000`,
  `true | ${W} | project ts, severity, template_id, body | limit 10000`,
  `true | ${W} | count by template_id, severity`,
];

const dir = await mkdtemp(join(tmpdir(), 'arrow-bench-'));
try {
  await ensureZstd();
  const store = createLocalObjectStore({ root: dir });
  const rows = sampleRows(65_536, { seed: 1, startNs: T0, tenant: 'acme' });
  await store.put(dataFileKey('acme', T0, uuidv7()), await encodeLogsParquet(rows));
  const pool = createMemoryPool({ sizeBytes: 1 << 30 });
  let n = 0;
  const once = async (text: string, format: ResultFormat): Promise<{ ms: number; bytes: number; peak: number }> => {
    const parsed = parseQuery(text);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const id = `bench-${++n}`;
    const reservation = pool.createQuery(id);
    gc();
    const t = performance.now();
    const outcome = await executeQuery({
      store,
      tenant: 'acme',
      query: parsed.value,
      nowNs: T0 + H,
      defaultWindowSecs: 3600,
      limits: {
        defaultRows: 100,
        maxRows: 100_000,
        maxListedObjects: 1000,
        maxFiles: 1000,
        maxResultBytes: 1 << 30,
      },
      reservation,
      format,
    });
    const ms = performance.now() - t;
    if (outcome.status !== 'ok') throw new Error(`${text}: ${outcome.error.kind}`);
    const peak = pool.consumers().find((c) => c.queryId === id)?.peakBytes ?? 0;
    outcome.budget.release();
    reservation.releaseAll();
    return { ms, bytes: outcome.body.byteLength, peak };
  };
  for (const text of STATEMENTS) await once(text, 'json'); // warm: footers, zstd, JIT
  for (const text of STATEMENTS) {
    out(`\n${text}`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const format of ['json', 'arrow'] as const) {
        const m = await once(text, format);
        out(
          `  ${format.padEnd(5)} ${m.ms.toFixed(0).padStart(5)} ms  body ${(m.bytes / 1024).toFixed(0).padStart(6)} KiB  ` +
            `peak ${(m.peak / 1048576).toFixed(1)} MiB`,
        );
      }
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
