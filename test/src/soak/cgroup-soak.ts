/**
 * `npm run soak:cgroup` — the governance soak (docs/design/query-governance.md): a dashboard poll plus over-wide queries under a real memory limit: both roles in
 * one `sluice serve` process, started inside a fresh cgroup v1 memory child (limit SOAK_LIMIT_BYTES, default
 * 1.5 GiB) from its first instruction, with no explicit `memory_pool_bytes`, so the pool derives from the cgroup
 * (0.50 × limit). A long-body corpus is written into the store first so the over-wide queries are really heavy;
 * then an OTel SDK exporter streams logs while SOAK_CLIENTS (16) clients send heavy and light queries for
 * SOAK_SECS (default 300). The compactor runs in the same process too: its first sweep (300 s after start) merges
 * the corpus hours, so a soak of more than ~6 minutes covers it. Prints the cgroup's peak usage, the process's
 * VmHWM, OOM kills, exports, rejections by kind, compactions, and the derived pool size; exits non-zero on an OOM kill, a failed export, a dead server, an untyped
 * rejection or a pool that did not derive from the cgroup. The cgroup is removed at the end, also on failure.
 *
 * Needs root and a writable cgroup v1 memory hierarchy. Env: SOAK_SECS, SOAK_LIMIT_BYTES, SOAK_ROWS (corpus rows,
 * default 1,500,000), SOAK_BODY_BYTES (bytes appended to each corpus body, default 2048), SOAK_CLIENTS,
 * SOAK_KEEP_DIR (keep the temp dir and server.log), SOAK_CORPUS_DIR (build the corpus there once, copy it on later
 * runs), SOAK_POOL_FRACTION (diagnostic only: sets memory_pool_fraction; the validated replay leaves it unset).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runGovernanceLoad, type LoadReport } from '../helpers/governance-load.js';
import { metricValue } from '../helpers/metrics.js';
import { SLUICE_BIN, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import { buildQueryCorpus, CORPUS_WINDOW, vmHwmKb, vmRssKb } from '../bench/bench-corpus.js';
import { createMemoryCgroup, type CgroupCounters, type MemoryCgroup } from './cgroup.js';

const SECS = Number(process.env.SOAK_SECS ?? 300);
const LIMIT = Number(process.env.SOAK_LIMIT_BYTES ?? 1.5 * 1024 ** 3);
const ROWS = Number(process.env.SOAK_ROWS ?? 1_500_000);
const BODY_BYTES = Number(process.env.SOAK_BODY_BYTES ?? 2048);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 16);
/** Diagnostic only: sets `memory_pool_fraction` (the validated replay leaves it unset: share 0.50). */
const FRACTION = process.env.SOAK_POOL_FRACTION === undefined ? undefined : Number(process.env.SOAK_POOL_FRACTION);
const TENANT = 'soak';
const TYPED = new Set([
  'query_memory_limit',
  'query_memory_contended',
  'query_queue_full',
  'query_queue_timeout',
  'query_file_limit',
  'query_result_limit',
]);
const MiB = 1024 * 1024;

interface Server {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logs: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitedWith: { code: number | null; signal: NodeJS.Signals | null } | null;
  otlpHttpUrl: string;
  otlpGrpcAddress: string;
  queryUrl: string;
  pool: { bytes: number; source: string; share: number | null; detail: string } | null;
}

