/**
 * `npm run bench:query`: builds a corpus of BENCH_ROWS (default 1,000,000) mined log records as Parquet in a
 * local store (the layout the receiver writes), starts `sluice serve` with only the querier, and times a query
 * suite against Sluice (/v1/query) and DuckDB over the same files in the same run. Prints each Sluice/DuckDB
 * ratio and their geometric mean, and per query the peak pool reservation vs the server's peak RSS growth.
 *
 * Env: BENCH_ROWS, BENCH_RUNS (timed runs per query, default 3; the median is reported).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createMiner } from '@sluice/miner';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type StoredLogRow } from '@sluice/storage';
import { field, postQuery } from '../helpers/query-client.js';
import { corpusRecords } from '../helpers/query-corpus.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const TENANT = 'bench';
const HOUR_NS = 3_600_000_000_000n;

async function buildCorpus(root: string): Promise<{ needle: bigint }> {
  const store = createLocalObjectStore({ root });
  const miner = createMiner();
  const records = corpusRecords(0, ROWS);
  // corpusRecords spans 3 hours; write one file per (hour, 250k-row chunk), rows in time order.
  let needle = 0n;
  for (let start = 0; start < records.length; start += 250_000) {
    const chunk = records.slice(start, start + 250_000);
    const byHour = new Map<bigint, StoredLogRow[]>();
    for (const record of chunk) {
      const mined = miner.mine(TENANT, record);
      if (needle === 0n && (record.body as { value: string }).value.startsWith('connection to')) needle = mined.templateId;
      const hour = record.timeUnixNano / HOUR_NS;
      const list = byHour.get(hour) ?? [];
      list.push({ tenantId: TENANT, record, mined });
      byHour.set(hour, list);
    }
    for (const rows of byHour.values()) {
      await store.put(dataFileKey(TENANT, rows[0]!.record.timeUnixNano, uuidv7()), await encodeLogsParquet(rows));
    }
  }
  return { needle };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function vmHwmKb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}
function vmRssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0);
}

async function main(): Promise<void> {
  const dir = tempDir('bench-query');
  const dataDir = join(dir, 'data');
  const t0 = performance.now();
  const { needle } = await buildCorpus(dataDir);
  console.log(`corpus: ${ROWS} rows written in ${((performance.now() - t0) / 1000).toFixed(1)} s; needle template ${needle}`);

  const server = await spawnSluice(
    testConfigYaml({ walDir: join(dir, 'wal'), dataDir, receiver: false, querier: true, querierLimits: { memory_pool_bytes: 4 * 1024 ** 3, max_rows: 10000 } }),
    { dir },
  );
  await server.waitReady();
  const pid = server.child.pid!;
  const url = server.queryUrl!;
  const glob = join(dataDir, 'data', '**', '*.parquet');
  const duck = await DuckDBInstance.create(':memory:', { threads: '2' });
  const conn = await duck.connect();
  await conn.run(`CREATE VIEW t AS SELECT * FROM read_parquet('${glob}')`);

  const W = 'range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z)';
  const NEEDLE_W = 'range(2026-03-01T11:00:00Z, 2026-03-01T11:30:00Z)';
  const suite: { name: string; sluice: string; duck: string }[] = [
    { name: 'count by template_id', sluice: `true | ${W} | count by template_id`, duck: 'SELECT template_id, count(*) FROM t GROUP BY 1' },
    {
      name: 'count by service, bucket(5m)',
      sluice: `true | ${W} | count by service, bucket(5m)`,
      duck: `SELECT "resource.service.name", epoch_ns(effective_time_unix_nano) // 300000000000 AS b, count(*) FROM t GROUP BY 1, 2`,
    },
    { name: 'substring search, limit 100', sluice: `contains(body, "timed out") | ${W} | limit 100`, duck: `SELECT * FROM t WHERE body LIKE '%timed out%' LIMIT 100` },
    { name: 'full-scan substring count', sluice: `contains(body, "timed out") | ${W} | count`, duck: `SELECT count(*) FROM t WHERE body LIKE '%timed out%'` },
    {
      name: 'windowed template needle',
      sluice: `template_id == ${needle} | ${NEEDLE_W} | limit 100`,
      duck: `SELECT * FROM t WHERE template_id = ${needle} AND effective_time_unix_nano >= '2026-03-01 11:00:00' AND effective_time_unix_nano < '2026-03-01 11:30:00' LIMIT 100`,
    },
    { name: '10k-row materialization', sluice: `true | ${W} | limit 10000`, duck: 'SELECT * FROM t LIMIT 10000' },
  ];

  const lines: string[] = [];
  const ratios: number[] = [];
  for (const q of suite) {
    const sluiceMs: number[] = [];
    const duckMs: number[] = [];
    let peakPool = 0;
    let rssGrowthKb = 0;
    let stats = '';
    for (let run = 0; run < RUNS + 1; run++) {
      const before = vmRssKb(pid);
      writeFileSync(`/proc/${pid}/clear_refs`, '5'); // reset VmHWM so it measures this query
      const s0 = performance.now();
      const answer = await postQuery(url, TENANT, q.sluice);
      const s1 = performance.now();
      if (answer.status !== 200) throw new Error(`${q.name}: ${answer.status} ${answer.text.slice(0, 200)}`);
      const d0 = performance.now();
      await conn.runAndReadAll(q.duck);
      const d1 = performance.now();
      if (run === 0) continue; // warm-up
      sluiceMs.push(s1 - s0);
      duckMs.push(d1 - d0);
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
    ratios.push(s / d);
    lines.push(
      `${q.name.padEnd(30)} sluice ${s.toFixed(0).padStart(6)} ms  duckdb ${d.toFixed(0).padStart(5)} ms  ratio ${(s / d).toFixed(2).padStart(6)}  ` +
        `peak pool ${(peakPool / 1048576).toFixed(1)} MiB, peak RSS growth ${(rssGrowthKb / 1024).toFixed(1)} MiB  (${stats})`,
    );
  }
  const geo = Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length);
  console.log(`query bench: ${ROWS} rows, median of ${RUNS} runs after a warm-up, DuckDB with 2 threads`);
  for (const l of lines) console.log('  ' + l);
  console.log(`  geometric mean Sluice/DuckDB: ${geo.toFixed(2)}`);
  conn.closeSync();
  duck.closeSync();
  await server.stop();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
