/**
 * @module bench/parquet-bench
 * Measures data-file encode throughput and size for 64k realistic rows, and the retained size of one decoded
 * row group relative to the footer's uncompressed size (the factor the querier reserves before decoding).
 *
 * Run: `npx tsc -b packages/storage && node --expose-gc packages/storage/dist/bench/parquet-bench.js`
 */
import { decodeLogRows } from '../decode-log-rows.js';
import { encodeLogsParquet } from '../log-parquet-writer.js';
import { openParquetFile } from '../parquet-reader.js';
import type { ParquetFileHandle } from '../parquet-reader.js';
import { sourceFromBytes } from '../byte-range-source.js';
import { LOG_COLUMN_NAMES } from '../parquet-schema.js';
import { sampleRows } from '../testing/sample-rows.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  process.stderr.write('run with node --expose-gc\n');
  process.exit(2);
}
const out = (s: string) => process.stdout.write(`${s}\n`);
const MB = (n: number) => `${(n / 1048576).toFixed(2)} MB`;

function settle(): number {
  for (let i = 0; i < 4; i++) gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function retained(
  file: ParquetFileHandle,
  cols: readonly string[],
  materialise: boolean,
): Promise<{ delta: number; uncompressed: number; estimate: number }> {
  const before = settle();
  const data = await file.readRowGroup(0, cols);
  const kept: unknown = materialise ? decodeLogRows(data) : data;
  const after = settle();
  // Keep `kept` alive across the measurement.
  if ((kept as object | undefined) === undefined) out('unreachable');
  return {
    delta: after - before,
    uncompressed: file.uncompressedBytes(0, cols),
    estimate: file.estimateDecodedBytes(0, cols),
  };
}

const ROWS = 65_536;
const rows = sampleRows(ROWS, { seed: 11 });
await encodeLogsParquet(rows.slice(0, 4096)); // warm up (zstd init, JIT)
const times: number[] = [];
let bytes: Uint8Array = new Uint8Array();
for (let run = 0; run < 3; run++) {
  const t0 = performance.now();
  bytes = await encodeLogsParquet(rows);
  times.push(performance.now() - t0);
}
const best = Math.min(...times);
out(
  `encode: ${ROWS} rows, runs ${times.map((t) => t.toFixed(0)).join('/')} ms → best ${Math.round(ROWS / (best / 1000))} rows/s`,
);
out(`file: ${bytes.byteLength} B (${MB(bytes.byteLength)}), ${(bytes.byteLength / ROWS).toFixed(1)} B/row`);

const file = await openParquetFile(sourceFromBytes(bytes));
out(
  `footer: ${file.bytesRead} B read to open; row group 0 total uncompressed ${MB(file.uncompressedBytes(0, LOG_COLUMN_NAMES))}`,
);
const projections: [string, readonly string[], boolean][] = [
  ['all columns (raw column arrays)', LOG_COLUMN_NAMES, false],
  ['all columns + decodeLogRows (materialised records)', LOG_COLUMN_NAMES, true],
  ['time_unix_nano, body', ['time_unix_nano', 'body'], false],
  ['template_id, severity_number, time_unix_nano', ['template_id', 'severity_number', 'time_unix_nano'], false],
  ['attributes, resource_attributes', ['attributes', 'resource_attributes'], false],
  ['params, trace_id', ['params', 'trace_id'], false],
];
for (const [label, cols, mat] of projections) {
  const samples: number[] = [];
  let unc = 0;
  let est = 0;
  for (let i = 0; i < 3; i++) {
    const r = await retained(file, cols, mat);
    samples.push(r.delta);
    unc = r.uncompressed;
    est = r.estimate;
  }
  const med = samples.sort((a, b) => a - b)[1]!;
  out(
    `decode ${label}: uncompressed ${MB(unc)}, retained ${MB(med)} (heapUsed+arrayBuffers, median of 3) → factor ${(med / unc).toFixed(2)}×; estimateDecodedBytes ${MB(est)} (${(est / med).toFixed(2)}× retained)`,
  );
}

out(
  'per column (row group 0, raw column arrays): uncompressed / retained / retained per row / factor / estimate÷retained',
);
for (const name of LOG_COLUMN_NAMES) {
  const samples: number[] = [];
  let unc = 0;
  let est = 0;
  for (let i = 0; i < 3; i++) {
    const r = await retained(file, [name], false);
    samples.push(r.delta);
    unc = r.uncompressed;
    est = r.estimate;
  }
  const med = samples.sort((a, b) => a - b)[1]!;
  const rowsInGroup = file.rowGroups[0]!.numRows;
  out(
    `  ${name.padEnd(26)} ${String(unc).padStart(9)} B  ${String(med).padStart(9)} B  ${(med / rowsInGroup).toFixed(1).padStart(6)} B/row  ${(med / Math.max(unc, 1)).toFixed(2)}×  est ${(est / med).toFixed(2)}×`,
  );
}
