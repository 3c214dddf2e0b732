/**
 * `npm run bench:footers`: what the query workers' footer cache and the idle-collection threshold are worth
 * (docs/design/query-governance.md, "Footer cache" and "Idle collection").
 *
 * Part 1, end to end: the query bench's corpus written as ~BENCH_FILES small files (BENCH_ROWS rows, default 300,000
 * in ~1,000-row files), `sluice serve` with only the querier and one query worker, once with the cache off
 * (`footer_cache_bytes: 0`, `max_open_files: 0`) and once with the defaults. For each statement: the first run on the
 * fresh worker (cold) and the median of BENCH_RUNS runs after it (warm), client-side wall time.
 *
 * Part 2, in process: the engine over the same files with a footer cache, BENCH_RUNS back-to-back runs of each
 * statement, once with a full collection after every query (the old idle point) and once without one (what the
 * idle threshold does while the heap is within its slack): the median time of the query that follows.
 *
 * Env: BENCH_ROWS, BENCH_FILES, BENCH_RUNS.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { executeQuery } from '@sluice/engine';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import { createFooterCache, createLocalObjectStore } from '@sluice/storage';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import { CORPUS_WINDOW, buildQueryCorpus, median } from './bench-corpus.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 300_000);
const FILES = Number(process.env.BENCH_FILES ?? 300);
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const TENANT = 'bench';
const STATEMENTS = [`true | ${CORPUS_WINDOW} | count`, `severity >= error | ${CORPUS_WINDOW} | count`];

function post(url: string, query: string): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sluice-tenant': TENANT },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify({ query }));
  });
}

async function endToEnd(dir: string, dataDir: string, cache: boolean): Promise<void> {
  const server = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, cache ? 'wal-on' : 'wal-off'),
      dataDir,
      receiver: false,
      querier: true,
      querierLimits: {
        memory_pool_bytes: 512 * 1024 ** 2,
        max_files: 100_000,
        max_concurrent_queries: 1,
        light_query_permits: 0,
        ...(cache ? {} : { footer_cache_bytes: 0, max_open_files: 0 }),
      },
    }),
    { dir },
  );
  try {
    await server.waitReady();
    for (const statement of STATEMENTS) {
      const cold = await post(server.queryUrl!, statement);
      if (cold.status !== 200) throw new Error(`${statement}: ${cold.status} ${cold.body.slice(0, 300)}`);
      const warm: number[] = [];
      let bytesRead = 0;
      for (let i = 0; i < RUNS; i++) {
        const r = await post(server.queryUrl!, statement);
        if (r.status !== 200) throw new Error(`${statement}: ${r.status}`);
        warm.push(r.ms);
        bytesRead = (JSON.parse(r.body) as { stats: { bytes_read: number } }).stats.bytes_read;
      }
      const coldRead = (JSON.parse(cold.body) as { stats: { bytes_read: number } }).stats.bytes_read;
      console.log(
        `  cache ${cache ? 'on ' : 'off'}  ${statement.split(' | ')[0]!.padEnd(18)} cold ${cold.ms.toFixed(0).padStart(5)} ms` +
          `  warm median ${median(warm).toFixed(0).padStart(5)} ms  bytes_read cold ${coldRead} warm ${bytesRead}`,
      );
    }
  } finally {
    await server.stop();
  }
}

async function inProcess(dataDir: string): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const store = createLocalObjectStore({ root: dataDir });
  const pool = createMemoryPool({ sizeBytes: 512 * 1024 ** 2 });
  const cacheSlot = pool.createQuery('footer-cache-bench');
  const footers = createFooterCache({
    capacityBytes: 32 * 1024 ** 2,
    reserve: (b) => cacheSlot.tryGrow(b).status === 'ok',
    release: (b) => cacheSlot.shrink(b),
  });
  for (const statement of STATEMENTS) {
    const parsed = parseQuery(statement);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const once = async (): Promise<number> => {
      const reservation = pool.createQuery(`q-${Math.random()}`);
      const started = performance.now();
      try {
        const outcome = await executeQuery({
          store,
          tenant: TENANT,
          query: parsed.value,
          nowNs: BigInt(Date.parse('2026-03-01T14:00:00Z')) * 1_000_000n,
          defaultWindowSecs: 3600,
          limits: {
            defaultRows: 1000,
            maxRows: 10_000,
            maxListedObjects: 100_000,
            maxFiles: 100_000,
            maxResultBytes: 1 << 26,
          },
          reservation,
          footers,
        });
        if (outcome.status !== 'ok') throw new Error(`${statement}: ${JSON.stringify(outcome.error)}`);
        outcome.budget.release();
        return performance.now() - started;
      } finally {
        reservation.releaseAll();
      }
    };
    await once(); // fills the cache
    for (const mode of ['full GC after each query', 'no GC under the idle threshold']) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        times.push(await once());
        if (mode.startsWith('full')) gc();
      }
      console.log(
        `  ${statement.split(' | ')[0]!.padEnd(18)} ${mode.padEnd(32)} median ${median(times).toFixed(1)} ms`,
      );
    }
  }
}

async function main(): Promise<void> {
  const dir = tempDir('bench-footers');
  const dataDir = join(dir, 'data');
  await buildQueryCorpus(dataDir, { rows: ROWS, tenant: TENANT, chunkRows: Math.ceil(ROWS / FILES) });
  let files = 0;
  for await (const e of createLocalObjectStore({ root: dataDir }).list({ prefix: 'data/' }))
    if (e.kind === 'object') files++;
  console.log(`${ROWS} rows in ${files} files; ${RUNS} warm runs per statement; one query worker`);
  console.log('end to end (client wall time):');
  await endToEnd(dir, dataDir, false);
  await endToEnd(dir, dataDir, true);
  console.log('in process, back to back with a warm footer cache:');
  await inProcess(dataDir);
}

await main();
