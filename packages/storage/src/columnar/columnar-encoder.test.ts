/**
 * @module columnar/columnar-encoder.test
 * The columnar encoder writes the same data file as hyparquet-writer, as far as any reader can tell: random rows
 * (NULLs, multi-byte UTF-8, u64 ≥ 2^63, empty strings) and edge files (bodies over 1 MiB, all-NULL columns, one
 * row, exact row-group boundaries, a dictionary that falls back to PLAIN mid-group) written through BOTH
 * encoders read back identically through our reader (`decodeLogRows`) and through DuckDB, with the same footer
 * statistics on every non-string column and exact (or absent) bounds on string columns.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { sourceFromBytes } from '../byte-range-source.js';
import { decodeLogRows } from '../decode-log-rows.js';
import type { StoredLogRow } from '../log-parquet-writer.js';
import { encodeLogsParquet } from '../log-parquet-writer.js';
import type { ParquetFileHandle } from '../parquet-reader.js';
import { openParquetFile } from '../parquet-reader.js';
import { LOG_COLUMN_NAMES, SCHEMA_VERSION, SCHEMA_VERSION_KEY, logSchema } from '../parquet-schema.js';
import { arbStoredRow } from '../testing/arbitraries.js';
import { sampleRows } from '../testing/sample-rows.js';
import { DICTIONARY_MAX_ENTRIES, STATISTICS_MAX_BYTES } from './byte-array-builder.js';
import { encodeLogsParquetColumnar } from './columnar-logs-writer.js';

const STRING_COLUMNS = new Set(
  logSchema()
    .filter((e) => e.type === 'BYTE_ARRAY' && (LOG_COLUMN_NAMES as readonly string[]).includes(e.name))
    .map((e) => e.name),
);
const utf8 = new TextEncoder();

async function readAll(file: ParquetFileHandle): Promise<StoredLogRow[]> {
  const out: StoredLogRow[] = [];
  for (const g of file.rowGroups) out.push(...decodeLogRows(await file.readRowGroup(g.index, LOG_COLUMN_NAMES)));
  return out;
}

/** Exact byte-order bounds of a string column's non-null values, as the reader reports them (or absent). */
function exactBounds(values: ArrayLike<unknown>): { min?: string; max?: string } {
  let min: string | undefined;
  let max: string | undefined;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'string') continue;
    const b = Buffer.from(utf8.encode(v));
    if (min === undefined || Buffer.compare(b, Buffer.from(utf8.encode(min))) < 0) min = v;
    if (max === undefined || Buffer.compare(b, Buffer.from(utf8.encode(max))) > 0) max = v;
  }
  if (min === undefined || max === undefined) return {};
  if (utf8.encode(min).length > STATISTICS_MAX_BYTES || utf8.encode(max).length > STATISTICS_MAX_BYTES) return {};
  return { min, max };
}

/** Footer statistics: equal to hyparquet-writer's on every non-string column; exact or absent on strings. */
async function assertSameStatistics(ours: ParquetFileHandle, theirs: ParquetFileHandle): Promise<void> {
  assert.equal(ours.rowGroups.length, theirs.rowGroups.length);
  for (const g of ours.rowGroups) {
    const t = theirs.rowGroups[g.index]!;
    assert.equal(g.numRows, t.numRows);
    assert.deepEqual(
      g.columns.map((c) => c.name),
      t.columns.map((c) => c.name),
    );
    const strings = await ours.readRowGroup(g.index, [...STRING_COLUMNS]);
    for (const [k, c] of g.columns.entries()) {
      const h = t.columns[k]!;
      assert.equal(c.nullCount, h.nullCount, `${c.name} null count`);
      if (STRING_COLUMNS.has(c.name)) {
        if (c.min === undefined && c.max === undefined) continue; // a column without statistics
        assert.deepEqual({ min: c.min, max: c.max }, exactBounds(strings[c.name]!), `${c.name} bounds`);
      } else {
        assert.deepEqual([c.min, c.max], [h.min, h.max], `${c.name} min/max`);
      }
    }
  }
}

