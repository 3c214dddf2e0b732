/**
 * `npm run bench:stream`: the querier's peak RSS for one 10,000-row result answered whole (JSON) and streamed
 * (NDJSON, `Accept: application/x-ndjson`), docs/design/query-governance.md "Streamed results".
 *
 * Builds the query bench's corpus (BENCH_ROWS, default 10,000 rows, each body lengthened by BENCH_BODY_BYTES,
 * default 2000, so the result is tens of MiB) in a local store, starts `sluice serve` with only the querier (one
 * query worker, a 1 GiB pool, max_result_bytes 1 GiB so neither answer is refused), and runs
 * `true | <window> | limit 10000` BENCH_RUNS times (default 5) each way, alternating, after one warm-up each.
 * Before each run the process's VmHWM is reset (`/proc/<pid>/clear_refs` = 5), so the figure is that run's own
 * peak RSS over the RSS before it. The client reads every answer to its end as fast as it can. Prints the median
 * and the maximum per mode, the answer size, and the peak pool reservation the server logged.
 *
 * Env: BENCH_ROWS, BENCH_BODY_BYTES, BENCH_RUNS.
 */
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import { CORPUS_WINDOW, buildQueryCorpus, median, vmHwmKb, vmRssKb } from './bench-corpus.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000);
const BODY_BYTES = Number(process.env.BENCH_BODY_BYTES ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const TENANT = 'bench';
const QUERY = `true | ${CORPUS_WINDOW} | limit ${ROWS}`;

/** Posts the query; resolves with the status and the bytes received, read as fast as they come. */
function run(url: string, accept: string): Promise<{ status: number; bytes: number; lines: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sluice-tenant': TENANT, accept },
    });
    req.on('response', (res) => {
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines++;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, lines }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ query: QUERY }));
  });
}

async function main(): Promise<void> {
  const dir = tempDir('bench-stream');
  const dataDir = join(dir, 'data');
  const suffix = ` ${'x'.repeat(BODY_BYTES)}`;
  await buildQueryCorpus(dataDir, { rows: ROWS, tenant: TENANT, bodySuffix: () => suffix });
  const server = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, 'wal'),
      dataDir,
      receiver: false,
      querier: true,
      querierLimits: {
        memory_pool_bytes: 1024 ** 3,
        max_query_memory_bytes: 1024 ** 3,
        max_result_bytes: 1024 ** 3,
        max_rows: ROWS,
        max_concurrent_queries: 1,
        light_query_permits: 0,
      },
    }),
    { dir },
  );
  try {
    await server.waitReady();
    const pid = server.child.pid!;
    const url = server.queryUrl!;
    const modes = [
      { name: 'JSON  ', accept: 'application/json' },
      { name: 'NDJSON', accept: 'application/x-ndjson' },
    ];
    const growth = new Map<string, number[]>(modes.map((m) => [m.name, []]));
    const sizes = new Map<string, number>();
    const peaks = new Map<string, number[]>(modes.map((m) => [m.name, []]));
    for (let i = 0; i < RUNS + 1; i++) {
      for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) {
        const before = vmRssKb(pid);
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        const answer = await run(url, mode.accept);
        if (answer.status !== 200) throw new Error(`${mode.name}: status ${answer.status}`);
        if (i === 0) continue; // warm-up
        growth.get(mode.name)!.push(vmHwmKb(pid) - before);
        sizes.set(mode.name, answer.bytes);
        const peak = server.logs
          .map((l) => /"msg":"query finished".*"peak_bytes":(\d+)/.exec(l))
          .filter((m): m is RegExpExecArray => m !== null)
          .at(-1);
        peaks.get(mode.name)!.push(Number(peak?.[1] ?? 0));
      }
    }
    console.log(`${ROWS} rows, bodies +${BODY_BYTES} bytes, ${RUNS} runs each (after a warm-up), one query worker`);
    for (const mode of modes) {
      const g = growth.get(mode.name)!;
      const p = peaks.get(mode.name)!;
      console.log(
        `${mode.name}  answer ${((sizes.get(mode.name) ?? 0) / 1048576).toFixed(1)} MiB  ` +
          `peak RSS growth median ${(median(g) / 1024).toFixed(1)} MiB, max ${(Math.max(...g) / 1024).toFixed(1)} MiB  ` +
          `peak pool ${(median(p) / 1048576).toFixed(1)} MiB`,
      );
    }
  } finally {
    await server.stop();
  }
}

await main();
