/**
 * `npm run bench:query`: builds a corpus of BENCH_ROWS (default 1,000,000) mined log records as Parquet in a
 * local store (the layout the receiver writes), starts `sluice serve` with only the querier, and times a query
 * suite against Sluice (/v1/query) and DuckDB over the same files in the same run. Prints each Sluice/DuckDB
 * ratio, the geometric mean of the original six, and per query the peak pool reservation vs the server's peak
 * RSS growth. Two needle queries follow the six: a request id that occurs once, and a trace id. Where Sluice does
 * more than the plain SQL (a `limit` query also reports the full match count), a fair twin of the SQL counts
 * every match too; the fair set's geometric mean uses those twins.
 *
 * The querier runs one query worker (max_concurrent_queries 1) so every timed run hits a warm worker, and
 * `query_parallelism` BENCH_PARALLELISM (default 1, the product default: one worker per query; 2 adds one scan helper,
 * which count and min/max aggregations borrow on the otherwise idle querier).
 *
 * Each query also reports its CPU time: every thread of the server for Sluice (the HTTP request included), every
 * thread of this process for DuckDB; their geometric mean is steadier than wall time on a shared machine.
 *
 * Env: BENCH_ROWS, BENCH_RUNS (timed runs per query, default 3; the median is reported), BENCH_PARALLELISM.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseJsonExact } from '@sluice/core';
import { field } from '../helpers/query-client.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import {
  buildQueryCorpus,
  cpuMs,
  median,
  needleSuite,
  querySuite,
  vmHwmKb,
  vmRssKb,
  type CorpusNeedles,
} from './bench-corpus.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const PARALLELISM = Number(process.env.BENCH_PARALLELISM ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TENANT = 'bench';

async function buildCorpus(root: string): Promise<CorpusNeedles> {
  return buildQueryCorpus(root, { rows: ROWS, tenant: TENANT });
}

async function main(): Promise<void> {
  const dir = tempDir('bench-query');
  const dataDir = join(dir, 'data');
  const t0 = performance.now();
  const { needle, traceId } = await buildCorpus(dataDir);
  console.log(
    `corpus: ${ROWS} rows written in ${((performance.now() - t0) / 1000).toFixed(1)} s; needle template ${needle}`,
  );

  const server = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, 'wal'),
      dataDir,
      receiver: false,
      querier: true,
      querierLimits: {
        memory_pool_bytes: 4 * 1024 ** 3,
        max_rows: 10000,
        max_concurrent_queries: 1,
        query_parallelism: PARALLELISM,
      },
    }),
    { dir },
  );
  await server.waitReady();
  const pid = server.child.pid!;
  const url = server.queryUrl!;
  const glob = join(dataDir, 'data', '**', '*.parquet');
  const duck = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await duck.connect();
  await conn.run(`CREATE VIEW t AS SELECT * FROM read_parquet('${glob}')`);

  const original = querySuite(needle);
  const suite = [...original, ...needleSuite(traceId)];

  const lines: string[] = [];
  const ratios: number[] = [];
  /** Per query, the ratio against the fair twin where there is one, else against the plain SQL. */
  const fairRatios: number[] = [];
  /** Per query, Sluice's CPU time (every thread of the server) over DuckDB's (every thread of this process). */
  const cpuRatios: number[] = [];
  for (const q of suite) {
    const sluiceMs: number[] = [];
    const duckMs: number[] = [];
    const sluiceCpu: number[] = [];
    const duckCpu: number[] = [];
    const fairMs: number[] = [];
    let peakPool = 0;
    let rssGrowthKb = 0;
    let stats = '';
    for (let run = 0; run < RUNS + 1; run++) {
      const before = vmRssKb(pid);
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // reset VmHWM so it measures this query
      // Sluice's time is request → whole body received; the client-side exact JSON parse is not counted.
      const c0 = cpuMs(pid);
      const s0 = performance.now();
      const res = await fetch(`${url}/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-sluice-tenant': TENANT },
        body: JSON.stringify({ query: q.sluice }),
      });
      const text = await res.text();
      const s1 = performance.now();
      const c1 = cpuMs(pid);
      const parsed = parseJsonExact(text);
      const answer = { status: res.status, text, json: parsed.ok ? parsed.value : null };
      if (answer.status !== 200) throw new Error(`${q.name}: ${answer.status} ${answer.text.slice(0, 200)}`);
      const u0 = process.cpuUsage();
      const d0 = performance.now();
      await conn.runAndReadAll(q.duck);
      const d1 = performance.now();
      const u1 = process.cpuUsage(u0);
      if (q.duckFair !== undefined) await conn.runAndReadAll(q.duckFair);
      const d2 = performance.now();
      if (run === 0) continue; // warm-up
      sluiceMs.push(s1 - s0);
      duckMs.push(d1 - d0);
      sluiceCpu.push(c1 - c0);
      duckCpu.push((u1.user + u1.system) / 1000);
      if (q.duckFair !== undefined) fairMs.push(d2 - d1);
      rssGrowthKb = Math.max(rssGrowthKb, vmHwmKb(pid) - before);
      const st = field(answer.json, 'stats');
      stats = `scanned ${String(field(st, 'row_groups_scanned'))}, pruned ${String(field(st, 'row_groups_pruned'))}, read ${(Number(field(st, 'bytes_read')) / 1048576).toFixed(1)} MiB`;
      const peak = server.logs
        .map((l) => /"msg":"query finished".*"peak_bytes":(\d+)/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .at(-1);
      peakPool = Math.max(peakPool, Number(peak?.[1] ?? 0));
    }
    const s = median(sluiceMs);
    const d = median(duckMs);
    const f = fairMs.length > 0 ? median(fairMs) : d;
    ratios.push(s / d);
    fairRatios.push(s / f);
    const fair =
      fairMs.length > 0
        ? `  fair twin ${f.toFixed(0).padStart(5)} ms  fair ratio ${(s / f).toFixed(2).padStart(6)}`
        : '';
    lines.push(
      `${q.name.padEnd(30)} sluice ${s.toFixed(0).padStart(6)} ms  duckdb ${d.toFixed(0).padStart(5)} ms  ratio ${(s / d).toFixed(2).padStart(6)}${fair}  ` +
        `peak pool ${(peakPool / 1048576).toFixed(1)} MiB, peak RSS growth ${(rssGrowthKb / 1024).toFixed(1)} MiB  (${stats})  ` +
        `cpu ms sluice ${median(sluiceCpu).toFixed(0)} duckdb ${median(duckCpu).toFixed(0)}`,
    );
    cpuRatios.push(median(sluiceCpu) / Math.max(median(duckCpu), 0.001)); // a 0 ms reading would break the mean
  }
  const geoMean = (xs: readonly number[]): number => Math.exp(xs.reduce((a, r) => a + Math.log(r), 0) / xs.length);
  const geo = geoMean(ratios.slice(0, original.length));
  const fairGeo = geoMean(fairRatios.slice(0, original.length));
  console.log(
    `query bench: ${ROWS} rows, median of ${RUNS} runs after a warm-up, query_parallelism ${PARALLELISM}, DuckDB with 2 threads`,
  );
  for (const l of lines) console.log('  ' + l);
  console.log(`  geometric mean Sluice/DuckDB of the original ${original.length}: ${geo.toFixed(2)}`);
  console.log(
    `  geometric mean of the fair set (the ${original.length}, each against its fair twin where it has one): ${fairGeo.toFixed(2)}`,
  );
  console.log(
    `  geometric mean of CPU time Sluice/DuckDB, the original ${original.length} (plain SQL; steadier than wall time on a busy machine): ${geoMean(cpuRatios.slice(0, original.length)).toFixed(2)}`,
  );
  conn.closeSync();
  duck.closeSync();
  await server.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