describe('columnar encoder against hyparquet-writer', () => {
  let dir: string;
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  let seq = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-columnar-'));
    instance = await DuckDBInstance.create();
    conn = await instance.connect();
  });
  after(async () => {
    conn.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  });

  async function duckRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
    const path = join(dir, `f${seq++}.parquet`);
    await writeFile(path, bytes);
    const r = await conn.runAndReadAll(
      `SELECT * EXCLUDE (file_row_number), epoch_ns(time_unix_nano)::VARCHAR AS t_ns, template_id::VARCHAR AS tid
       FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
    );
    return r.getRowObjectsJson() as Record<string, unknown>[];
  }

  /** Both encoders, both readers: every check this suite makes on one input. */
  async function assertSameFile(rows: StoredLogRow[], rowGroupRows?: number): Promise<void> {
    const opts = rowGroupRows === undefined ? {} : { rowGroupRows };
    const theirsBytes = await encodeLogsParquet(rows, { ...opts, encoder: 'hyparquet-writer' });
    const oursBytes = await encodeLogsParquetColumnar(rows, opts);
    const ours = await openParquetFile(sourceFromBytes(oursBytes));
    const theirs = await openParquetFile(sourceFromBytes(theirsBytes));
    assert.equal(ours.numRows, rows.length);
    assert.deepEqual(await readAll(ours), rows);
    assert.deepEqual(await readAll(theirs), rows);
    await assertSameStatistics(ours, theirs);
    const kv = ours.metadata.key_value_metadata ?? [];
    assert.deepEqual(kv[0], { key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION });
    const d = await duckRows(oursBytes);
    assert.deepEqual(d, await duckRows(theirsBytes));
    assert.equal(d.length, rows.length);
    for (let i = 0; i < rows.length; i++) {
      const { record, mined, tenantId } = rows[i]!;
      assert.equal(d[i]!['tid'], mined.templateId.toString(), `row ${i} template_id`);
      assert.equal(d[i]!['t_ns'], BigInt.asIntN(64, record.timeUnixNano).toString(), `row ${i} time`);
      assert.equal(d[i]!['tenant_id'], tenantId);
      if (record.body?.kind === 'string') assert.equal(d[i]!['body'], record.body.value, `row ${i} body`);
    }
  }

  /** Rows where every OPTIONAL column is NULL. */
  const allNull = (r: StoredLogRow): StoredLogRow => ({
    ...r,
    record: {
      ...r.record,
      observedTimeUnixNano: 0n,
      severityText: '',
      eventName: '',
      body: null,
      traceId: new Uint8Array(0),
      spanId: new Uint8Array(0),
      scope: { ...r.record.scope, name: '', version: '', attributes: [] },
      resource: { ...r.record.resource, attributes: [] },
    },
  });

  test('random rows (NULLs, multi-byte UTF-8, u64 ≥ 2^63, empty strings, shared values) read back identically through our reader and DuckDB', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbStoredRow(), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom('as-is', 'shared', 'all-null'),
        async (generated, rowGroupRows, shape) => {
          const first = generated[0]!;
          const rows =
            shape === 'as-is'
              ? generated
              : shape === 'shared'
                ? generated.map((r, i) => ({
                    ...r,
                    tenantId: first.tenantId,
                    record: { ...r.record, severityText: i % 3 === 0 ? '' : first.record.severityText },
                  }))
                : generated.map(allNull);
          await assertSameFile(rows, rowGroupRows);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('bodies over 1 MiB (multi-byte, several pages per chunk) read back identically', async () => {
    const rows = sampleRows(5, { seed: 5 });
    const huge = 'é😀x'.repeat(200_000); // 1.4 MB of UTF-8
    for (const i of [1, 2, 4]) {
      rows[i] = { ...rows[i]!, record: { ...rows[i]!.record, body: { kind: 'string', value: `${i}${huge}` } } };
    }
    await assertSameFile(rows);
  });

  test('a single row, and rows exactly at and one past a row-group boundary, read back identically', async () => {
    const rows = sampleRows(9, { seed: 9 });
    await assertSameFile(rows.slice(0, 1));
    await assertSameFile(rows.slice(0, 8), 4);
    await assertSameFile(rows.slice(0, 9), 4);
  });

  test('an all-NULL file (every OPTIONAL column NULL in every row) reads back identically', async () => {
    await assertSameFile(sampleRows(20, { seed: 20 }).map(allNull), 7);
  });

  test('a string dictionary that outgrows its limit mid-group falls back to PLAIN and reads back identically', async () => {
    const n = DICTIONARY_MAX_ENTRIES + 500;
    const rows = sampleRows(n, { seed: 21 }).map((r, i) => ({ ...r, tenantId: `tenant-${i % (n - 7)}-ü` }));
    await assertSameFile(rows);
  });

  test('template_id and severity_number are dictionary-encoded, u64 ids at and above 2^63 included', async () => {
    const rows = sampleRows(3000, { seed: 31 }).map((r, i) => ({
      ...r,
      mined: { ...r.mined, templateId: i % 3 === 0 ? 2n ** 64n - 1n - BigInt(i % 7) : BigInt(i % 11) },
    }));
    await assertSameFile(rows, 1024);
    // Ids that differ only in their high 32 bits: dozens of them share hash slots, so a lookup that compared
    // the low word alone would merge them.
    await assertSameFile(
      rows.map((r, i) => ({ ...r, mined: { ...r.mined, templateId: (BigInt(i % 1500) << 32n) | 7n } })),
      2048,
    );
    const file = await openParquetFile(sourceFromBytes(await encodeLogsParquetColumnar(rows, { rowGroupRows: 1024 })));
    for (const g of file.metadata.row_groups) {
      for (const name of ['template_id', 'severity_number']) {
        const meta = g.columns.find((c) => c.meta_data?.path_in_schema[0] === name)?.meta_data;
        assert.ok(meta?.encodings.includes('RLE_DICTIONARY'), `${name} dictionary-encoded`);
        assert.notEqual(meta?.dictionary_page_offset, undefined, `${name} has a dictionary page`);
      }
    }
  });

  test('a template_id chunk with more distinct ids than a dictionary holds is written PLAIN and reads back identically', async () => {
    // One more distinct id than a dictionary holds: PLAIN. Exactly as many: still a dictionary.
    const n = DICTIONARY_MAX_ENTRIES + 1;
    const ids = (distinct: number) =>
      sampleRows(n, { seed: 32 }).map((r, i) => ({
        ...r,
        mined: { ...r.mined, templateId: BigInt(i % distinct) * 1_000_003n + (i % 2 === 0 ? 2n ** 63n : 0n) },
      }));
    const templateMeta = async (rows: StoredLogRow[]) => {
      const file = await openParquetFile(sourceFromBytes(await encodeLogsParquetColumnar(rows)));
      assert.deepEqual(await readAll(file), rows);
      return file.metadata.row_groups[0]!.columns.find((c) => c.meta_data?.path_in_schema[0] === 'template_id')
        ?.meta_data;
    };
    const plain = ids(n);
    await assertSameFile(plain);
    const over = await templateMeta(plain);
    assert.deepEqual(over?.encodings, ['PLAIN', 'RLE']);
    assert.equal(over?.dictionary_page_offset, undefined);
    const full = await templateMeta(ids(DICTIONARY_MAX_ENTRIES));
    assert.ok(full?.encodings.includes('RLE_DICTIONARY'), 'exactly DICTIONARY_MAX_ENTRIES ids stay a dictionary');
  });

  test('the writer factory writes the columnar file by default and keeps hyparquet-writer for bloom filters', async () => {
    const rows = sampleRows(50, { seed: 50 });
    assert.deepEqual(await encodeLogsParquet(rows), await encodeLogsParquetColumnar(rows));
    const bloom = await encodeLogsParquet(rows, { bloomFilterColumns: ['template_id'] });
    assert.deepEqual(
      bloom,
      await encodeLogsParquet(rows, { encoder: 'hyparquet-writer', bloomFilterColumns: ['template_id'] }),
    );
    assert.notDeepEqual(bloom, await encodeLogsParquet(rows, { encoder: 'hyparquet-writer' }));
  });
});
