/**
 * `npm run bench:governance`: what governance costs on the query hot path, and how fast a refusal is.
 *
 * 1. Overhead. The query bench's corpus (BENCH_ROWS, default 1,000,000 rows, same builder) is served by two
 *    querier-only processes over the same files: ON (default limits, an explicit 4 GiB pool so nothing is
 *    refused) and OFF (the closest configuration to "no governance": a 64 GiB pool and every cap and queue bound
 *    set huge). The query bench's six queries run BENCH_RUNS times each (after one warm-up per server), ON and
 *    OFF alternating and the order swapped every repetition to cancel drift. Prints per-query medians, each
 *    ON/OFF ratio, and the overall ratio (sum of medians) and geometric mean; the target is ≤ 1.03.
 *    The pool, the permit and the result budget are always on the path (they cannot be compiled out), so this
 *    measures what the configured limits cost relative to limits that never bind.
 *    OFF runs BENCH_OFF_CONCURRENCY permits (default 4, like ON): one permit is one query worker and dispatch is
 *    round-robin, so 64 permits would time 64 cold V8 isolates against 4 warm ones; with serial queries 4
 *    permits never queue, which is "no gate" for this workload. Set 64 to see the cold-worker effect.
 *    Deadline machinery: a third server, ON with `query_timeout_ms: 0` (no deadline timer, no overlap tracking),
 *    runs the same queries in the same alternation; ON/NO-DEADLINE is the cost of the deadline on the hot path.
 * 2. Refusal latency. A third process with max_concurrent_queries 1 and max_queued_queries 0; one slow query
 *    holds the permit while BURST (default 1000) concurrent POSTs arrive over loopback (one socket each); prints
 *    p50/p99/max of the `query_queue_full` rejections' latency and the burst's wall time, plus the latency of
 *    SERIAL_REJECTIONS (200) one-at-a-time rejections for comparison.
 *
 * 3. The regex engine: `matches` runs on RE2 (linear time); the regex bench's table compares its matching cost
 *    with V8's backtracking RegExp over the corpus bodies (test/src/bench/regex-bench.ts).
 *
 * Env: BENCH_ROWS, BENCH_RUNS (default 11), BENCH_OFF_CONCURRENCY, BENCH_BURST, BENCH_ON_POOL_BYTES (ON's pool, default
 * 4 GiB; 64 GiB gives ON the same worker heap cap as OFF), BENCH_SKIP_OVERHEAD, BENCH_SKIP_REFUSAL, BENCH_SKIP_REGEX.
 */
import { Agent, request } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { postQuery } from '../helpers/query-client.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import { buildQueryCorpus, CORPUS_WINDOW, median, querySuite } from './bench-corpus.js';
import { runRegexBench } from './regex-bench.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
const OFF_CONCURRENCY = Number(process.env.BENCH_OFF_CONCURRENCY ?? 4);
const BURST = Number(process.env.BENCH_BURST ?? 1000);
const SERIAL_REJECTIONS = 200;
const TENANT = 'bench';
const GiB = 1024 ** 3;

const ON_LIMITS = { memory_pool_bytes: Number(process.env.BENCH_ON_POOL_BYTES ?? 4 * GiB), max_rows: 10000 };
/** ON without its deadline: every other limit as ON. */
const NO_DEADLINE_LIMITS = { ...ON_LIMITS, query_timeout_ms: 0 };
const OFF_LIMITS = {
  memory_pool_bytes: 64 * GiB,
  query_timeout_ms: 0,
  max_query_memory_bytes: 64 * GiB,
  max_concurrent_queries_per_tenant: 1_000_000,
  light_query_permits: 0,
  max_concurrent_queries: OFF_CONCURRENCY,
  max_queued_queries: 1_000_000,
  queue_timeout_ms: 3_600_000,
  max_result_bytes: 64 * GiB,
  max_listed_objects: 1_000_000_000,
  max_files: 1_000_000_000,
  max_rows: 10000,
};

