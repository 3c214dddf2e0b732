/**
 * `npm run soak:cgroup` — the governance soak (docs/design/query-governance.md), an incident replay: a dashboard
 * poll plus a storm of over-wide queries under a real memory limit. Both roles run in one `sluice serve` process,
 * started inside a fresh cgroup v1 memory child (limit SOAK_LIMIT_BYTES, default 1.5 GiB) from its first
 * instruction, with no explicit `memory_pool_bytes`, so the pool derives from the cgroup (0.50 × limit). A
 * long-body corpus is written into the store first so the over-wide queries are really heavy; then, for SOAK_SECS
 * (default 300), an OTel SDK exporter streams logs while two lanes of query clients run: the dashboard lane
 * (SOAK_DASHBOARD_CLIENTS, default 4) polls normal queries every SOAK_DASHBOARD_INTERVAL_MS (default 2000, send to
 * send, never overlapping itself), and the storm lane (SOAK_STORM_CLIENTS, default 12) sends heavy queries back to
 * back. The compactor runs in the same process too: its first sweep (300 s after start) merges the corpus hours, so
 * a soak of more than ~6 minutes covers it.
 *
 * Prints the cgroup's peak usage, the process's VmHWM, OOM kills, exports, compactions, the derived pool size, a
 * table of sent / served / served % / refusals by kind / p50 and p99 latency of served answers per lane, and the
 * querier's permits held (`sluice_query_in_flight`), pool reservation and queue depth once the load has stopped.
 * Exits non-zero on an OOM kill, a failed export, a dead server, an untyped refusal in either lane, a dashboard lane
 * served below SOAK_MIN_DASHBOARD_SERVED (default 0.99), permits still held or pool still reserved at the end (or
 * either gauge missing from /metrics), or a pool that did not derive from the cgroup. The cgroup is removed at the
 * end, also on failure.
 *
 * Needs root and a writable cgroup v1 memory hierarchy. Env: SOAK_SECS, SOAK_LIMIT_BYTES, SOAK_ROWS (corpus rows,
 * default 1,500,000), SOAK_BODY_BYTES (bytes appended to each corpus body, default 2048), SOAK_DASHBOARD_CLIENTS,
 * SOAK_DASHBOARD_INTERVAL_MS, SOAK_STORM_CLIENTS, SOAK_CLIENTS (older name of SOAK_STORM_CLIENTS, used when that is
 * unset), SOAK_MIN_DASHBOARD_SERVED (a fraction), SOAK_REDOS=1 (adds rows of forty `a`s ending in `!` and the
 * storm query `matches(body, "(a+)+$")`; off by default because it needs a linear-time regex engine, a
 * backtracking one spins a query worker until its deadline), SOAK_KEEP_DIR (keep the temp dir and server.log),
 * SOAK_CORPUS_DIR (build the corpus there once, copy it on later runs), SOAK_POOL_FRACTION (diagnostic only: sets
 * memory_pool_fraction; the validated replay leaves it unset).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  emptyLoadReport,
  LOAD_DEFAULTS,
  runGovernanceLoad,
  TYPED_REFUSALS,
  type LoadReport,
} from '../helpers/governance-load.js';
import { laneTable, servedShare } from '../helpers/lane-table.js';
import { metricValue } from '../helpers/metrics.js';
import { sampleSum, scrapeMetrics } from '../helpers/metrics-text.js';
import { REDOS_QUERY_PREDICATE, writeRedosRows } from '../helpers/redos-rows.js';
import { SLUICE_BIN, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import { buildQueryCorpus, CORPUS_WINDOW, vmHwmKb, vmRssKb } from '../bench/bench-corpus.js';
import { createMemoryCgroup, type CgroupCounters, type MemoryCgroup } from './cgroup.js';

const SECS = Number(process.env.SOAK_SECS ?? 300);
const LIMIT = Number(process.env.SOAK_LIMIT_BYTES ?? 1.5 * 1024 ** 3);
const ROWS = Number(process.env.SOAK_ROWS ?? 1_500_000);
const BODY_BYTES = Number(process.env.SOAK_BODY_BYTES ?? 2048);
const DASHBOARD_CLIENTS = Number(process.env.SOAK_DASHBOARD_CLIENTS ?? LOAD_DEFAULTS.dashboardClients);
const DASHBOARD_INTERVAL_MS = Number(process.env.SOAK_DASHBOARD_INTERVAL_MS ?? LOAD_DEFAULTS.dashboardIntervalMs);
// SOAK_CLIENTS predates the lanes; scripts that set it keep sizing the load's heavy side.
const STORM_CLIENTS = Number(process.env.SOAK_STORM_CLIENTS ?? process.env.SOAK_CLIENTS ?? LOAD_DEFAULTS.stormClients);
const MIN_DASHBOARD_SERVED = Number(process.env.SOAK_MIN_DASHBOARD_SERVED ?? 0.99);
const REDOS = process.env.SOAK_REDOS === '1';
/** Diagnostic only: sets `memory_pool_fraction` (the validated replay leaves it unset: share 0.50). */
const FRACTION = process.env.SOAK_POOL_FRACTION === undefined ? undefined : Number(process.env.SOAK_POOL_FRACTION);
const TENANT = 'soak';
/** Permits held by admitted queries (`sluice.query.in_flight`): must read 0 once the load has stopped. */
const IN_FLIGHT_METRIC = 'sluice_query_in_flight';
/** Bytes reserved on the query memory pool (`sluice.query.pool.reserved`): must read 0 at the end too. */
const POOL_RESERVED_METRIC = 'sluice_query_pool_reserved';
/** The part of the reserved bytes lent to a compaction merge in the same process: not a query's, not a leak. */
const POOL_LENT_METRIC = 'sluice_query_pool_lent';
const POOL_FOOTER_CACHE_METRIC = 'sluice_query_pool_footer_cache';
/** Queries waiting for a permit (`sluice.query.queue.depth`): printed only. */
const QUEUE_DEPTH_METRIC = 'sluice_query_queue_depth';
/** How long the end-of-load check waits for the last permit and reservation to be released. */
const SETTLE_MS = 5000;
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
          peaks.poolReserved = Math.max(peaks.poolReserved, await metricValue(server.queryUrl, POOL_RESERVED_METRIC));
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

