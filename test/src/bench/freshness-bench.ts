/**
 * `npm run bench:freshness`: ack→visible with the shipped settings (docs/design/freshness.md), and what it costs.
 *
 * For each shape (one process; a receiver with the compactor and a querier as two `sluice serve` processes on one
 * local store), with no `receiver.sink` or `compaction` key set: FRESH_EXPORTS (default 200) exports of one
 * marked record each, one after the other, each followed by polling `/v1/query` every 20 ms for its marker.
 * Prints per shape:
 * - p50/p99/max from the export's 200 to the first answer that returns the record;
 * - object-store PUTs per minute for the tenant (data files from the sink's flush log lines, plus one manifest
 *   PUT per generation the partition's manifest gained) over the run;
 * - live files per open partition at the end (the manifest's files, or every `*.parquet` without one);
 * - the query suite's median latency (FRESH_QUERY_RUNS runs, default 5) over the current hour as written, then
 *   over the same hour once compacted to one file (the partition compacted in process as if sealed, queried by a
 *   fresh querier-only process).
 * Run under `flock /tmp/bench.lock`, and quote `uptime` next to the figures.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { compactPartition } from '@sluice/compaction';
import { createLocalObjectStore, manifestKey, parsePartitionManifest, type ObjectStore } from '@sluice/storage';
import {
  FRESH_TENANT,
  exportMarked,
  marker,
  quantile,
  startDeployment,
  waitVisible,
  type Shape,
} from '../helpers/freshness.js';
import { postQuery } from '../helpers/query-client.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const EXPORTS = Number(process.env.FRESH_EXPORTS ?? 200);
const QUERY_RUNS = Number(process.env.FRESH_QUERY_RUNS ?? 5);
const QUERY_SUITE = [
  'severity >= error | range(-3h, now) | limit 100',
  'true | range(-3h, now) | count',
  'contains(body, "fresh-") | range(-3h, now) | count by service',
];

/** The tenant's hour partitions (prefix → live file count) in the local store under `dataDir`. */
async function partitions(store: ObjectStore): Promise<Map<string, { live: number; generation: number | null }>> {
  const byPrefix = new Map<string, { parquet: number; manifest: boolean }>();
  for await (const e of store.list({ prefix: `data/tenant_id=${FRESH_TENANT}/` })) {
    if (e.kind !== 'object') continue;
    const prefix = e.key.slice(0, e.key.lastIndexOf('/') + 1);
    const p = byPrefix.get(prefix) ?? { parquet: 0, manifest: false };
    if (e.key.endsWith('/manifest.json')) p.manifest = true;
    else if (e.key.endsWith('.parquet')) p.parquet++;
    byPrefix.set(prefix, p);
  }
  const out = new Map<string, { live: number; generation: number | null }>();
  for (const [prefix, p] of byPrefix) {
    if (!p.manifest) {
      out.set(prefix, { live: p.parquet, generation: null });
      continue;
    }
    const m = parsePartitionManifest((await store.get(manifestKey(prefix)))!);
    out.set(prefix, { live: m.files.length, generation: m.generation });
  }
  return out;
}

/** Median latency in ms of each query of the suite. */
async function suiteLatency(queryUrl: string): Promise<number[]> {
  const out: number[] = [];
  for (const q of QUERY_SUITE) {
    await postQuery(queryUrl, FRESH_TENANT, q); // warm-up
    const times: number[] = [];
    for (let i = 0; i < QUERY_RUNS; i++) {
      const t = performance.now();
      const a = await postQuery(queryUrl, FRESH_TENANT, q);
      if (a.status !== 200) throw new Error(`${q}: ${a.status} ${a.text.slice(0, 200)}`);
      times.push(performance.now() - t);
    }
    out.push(quantile(times, 0.5));
  }
  return out;
}

const fmt = (ms: number): string => `${(ms / 1000).toFixed(3)} s`;