async function timed(server: SluiceProcess, statement: string): Promise<number> {
  const t0 = performance.now();
  const answer = await postQuery(server.queryUrl!, TENANT, statement);
  const ms = performance.now() - t0;
  if (answer.status !== 200) throw new Error(`${statement}: ${answer.status} ${answer.text.slice(0, 200)}`);
  return ms;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One POST on its own socket from `agent`; resolves with status, `error.kind` and latency. */
function rawQuery(url: string, agent: Agent, statement: string): Promise<{ status: number; kind: string; ms: number }> {
  const body = JSON.stringify({ query: statement });
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(
      `${url}/v1/query`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'X-Sluice-Tenant': TENANT,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - t0;
          let kind = '';
          try {
            kind = String(
              (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: { kind?: string } }).error?.kind ?? '',
            );
          } catch {
            kind = 'unparsable';
          }
          resolve({ status: res.statusCode ?? 0, kind, ms });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error('request timed out after 60 s')));
    req.on('error', reject);
    req.end(body);
  });
}

async function overhead(dataDir: string, dir: string, needle: bigint): Promise<void> {
  const start = (name: string, querierLimits: Record<string, number>): Promise<SluiceProcess> =>
    spawnSluice(
      testConfigYaml({ walDir: join(dir, `wal-${name}`), dataDir, receiver: false, querier: true, querierLimits }),
      { dir },
    );
  const on = await start('on', ON_LIMITS);
  const off = await start('off', OFF_LIMITS);
  const noDeadline = await start('no-deadline', NO_DEADLINE_LIMITS);
  try {
    await Promise.all([on.waitReady(), off.waitReady(), noDeadline.waitReady()]);
    const suite = querySuite(needle);
    const lines: string[] = [];
    const ratios: number[] = [];
    const deadlineRatios: number[] = [];
    let sumOn = 0;
    let sumOff = 0;
    let sumNoDeadline = 0;
    for (const q of suite) {
      const onMs: number[] = [];
      const offMs: number[] = [];
      const ndMs: number[] = [];
      for (const server of [on, off, noDeadline]) await timed(server, q.sluice); // warm-up
      for (let run = 0; run < RUNS; run++) {
        // The order rotates every repetition to cancel drift between the three servers.
        const order: Array<[SluiceProcess, number[]]> = [
          [on, onMs],
          [off, offMs],
          [noDeadline, ndMs],
        ];
        for (let k = 0; k < run % 3; k++) order.push(order.shift()!);
        for (const [server, into] of order) into.push(await timed(server, q.sluice));
      }
      const a = median(onMs);
      const b = median(offMs);
      const c = median(ndMs);
      sumOn += a;
      sumOff += b;
      sumNoDeadline += c;
      ratios.push(a / b);
      deadlineRatios.push(a / c);
      lines.push(
        `${q.name.padEnd(30)} ON ${a.toFixed(1).padStart(8)} ms  OFF ${b.toFixed(1).padStart(8)} ms  ON/OFF ${(a / b).toFixed(3)}  ` +
          `NO-DEADLINE ${c.toFixed(1).padStart(8)} ms  ON/NO-DEADLINE ${(a / c).toFixed(3)}  ` +
          `(ON ${onMs.map((x) => x.toFixed(0)).join('/')}; OFF ${offMs.map((x) => x.toFixed(0)).join('/')}; NO-DEADLINE ${ndMs.map((x) => x.toFixed(0)).join('/')})`,
      );
    }
    const geomean = (xs: readonly number[]): number => Math.exp(xs.reduce((s, r) => s + Math.log(r), 0) / xs.length);
    const overall = sumOn / sumOff;
    const deadlineOverall = sumOn / sumNoDeadline;
    console.log(
      `governance overhead: ${ROWS} rows, median of ${RUNS} rotating runs after a warm-up; OFF = 64 GiB pool, caps huge, no deadline, no light lane, ${OFF_CONCURRENCY} permits; NO-DEADLINE = ON with query_timeout_ms 0`,
    );
    for (const l of lines) console.log('  ' + l);
    const recycled = (p: SluiceProcess): number =>
      p.logs.filter((l) => l.includes('"msg":"query worker recycled"')).length;
    console.log(
      `  query workers recycled during the runs: ON ${recycled(on)}, OFF ${recycled(off)}, NO-DEADLINE ${recycled(noDeadline)}`,
    );
    console.log(
      `  overall ON/OFF (sum of medians): ${overall.toFixed(3)} (${((overall - 1) * 100).toFixed(1)} %); geometric mean ${geomean(ratios).toFixed(3)}; target ≤ 1.030: ${overall <= 1.03 ? 'met' : 'NOT met'}`,
    );
    console.log(
      `  deadline machinery ON/NO-DEADLINE (sum of medians): ${deadlineOverall.toFixed(3)} (${((deadlineOverall - 1) * 100).toFixed(1)} %); geometric mean ${geomean(deadlineRatios).toFixed(3)}`,
    );
  } finally {
    await Promise.all([on.stop(), off.stop(), noDeadline.stop()]);
  }
}

