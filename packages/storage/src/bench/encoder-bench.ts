/**
 * @module bench/encoder-bench
 * The data-file encoder alone, on one core: hyparquet-writer (`encodeLogsParquet`) against the columnar encoder
 * (`encodeLogsParquetColumnar`) and the sink's row buffer (packing the rows, then `encodeLogRowBuffer`) on the
 * same 65,536 realistic rows (one full row group, already in time order), runs interleaved so
 * both see the same machine state. Prints rows/s (best and median of the runs) and output bytes of each, and
 * checks the files decode to the same rows.
 *
 * Run: `npm run bench:encoder` (or `npx tsc -b packages/storage && node packages/storage/dist/bench/encoder-bench.js`)
 */
import { isDeepStrictEqual } from 'node:util';
import { sourceFromBytes } from '../byte-range-source.js';
import { encodeLogRowBuffer, encodeLogsParquetColumnar } from '../columnar/columnar-logs-writer.js';
import { createLogRowBuffer } from '../columnar/log-row-buffer.js';
import { decodeLogRows } from '../decode-log-rows.js';
import type { StoredLogRow } from '../log-parquet-writer.js';
import { encodeLogsParquet } from '../log-parquet-writer.js';
import { openParquetFile } from '../parquet-reader.js';
import { LOG_COLUMN_NAMES } from '../parquet-schema.js';
import { sampleRows } from '../testing/sample-rows.js';

const out = (s: string) => process.stdout.write(`${s}\n`);
const ROWS = 65_536;
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);

type Encoder = (rows: readonly StoredLogRow[]) => Promise<Uint8Array>;
const encoders: [string, Encoder][] = [
  ['hyparquet-writer', (r) => encodeLogsParquet(r, { encoder: 'hyparquet-writer' })],
  ['columnar', (r) => encodeLogsParquetColumnar(r)],
  // What the sink does: pack each row when it arrives, encode the packed rows at the flush (both timed here).
  [
    'row buffer',
    (r) => {
      const buffer = createLogRowBuffer(r[0]!.tenantId);
      for (const row of r) buffer.add(row.record, row.mined);
      return encodeLogRowBuffer(buffer);
    },
  ],
];

const rows = sampleRows(ROWS, { seed: 11 });
for (const [, enc] of encoders) await enc(rows.slice(0, 8192)); // warm up (zstd init, JIT)
const times = new Map<string, number[]>(encoders.map(([n]) => [n, []]));
const files = new Map<string, Uint8Array>();
for (let run = 0; run < RUNS; run++) {
  for (const [name, enc] of encoders) {
    const t0 = performance.now();
    const bytes = await enc(rows);
    times.get(name)!.push(performance.now() - t0);
    files.set(name, bytes);
  }
}
out(
  `encoder bench: ${ROWS} rows (sampleRows seed 11), one row group, ${RUNS} interleaved runs, node ${process.version}`,
);
const rate = (ms: number) => Math.round(ROWS / (ms / 1000));
for (const [name] of encoders) {
  const t = [...times.get(name)!].sort((a, b) => a - b);
  const bytes = files.get(name)!.byteLength;
  out(
    `${name.padEnd(17)} best ${rate(t[0]!)} rows/s, median ${rate(t[t.length >> 1]!)} rows/s ` +
      `(runs ${times
        .get(name)!
        .map((x) => x.toFixed(0))
        .join('/')} ms); file ${bytes} B (${(bytes / ROWS).toFixed(1)} B/row)`,
  );
}
const decoded: StoredLogRow[][] = [];
for (const [name] of encoders) {
  const file = await openParquetFile(sourceFromBytes(files.get(name)!));
  decoded.push(decodeLogRows(await file.readRowGroup(0, LOG_COLUMN_NAMES)));
}
out(`all files decode to the input rows: ${decoded.every((d) => isDeepStrictEqual(d, rows))}`);