async function benchShape(shape: Shape): Promise<void> {
  const dir = tempDir(`bench-fresh-${shape}`);
  const store = createLocalObjectStore({ root: join(dir, 'data') });
  const deployment = await startDeployment(shape, dir, 'shipped');
  const lags: number[] = [];
  let runMs: number;
  let currentHour: number[];
  let flushFiles = 0;
  let flushes = 0;
  let parts: Map<string, { live: number; generation: number | null }>;
  try {
    const run = `${shape}${Date.now()}`;
    const started = performance.now();
    for (let i = 0; i < EXPORTS; i++) {
      const mark = marker(run, i);
      const acked = await exportMarked(deployment.otlpUrl, mark);
      const seen = await waitVisible(deployment.queryUrl, mark, 60_000, { pollMs: 20 });
      if (seen === null) throw new Error(`${mark} not visible after 60 s`);
      lags.push(seen - acked);
    }
    runMs = performance.now() - started;
    for (const line of deployment.processes[0]!.logs) {
      if (!line.includes('"sink flushed"')) continue;
      const files = /"files":(\d+)/.exec(line);
      flushes++;
      flushFiles += files ? Number(files[1]) : 0;
    }
    parts = await partitions(store);
    currentHour = await suiteLatency(deployment.queryUrl);
  } finally {
    await deployment.stop();
  }
  const manifestPuts = [...parts.values()].reduce((n, p) => n + (p.generation === null ? 0 : p.generation + 1), 0);
  const minutes = runMs / 60_000;

  // The same hours compacted to one file each (in process, as the compactor does once an hour is sealed).
  for (const prefix of parts.keys()) {
    const hourMs = Date.UTC(
      Number(/year=(\d+)/.exec(prefix)![1]),
      Number(/month=(\d+)/.exec(prefix)![1]) - 1,
      Number(/day=(\d+)/.exec(prefix)![1]),
      Number(/hour=(\d+)/.exec(prefix)![1]),
    );
    const outcome = await compactPartition(store, prefix, { now: () => hourMs + 3_600_000 + 901_000, graceSecs: 900 });
    if (outcome.status !== 'committed' && !(outcome.status === 'noop' && outcome.reason === 'single_file'))
      throw new Error(`compaction of ${prefix}: ${JSON.stringify(outcome)}`);
  }
  const compactedParts = await partitions(store);
  const querier = await spawnSluice(
    testConfigYaml({
      walDir: join(dir, 'wal-compacted'),
      dataDir: join(dir, 'data'),
      receiver: false,
      querier: true,
      defaultTenant: FRESH_TENANT,
    }),
    { dir },
  );
  let compactedHour: number[];
  try {
    await querier.waitReady();
    compactedHour = await suiteLatency(querier.queryUrl!);
  } finally {
    await querier.stop();
  }

  console.log(`\n${shape}: ${EXPORTS} exports over ${(runMs / 1000).toFixed(1)} s`);
  console.log(
    `  ack→visible: p50 ${fmt(quantile(lags, 0.5))}, p99 ${fmt(quantile(lags, 0.99))}, max ${fmt(Math.max(...lags))}`,
  );
  console.log(
    `  object-store PUTs/min for the tenant: ${((flushFiles + manifestPuts) / minutes).toFixed(1)} ` +
      `(${flushFiles} data files in ${flushes} flushes, ${manifestPuts} manifest generations; audit files not counted)`,
  );
  for (const [prefix, p] of parts)
    console.log(
      `  ${prefix.slice(prefix.indexOf('year='))}: ${p.live} live files at the end` +
        (p.generation === null ? ' (no manifest: not compacted yet)' : ` (manifest generation ${p.generation})`) +
        `, ${compactedParts.get(prefix)?.live ?? '?'} once compacted`,
    );
  for (let i = 0; i < QUERY_SUITE.length; i++)
    console.log(
      `  ${QUERY_SUITE[i]}: current hour ${currentHour[i]!.toFixed(1)} ms, compacted ${compactedHour[i]!.toFixed(1)} ms (median of ${QUERY_RUNS})`,
    );
}

async function main(): Promise<void> {
  console.log(
    `bench:freshness — load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const shape of ['single', 'split'] as const) await benchShape(shape);
  console.log(
    `\nload average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

await main();