async function refusalLatency(dataDir: string, dir: string): Promise<void> {
  const server = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, 'wal-gate'),
      dataDir,
      receiver: false,
      querier: true,
      querierLimits: { memory_pool_bytes: 4 * GiB, max_concurrent_queries: 1, max_queued_queries: 0 },
    }),
    { dir },
  );
  const agent = new Agent({ keepAlive: false, maxSockets: BURST + 10 });
  try {
    await server.waitReady();
    const url = server.queryUrl!;
    const slow = `true | ${CORPUS_WINDOW} | sort ts desc | limit 10000`;
    const probe = 'true | count';
    const holdMs = await timed(server, slow);
    // Hold the permit with slow queries back to back until the measurements are done (bounded by count).
    let holding = true;
    let holders = 0;
    // A probe can slip into the gap between two holders and a holder is then refused: it simply goes again.
    const holder = (async () => {
      while (holding && holders < 1000) {
        holders++;
        await postQuery(url, TENANT, slow);
      }
    })();
    // Wait until the permit is visibly taken: a probe is refused with query_queue_full.
    for (let i = 0; ; i++) {
      const r = await rawQuery(url, agent, probe);
      if (r.kind === 'query_queue_full') break;
      if (i > 200) throw new Error('the permit was never observed held');
      await new Promise((res) => setTimeout(res, 10));
    }
    const serial: number[] = [];
    let serialOther = 0;
    for (let i = 0; i < SERIAL_REJECTIONS; i++) {
      const r = await rawQuery(url, agent, probe);
      if (r.kind === 'query_queue_full') serial.push(r.ms);
      else serialOther++;
    }
    const t0 = performance.now();
    const burst = await Promise.all(Array.from({ length: BURST }, () => rawQuery(url, agent, probe)));
    const wall = performance.now() - t0;
    holding = false;
    await holder;
    const kinds: Record<string, number> = {};
    for (const r of burst) kinds[`${r.status} ${r.kind || 'ok'}`] = (kinds[`${r.status} ${r.kind || 'ok'}`] ?? 0) + 1;
    const rejected = burst
      .filter((r) => r.kind === 'query_queue_full')
      .map((r) => r.ms)
      .sort((a, b) => a - b);
    serial.sort((a, b) => a - b);
    console.log(
      `query_queue_full latency: max_concurrent_queries 1, max_queued_queries 0, permit held by "${slow}" (${holdMs.toFixed(0)} ms each)`,
    );
    console.log(
      `  serial (${serial.length} one at a time):  p50 ${percentile(serial, 50).toFixed(2)} ms  p99 ${percentile(serial, 99).toFixed(2)} ms  max ${serial.at(-1)!.toFixed(2)} ms (${serialOther} probes found the permit free)`,
    );
    console.log(
      `  burst (${BURST} concurrent):   p50 ${percentile(rejected, 50).toFixed(1)} ms  p99 ${percentile(rejected, 99).toFixed(1)} ms  max ${rejected.at(-1)!.toFixed(1)} ms; ` +
        `wall ${wall.toFixed(0)} ms (${((BURST / wall) * 1000).toFixed(0)} rejections/s); outcomes ${JSON.stringify(kinds)}`,
    );
  } finally {
    agent.destroy();
    await server.stop();
  }
}

async function main(): Promise<void> {
  const dir = tempDir('bench-governance');
  const dataDir = join(dir, 'data');
  try {
    const t0 = performance.now();
    const { needle } = await buildQueryCorpus(dataDir, { rows: ROWS, tenant: TENANT });
    console.log(
      `corpus: ${ROWS} rows written in ${((performance.now() - t0) / 1000).toFixed(1)} s; needle template ${needle}`,
    );
    if (process.env.BENCH_SKIP_OVERHEAD === undefined) await overhead(dataDir, dir, needle);
    if (process.env.BENCH_SKIP_REFUSAL === undefined) await refusalLatency(dataDir, dir);
    if (process.env.BENCH_SKIP_REGEX === undefined) {
      console.log('regex engine: RE2 (matches, =~, !~) vs V8 RegExp, matching cost alone');
      runRegexBench(ROWS);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
