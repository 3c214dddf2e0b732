/**
 * @module bench/sink-bench
 * The sink's CPU work per record on one thread, without the WAL or the store: decode OTLP/protobuf exports, mine
 * each record, buffer it, then encode the flush's data file. Two ways, interleaved so both see the same machine
 * state:
 * - `row objects`: what the sink did before the row buffer — every decoded record, its mining result and a row
 *   object kept until the flush, then sorted and encoded by `encodeLogsParquet`;
 * - `row buffer`: the sink's own `PartitionBuffer` and `planFlush` (rows packed into typed arrays and UTF-8
 *   buffers as they arrive; docs/design/storage-format.md, "Row buffer").
 * Each path runs in its own process (so one path's garbage is never collected on the other's clock), the two
 * alternating A B A B. Prints µs per record (median and best of the runs), the garbage collector's share of a
 * run, and whether both files are byte-identical.
 *
 * Run: `npm run bench:sink` (env BENCH_RECORDS, default 65,536 = one row group; BENCH_ROUNDS, default 3).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { LogRecord } from '@sluice/core';
import { effectiveTimeUnixNano } from '@sluice/core';
import { createMiner } from '@sluice/miner';
import { decodeLogsProtobuf, encodeLogsProtobuf } from '@sluice/otlp';
import { encodeLogsParquet, type StoredLogRow } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { PartitionBuffer } from '../partition-buffer.js';
import { planFlush } from '../write-flush.js';

const out = (s: string) => process.stdout.write(`${s}\n`);
const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 65_536);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const RUNS_PER_PROCESS = 3;
const EXPORT_RECORDS = 1000;
const TENANT = 'acme';

/** 1000-record exports, each record grouped under its resource as an SDK sends them. */
function exportsOf(records: readonly LogRecord[]): Uint8Array[] {
  const exports: Uint8Array[] = [];
  for (let i = 0; i < records.length; i += EXPORT_RECORDS) {
    const chunk = records.slice(i, i + EXPORT_RECORDS);
    const byResource = new Map<object, LogRecord[]>();
    for (const r of chunk) byResource.set(r.resource, [...(byResource.get(r.resource) ?? []), r]);
    exports.push(encodeLogsProtobuf([...byResource.values()].flat()));
  }
  return exports;
}

function decoded(body: Uint8Array): LogRecord[] {
  const result = decodeLogsProtobuf(body);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

async function rowObjects(exports: readonly Uint8Array[]): Promise<Uint8Array> {
  const miner = createMiner();
  const rows: StoredLogRow[] = [];
  for (const body of exports)
    for (const record of decoded(body)) rows.push({ tenantId: TENANT, record, mined: miner.mine(TENANT, record) });
  rows.sort((a, b) => {
    const ta = effectiveTimeUnixNano(a.record);
    const tb = effectiveTimeUnixNano(b.record);
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  });
  return encodeLogsParquet(rows);
}

async function rowBuffer(exports: readonly Uint8Array[]): Promise<Uint8Array> {
  const miner = createMiner();
  const buffer = new PartitionBuffer();
  for (const body of exports) {
    const records = decoded(body);
    const share = body.length / records.length;
    for (const record of records) buffer.add({ tenantId: TENANT, record, mined: miner.mine(TENANT, record) }, share, 0);
  }
  const plan = planFlush(miner.drainAuditEvents(), buffer.takeAll());
  const data = plan.objects.filter((o) => o.data);
  if (data.length !== 1) throw new Error(`expected one data file, got ${data.length}`);
  return data[0]!.encode();
}

let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

const paths: Record<string, (e: readonly Uint8Array[]) => Promise<Uint8Array>> = {
  'row objects': rowObjects,
  'row buffer': rowBuffer,
};

/** One child process: warm up, then `RUNS_PER_PROCESS` timed runs of one path; prints one JSON line. */
async function child(name: string): Promise<void> {
  const path = paths[name]!;
  // All in one hour, so one partition and one data file.
  const records = sampleRows(RECORDS, { seed: 13, tenant: TENANT, startNs: 1_764_547_200_000_000_000n }).map(
    (r) => r.record,
  );
  const exports = exportsOf(records);
  await path(exports.slice(0, 8)); // warm up (zstd init, JIT)
  const runs: { us: number; gc: number }[] = [];
  let bytes: Uint8Array = new Uint8Array(0);
  for (let i = 0; i < RUNS_PER_PROCESS; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gcMs = 0;
    const t0 = performance.now();
    bytes = await path(exports);
    const ms = performance.now() - t0;
    // GC entries are delivered asynchronously: let them arrive before reading the sum.
    await new Promise((resolve) => setTimeout(resolve, 10));
    runs.push({ us: (ms * 1000) / RECORDS, gc: gcMs / ms });
  }
  const digest = createHash('sha256').update(bytes).digest('hex');
  out(JSON.stringify({ runs, digest, exports: exports.length }));
}

/** The parent: child processes of the two paths alternately (A B A B …), so both see the same machine state. */
function parent(): void {
  const results = new Map<string, { us: number; gc: number }[]>(Object.keys(paths).map((n) => [n, []]));
  const digests = new Map<string, string>();
  let exports = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of Object.keys(paths)) {
      const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, SINK_BENCH_PATH: name },
        encoding: 'utf8',
      });
      if (res.status !== 0) throw new Error(`${name} run failed: ${res.stderr}`);
      const line = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as {
        runs: { us: number; gc: number }[];
        digest: string;
        exports: number;
      };
      results.get(name)!.push(...line.runs);
      digests.set(name, line.digest);
      exports = line.exports;
    }
  }
  out(
    `sink bench: ${RECORDS} records in ${exports} OTLP/protobuf exports (sampleRows seed 13), decode + mine + ` +
      `buffer + one data file; ${ROUNDS} rounds of one process per path (A B A B), ${RUNS_PER_PROCESS} runs each; ` +
      `node ${process.version}`,
  );
  for (const [name, runs] of results) {
    const sorted = [...runs].sort((a, b) => a.us - b.us);
    const median = sorted[sorted.length >> 1]!;
    const gc = [...runs].map((r) => r.gc).sort((a, b) => a - b)[runs.length >> 1]!;
    out(
      `${name.padEnd(12)} median ${median.us.toFixed(2)} µs/record, best ${sorted[0]!.us.toFixed(2)}; ` +
        `GC median ${(gc * 100).toFixed(0)} % of the run (runs ${runs.map((r) => r.us.toFixed(1)).join('/')})`,
    );
  }
  const [a, b] = [...digests.values()];
  out(`both files byte-identical: ${a === b}`);
}

const which = process.env['SINK_BENCH_PATH'];
if (which !== undefined) await child(which);
else parent();