/** The querier's governance gauges after the load; `undefined` for a gauge absent from /metrics. */
interface EndState {
  readonly inFlight: number | undefined;
  readonly poolReserved: number | undefined;
  readonly poolLent: number | undefined;
  /** What the query workers' footer caches hold: reserved between queries by design. */
  readonly poolFooterCache: number | undefined;
  readonly queueDepth: number | undefined;
  /** Time from the first scrape to the one reported. */
  readonly waitedMs: number;
}

/**
 * Scrapes the gauges until permits and pool both read 0 or {@link SETTLE_MS} has passed. Every answer is back when
 * the load returns, but a served query releases its permit and reservation only after its body is written, so
 * the first scrape can race that release; a real leak is still there after the wait.
 */
async function readEndState(baseUrl: string): Promise<EndState> {
  const t0 = Date.now();
  for (;;) {
    const text = await scrapeMetrics(baseUrl);
    const state: EndState = {
      inFlight: sampleSum(text, IN_FLIGHT_METRIC),
      poolReserved: sampleSum(text, POOL_RESERVED_METRIC),
      poolLent: sampleSum(text, POOL_LENT_METRIC),
      poolFooterCache: sampleSum(text, POOL_FOOTER_CACHE_METRIC),
      queueDepth: sampleSum(text, QUEUE_DEPTH_METRIC),
      waitedMs: Date.now() - t0,
    };
    const settled =
      (state.inFlight ?? 0) === 0 &&
      (state.poolReserved ?? 0) - (state.poolLent ?? 0) - (state.poolFooterCache ?? 0) === 0;
    if (settled || state.waitedMs >= SETTLE_MS) return state;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function gib(bytes: number): string {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) throw new Error('soak:cgroup needs root (it creates a cgroup v1 memory child)');
  const dir = tempDir('soak-cgroup');
  const dataDir = join(dir, 'data');
  const needle = await corpusInto(dataDir);
  // Written after the (possibly cached) corpus, so SOAK_CORPUS_DIR caches stay valid with or without these rows.
  if (REDOS) await writeRedosRows(dataDir, TENANT);
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
        dashboardClients: DASHBOARD_CLIENTS,
        dashboardIntervalMs: DASHBOARD_INTERVAL_MS,
        stormClients: STORM_CLIENTS,
        heavyQueries: [
          // Over the pool on its own: one group entry per (long, unique) body.
          `true | ${W} | count by body`,
          // Decodes every long body: ~3x the body column per row group is reserved.
          `contains(body, "timed out") | ${W} | count`,
          // Top-k over everything: every row group's record columns.
          `true | ${W} | sort ts desc | limit 10000`,
          // High-cardinality aggregation: one group per record.
          `true | ${W} | count by trace_id`,
          ...(REDOS ? [`${REDOS_QUERY_PREDICATE} | ${W} | count`] : []),
        ],
        // Dashboard panels: what a dashboard polls every few seconds — recent windows of the live ingest (~4 M
        // records an hour here) and a pinned template over a corpus minute. A panel that full-text scans a whole
        // hour every 2 s would itself be a storm; the storm lane above is where over-wide queries live.
        lightQueries: [
          'severity >= error | range(-5m, now) | limit 5',
          'true | range(-5m, now) | count by service',
          'contains(body, "took 7 ms") | range(-5m, now) | count',
          `template_id == ${needle} | range(2026-03-01T11:00:00Z, 2026-03-01T11:01:00Z) | count`,
        ],
      });
    } catch (error) {
      // runGovernanceLoad throws when a query request fails at the transport (e.g. the server went away).
      loadError = error;
      report = emptyLoadReport(DASHBOARD_CLIENTS, STORM_CLIENTS);
    } finally {
      loadSecs = (Date.now() - loadStart) / 1000;
      await sampler.stop();
    }
    const aliveAtEnd = server.exitedWith === null;
    let endState: EndState | undefined;
    let endStateError: unknown;
    if (aliveAtEnd) {
      try {
        endState = await readEndState(server.queryUrl);
      } catch (error) {
        endStateError = error;
      }
    }
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
    const lanes = report.lanes;
    const untypedIn = (rejections: Record<string, number>): string[] =>
      Object.keys(rejections).filter((k) => !TYPED_REFUSALS.has(k));
    const oomKills = Math.max(counters.oomKill, sampler.peaks.oomKill);

    console.log('');
    console.log(
      `cgroup soak: ${SECS} s, ${DASHBOARD_CLIENTS} dashboard clients every ${DASHBOARD_INTERVAL_MS} ms + ${STORM_CLIENTS} storm clients${REDOS ? ' (with the ReDoS query)' : ''}, limit ${LIMIT} B (${gib(LIMIT)}), corpus ${ROWS} rows x ~${BODY_BYTES} B bodies`,
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
    console.log(`  pool reserved peak:  ${gib(sampler.peaks.poolReserved)} (sampled 1/s)`);
    const gauge = (v: number | undefined): string => (v === undefined ? 'absent' : String(v));
    console.log(
      endState === undefined
        ? `  after the load:      not read (${aliveAtEnd ? String(endStateError) : 'server gone'})`
        : `  after the load:      ${IN_FLIGHT_METRIC} ${gauge(endState.inFlight)}, ${POOL_RESERVED_METRIC} ${gauge(endState.poolReserved)} (of which ${POOL_LENT_METRIC} ${gauge(endState.poolLent)}), ${QUEUE_DEPTH_METRIC} ${gauge(endState.queueDepth)} (read ${endState.waitedMs} ms after the load stopped)`,
    );
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
    console.log('  queries by lane (served = HTTP 200; latency of served answers; refusals by kind):');
    for (const line of laneTable(lanes, '    ')) console.log(line);

    const failures: string[] = [];
    if (loadError !== undefined) {
      failures.push(`the load aborted: ${String(loadError)} ${String((loadError as { cause?: unknown }).cause ?? '')}`);
      console.log(`  server log tail:\n${server.logs.slice(-15).join('\n')}`);
    }
    if (oomKills > 0) failures.push(`${oomKills} OOM kill(s)`);
    if (!aliveAtEnd) failures.push('the server died during the soak');
    if (report.exportsFailed > 0) failures.push(`${report.exportsFailed} export(s) failed`);
    if (loadError === undefined && report.exportsAcked === 0) failures.push('no export acknowledged');
    if (loadError === undefined && Object.keys(lanes.storm.rejections).length === 0)
      failures.push('no storm query was refused (the heavy queries were not heavy enough)');
    for (const [name, lane] of Object.entries(lanes)) {
      const untyped = untypedIn(lane.rejections);
      if (untyped.length > 0) failures.push(`untyped ${name} refusals: ${untyped.join(', ')}`);
    }
    const dashboardServed = servedShare(lanes.dashboard);
    if (loadError === undefined && DASHBOARD_CLIENTS > 0 && (dashboardServed ?? 0) < MIN_DASHBOARD_SERVED)
      failures.push(
        `dashboard lane served ${dashboardServed === undefined ? 'nothing' : `${(dashboardServed * 100).toFixed(2)} %`} (< ${(MIN_DASHBOARD_SERVED * 100).toFixed(2)} %)`,
      );
    if (endState !== undefined) {
      if (endState.inFlight === undefined) failures.push(`${IN_FLIGHT_METRIC} is not in /metrics`);
      else if (endState.inFlight !== 0) failures.push(`${endState.inFlight} permit(s) still held after the load`);
      if (endState.poolReserved === undefined) failures.push(`${POOL_RESERVED_METRIC} is not in /metrics`);
      else if (endState.poolLent === undefined) failures.push(`${POOL_LENT_METRIC} is not in /metrics`);
      else if (endState.poolReserved - endState.poolLent - (endState.poolFooterCache ?? 0) !== 0)
        failures.push(
          `${endState.poolReserved - endState.poolLent - (endState.poolFooterCache ?? 0)} B still reserved by queries on the pool after the load`,
        );
    } else if (aliveAtEnd) {
      failures.push(`/metrics unreadable after the load: ${String(endStateError)}`);
    }
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