/** Starts `sluice serve` inside `cg`: the shell joins the group, then execs node, so no byte runs outside it. */
async function startInCgroup(
  cg: MemoryCgroup,
  configPath: string,
  cwd: string,
  onSpawn: (server: Server) => void,
): Promise<Server> {
  const script = `echo $$ > ${JSON.stringify(join(cg.path, 'cgroup.procs'))} && exec ${JSON.stringify(process.execPath)} ${JSON.stringify(SLUICE_BIN)} serve --config ${JSON.stringify(configPath)}`;
  const child = spawn('sh', ['-c', script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const server: Server = {
    child,
    pid: child.pid!,
    logs: [],
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
    exitedWith: null,
    otlpHttpUrl: '',
    otlpGrpcAddress: '',
    queryUrl: '',
    pool: null,
  };
  void server.exited.then((e) => (server.exitedWith = e));
  onSpawn(server); // so a start that fails below is still killed and the cgroup still removed
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => server.logs.push(chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      if (server.logs.length < 200_000) server.logs.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; fields?: Record<string, unknown> };
        const f = entry.fields ?? {};
        if (entry.msg === 'receiver started') {
          server.otlpHttpUrl = `http://${String(f.http)}`;
          server.otlpGrpcAddress = String(f.grpc);
        }
        if (entry.msg === 'querier started') server.queryUrl = `http://${String(f.http)}`;
        if (entry.msg === 'query memory pool sized') {
          server.pool = {
            bytes: Number(f.bytes),
            source: String(f.source),
            share: typeof f.share === 'number' ? f.share : null,
            detail: String(f.detail),
          };
        }
      } catch {
        // not a JSON log line
      }
    }
  });
  const deadline = Date.now() + 60_000;
  while (server.otlpHttpUrl === '' || server.queryUrl === '') {
    if (server.exitedWith)
      throw new Error(
        `sluice exited before starting (${JSON.stringify(server.exitedWith)}):\n${server.logs.slice(-30).join('\n')}`,
      );
    if (Date.now() > deadline) throw new Error(`sluice did not start in 60 s:\n${server.logs.slice(-30).join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  while (
    (await fetch(`${server.otlpHttpUrl}/readyz`).then(
      (r) => r.status,
      () => 0,
    )) !== 200
  ) {
    if (server.exitedWith || Date.now() > deadline)
      throw new Error(`sluice not ready:\n${server.logs.slice(-30).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return server;
}

/** Samples the cgroup and the process once a second; keeps the peaks. */
interface Peaks {
  rss: number;
  cache: number;
  vmRssKb: number;
  vmHwmKb: number;
  poolReserved: number;
  oomKill: number;
  /** Seconds into the load when an OOM kill was first seen, or when the process was first seen gone. */
  oomAtSecs: number | null;
  goneAtSecs: number | null;
  /** Server-side count of accepted OTLP batches (last successful scrape). */
  ingestBatches: number;
}

/** `sluice_ingest_batches_total` summed over the series without an `error_type` label (accepted batches). */
async function acceptedBatches(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('sluice_ingest_batches_total') || line.includes('error_type=')) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

function startSampler(cg: MemoryCgroup, server: Server): { stop(): Promise<void>; peaks: Peaks } {
  const peaks: Peaks = {
    rss: 0,
    cache: 0,
    vmRssKb: 0,
    vmHwmKb: 0,
    poolReserved: 0,
    oomKill: 0,
    oomAtSecs: null,
    goneAtSecs: null,
    ingestBatches: 0,
  };
  const t0 = Date.now();
  let running = true;
  const loop = (async () => {
    // Bounded: one sample a second until stopped (the load is bounded by SOAK_SECS).
    while (running) {
      const secs = (Date.now() - t0) / 1000;
      try {
        const c = cg.counters();
        peaks.rss = Math.max(peaks.rss, c.rssBytes);
        peaks.cache = Math.max(peaks.cache, c.cacheBytes);
        if (c.oomKill > 0 && peaks.oomAtSecs === null) peaks.oomAtSecs = secs;
        peaks.oomKill = Math.max(peaks.oomKill, c.oomKill);
      } catch {
        // counters unreadable: reported by the final read
      }
      if (server.exitedWith) {
        peaks.goneAtSecs ??= secs;
      } else {
        try {
          peaks.vmRssKb = Math.max(peaks.vmRssKb, vmRssKb(server.pid));
          peaks.vmHwmKb = Math.max(peaks.vmHwmKb, vmHwmKb(server.pid));
          peaks.poolReserved = Math.max(
            peaks.poolReserved,
            await metricValue(server.queryUrl, 'sluice_query_pool_reserved'),
          );
          const batches = await acceptedBatches(server.queryUrl);
          if (batches > 0) peaks.ingestBatches = batches;
        } catch {
          // the process is going away
        }
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    peaks,
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * Writes the long-body corpus into `dataDir`. With SOAK_CORPUS_DIR, the corpus is built there once (tagged with
 * its rows and body size in corpus.json) and copied into `dataDir` on later runs.
 */
async function corpusInto(dataDir: string): Promise<bigint> {
  const build = async (root: string): Promise<bigint> => {
    const t0 = performance.now();
    const { needle } = await buildQueryCorpus(root, {
      rows: ROWS,
      tenant: TENANT,
      bodySuffix: (i) =>
        ' dump=' +
        (i >>> 0)
          .toString(16)
          .padStart(8, '0')
          .repeat(Math.ceil(BODY_BYTES / 8))
          .slice(0, BODY_BYTES),
    });
    console.log(
      `corpus: ${ROWS} rows with ~${BODY_BYTES}-byte body suffixes written in ${((performance.now() - t0) / 1000).toFixed(1)} s (needle template ${needle})`,
    );
    return needle;
  };
  const cache = process.env.SOAK_CORPUS_DIR;
  if (cache === undefined) return build(dataDir);
  const tagFile = join(cache, 'corpus.json');
  const tag = { rows: ROWS, bodyBytes: BODY_BYTES, tenant: TENANT };
  let needle: bigint | undefined;
  if (existsSync(tagFile)) {
    const saved = JSON.parse(readFileSync(tagFile, 'utf8')) as typeof tag & { needle: string };
    if (saved.rows === ROWS && saved.bodyBytes === BODY_BYTES && saved.tenant === TENANT) needle = BigInt(saved.needle);
  }
  if (needle === undefined) {
    rmSync(join(cache, 'store'), { recursive: true, force: true });
    needle = await build(join(cache, 'store'));
    writeFileSync(tagFile, JSON.stringify({ ...tag, needle: String(needle) }));
  } else {
    console.log(`corpus: reusing ${ROWS} rows with ~${BODY_BYTES}-byte body suffixes from ${cache}`);
  }
  cpSync(join(cache, 'store'), dataDir, { recursive: true });
  return needle;
}

function gib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('soak:cgroup needs root (it creates a cgroup v1 memory child)');
  const dir = tempDir('soak-cgroup');
  const dataDir = join(dir, 'data');
  const needle = await corpusInto(dataDir);
  const configPath = join(dir, 'sluice.yaml');
  // Both roles, local storage, default limits, NO memory_pool_bytes: the pool must derive from the cgroup.
  writeFileSync(
    configPath,
    testConfigYaml({
      walDir: join(dir, 'wal'),
      dataDir,
      flushAgeSecs: 5,
      querier: true,
      defaultTenant: TENANT,
      ...(FRACTION !== undefined ? { querierLimits: { memory_pool_fraction: FRACTION } } : {}),
    }),
  );

  const cg = createMemoryCgroup(`sluice-soak-${process.pid}`, LIMIT);
  console.log(`cgroup: ${cg.path} memory.limit_in_bytes=${LIMIT}`);
  let server: Server | undefined;
  const cleanup = async (): Promise<void> => {
    if (server && !server.exitedWith) {
      server.child.kill('SIGKILL');
      await Promise.race([server.exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
    console.log(`cgroup removed: ${cg.remove()}`);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    console.error(`soak: ${signal}; cleaning up`);
    void cleanup().finally(() => {
      if (process.env.SOAK_KEEP_DIR === undefined) rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    server = await startInCgroup(cg, configPath, dir, (spawned) => (server = spawned));
    const inGroup = cg.pids().includes(server.pid);
    console.log(`sluice pid ${server.pid} in the cgroup: ${inGroup}; pool: ${JSON.stringify(server.pool)}`);
    const expectedPool = Math.floor((LIMIT * Math.round((FRACTION ?? 0.5) * 1_000_000)) / 1_000_000);
    const sampler = startSampler(cg, server);
    const W = CORPUS_WINDOW;
    let report: LoadReport;
    let loadError: unknown;
    const loadStart = Date.now();
    let loadSecs = 0;
    try {
      report = await runGovernanceLoad({
        otlpHttpUrl: server.otlpHttpUrl,
        otlpGrpcAddress: server.otlpGrpcAddress,
        queryUrl: server.queryUrl,
        tenant: TENANT,
        durationMs: SECS * 1000,
        clients: CLIENTS,
        heavyQueries: [
          // Over the pool on its own: one group entry per (long, unique) body.
          `true | ${W} | count by body`,
          // Decodes every long body: ~3x the body column per row group is reserved.
          `contains(body, "timed out") | ${W} | count`,
          // Top-k over everything: every row group's record columns.
          `true | ${W} | sort ts desc | limit 10000`,
          // High-cardinality aggregation: one group per record.
          `true | ${W} | count by trace_id`,
        ],
        lightQueries: [
          'severity >= error | limit 5',
          'true | count by service',
          'contains(body, "took 7 ms") | count',
          `template_id == ${needle} | range(2026-03-01T11:00:00Z, 2026-03-01T11:01:00Z) | count`,
        ],
      });
    } catch (error) {
      // runGovernanceLoad throws when a query request fails at the transport (e.g. the server went away).
      loadError = error;
      report = {
        exportsAcked: 0,
        exportsFailed: 0,
        exportErrors: [],
        queryTransportRetries: 0,
        queryTransportErrors: [],
        queries: 0,
        ok: 0,
        rejections: {},
      };
    } finally {
      loadSecs = (Date.now() - loadStart) / 1000;
      await sampler.stop();
    }
    const aliveAtEnd = server.exitedWith === null;
    const poolAtEnd = aliveAtEnd
      ? await metricValue(server.queryUrl, 'sluice_query_pool_reserved').catch(() => NaN)
      : NaN;
    const hwmKb = aliveAtEnd ? vmHwmKb(server.pid) : sampler.peaks.vmHwmKb;
    const counters: CgroupCounters = cg.counters();
    // Worker deaths during the load (read before the stop below terminates the workers).
    const deathLines = server.logs.filter((l) => l.includes('query worker died'));
    const exit = aliveAtEnd ? await (server.child.kill('SIGTERM'), server.exited) : server.exitedWith;
    const workerDeaths = deathLines.length;
    // The compactor's first sweep runs compaction.interval_secs (300 s) after start and merges the corpus hours.
    const compacted = server.logs.filter((l) => l.includes('"msg":"partition compacted"')).length;
    const compactionFailures = server.logs.filter((l) => l.includes('"msg":"compaction failed')).length;
    writeFileSync(join(dir, 'server.log'), server.logs.join('\n'));
    const rejected = Object.values(report.rejections).reduce((a, b) => a + b, 0);
    const untyped = Object.keys(report.rejections).filter((k) => !TYPED.has(k));
    const oomKills = Math.max(counters.oomKill, sampler.peaks.oomKill);

    console.log('');
    console.log(
      `cgroup soak: ${SECS} s, ${CLIENTS} clients, limit ${LIMIT} B (${gib(LIMIT)}), corpus ${ROWS} rows x ~${BODY_BYTES} B bodies`,
    );
    console.log(
      `  pool sized:          ${server.pool?.bytes ?? '?'} B from ${server.pool?.source ?? '?'} (share ${server.pool?.share ?? '?'}; expected ${expectedPool}) — ${server.pool?.detail ?? ''}`,
    );
    console.log(
      `  cgroup peak usage:   memory.max_usage_in_bytes ${counters.maxUsageBytes} (${gib(counters.maxUsageBytes)}; includes page cache)`,
    );
    console.log(
      `  cgroup peak rss:     ${sampler.peaks.rss} (${gib(sampler.peaks.rss)}; memory.stat rss, sampled 1/s); peak cache ${gib(sampler.peaks.cache)}`,
    );
    console.log(
      `  process peak RSS:    VmHWM ${hwmKb} kB (${gib(hwmKb * 1024)}${aliveAtEnd ? '' : '; last sample before the process died'}); sampled VmRSS max ${gib(sampler.peaks.vmRssKb * 1024)}`,
    );
    console.log(`  pool reserved peak:  ${gib(sampler.peaks.poolReserved)} (sampled 1/s); at end ${poolAtEnd}`);
    console.log(
      `  OOM kills:           ${oomKills} (memory.oom_control oom_kill); under_oom ${counters.underOom}; memory.failcnt ${counters.failcnt}`,
    );
    console.log(
      `  server alive at end: ${aliveAtEnd}; exit ${JSON.stringify(exit)}; query worker deaths during the load ${workerDeaths}` +
        (sampler.peaks.oomAtSecs !== null
          ? `; OOM kill seen ${sampler.peaks.oomAtSecs.toFixed(0)} s into the load`
          : '') +
        (sampler.peaks.goneAtSecs !== null
          ? `; process gone ${sampler.peaks.goneAtSecs.toFixed(0)} s into the load`
          : ''),
    );
    for (const l of deathLines.slice(0, 3)) console.log(`  WARNING worker died: ${l.slice(0, 400)}`);
    if (loadError !== undefined) {
      console.log(
        `  load aborted after:  ${loadSecs.toFixed(1)} s (its counts are lost; server-side accepted OTLP batches by the last 1/s scrape: ${sampler.peaks.ingestBatches})`,
      );
    } else {
      console.log(`  load ran:            ${loadSecs.toFixed(1)} s`);
    }
    console.log(
      `  exports:             ${report.exportsAcked} acknowledged, ${report.exportsFailed} failed ${report.exportErrors.length ? JSON.stringify(report.exportErrors) : ''}`,
    );
    console.log(`  queries:             ${report.queries} sent, ${report.ok} ok, ${rejected} rejected`);
    console.log(
      `  query transport:     ${report.queryTransportRetries} request(s) failed before any HTTP status and were retried ${report.queryTransportErrors.length ? JSON.stringify(report.queryTransportErrors) : ''}`,
    );
    console.log(
      `  compaction:          ${compacted} partition(s) compacted, ${compactionFailures} failed (first sweep 300 s after start)`,
    );
    console.log(`  rejections by kind:  ${JSON.stringify(report.rejections)}`);

    const failures: string[] = [];
    if (loadError !== undefined) {
      failures.push(`the load aborted: ${String(loadError)} ${String((loadError as { cause?: unknown }).cause ?? '')}`);
      console.log(`  server log tail:\n${server.logs.slice(-15).join('\n')}`);
    }
    if (oomKills > 0) failures.push(`${oomKills} OOM kill(s)`);
    if (!aliveAtEnd) failures.push('the server died during the soak');
    if (report.exportsFailed > 0) failures.push(`${report.exportsFailed} export(s) failed`);
    if (loadError === undefined && report.exportsAcked === 0) failures.push('no export acknowledged');
    if (loadError === undefined && rejected === 0)
      failures.push('no query was refused (the heavy queries were not heavy enough)');
    if (untyped.length > 0) failures.push(`untyped rejections: ${untyped.join(', ')}`);
    if (report.queryTransportRetries > 0)
      failures.push(
        `${report.queryTransportRetries} query request(s) failed at the transport (the server closed a connection the client reused)`,
      );
    if (server.pool?.source !== 'cgroup_v1' || server.pool.bytes !== expectedPool)
      failures.push(`pool ${JSON.stringify(server.pool)} did not derive from the cgroup v1 limit`);
    if (!inGroup) failures.push('the server was not in the cgroup');
    if (exit?.code !== 0) failures.push(`unclean exit ${JSON.stringify(exit)}`);
    console.log(failures.length === 0 ? '  RESULT: PASS' : `  RESULT: FAIL — ${failures.join('; ')}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    await cleanup();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (process.env.SOAK_KEEP_DIR === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
