/**
 * @module log-parquet.test
 * Data files round-trip exactly through encode → byte-range source → per-row-group read → decode; footers carry
 * exact statistics; reading one row group fetches only a fraction of the file.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { ByteRangeSource } from './byte-range-source.js';
import { sourceFromBytes, sourceFromStore } from './byte-range-source.js';
import { decodeLogRows } from './decode-log-rows.js';
import { dataFileKey } from './keys.js';
import { createLocalObjectStore } from './local-object-store.js';
import type { StoredLogRow } from './log-parquet-writer.js';
import { LogsParquetWriter, encodeAuditParquet, encodeLogsParquet } from './log-parquet-writer.js';
import type { ParquetFileHandle } from './parquet-reader.js';
import { openParquetFile } from './parquet-reader.js';
import { AUDIT_COLUMN_NAMES, LOG_COLUMN_NAMES } from './parquet-schema.js';
import { arbStoredRow } from './testing/arbitraries.js';
import { sampleRows } from './testing/sample-rows.js';
import { uuidv7 } from './uuidv7.js';

async function readAll(file: ParquetFileHandle): Promise<StoredLogRow[]> {
  const out: StoredLogRow[] = [];
  for (const g of file.rowGroups) out.push(...decodeLogRows(await file.readRowGroup(g.index, LOG_COLUMN_NAMES)));
  return out;
}

/** A source that records the longest single read. */
function watched(source: ByteRangeSource): ByteRangeSource & { maxRead: number } {
  const w = {
    byteLength: source.byteLength,
    maxRead: 0,
    read: async (s: number, e: number) => {
      w.maxRead = Math.max(w.maxRead, e - s);
      return source.read(s, e);
    },
  };
  return w;
}

describe('data file round trip', () => {
  test('random rows (every body kind, u64 times and ids, absent ids, unicode) decode to exactly the input', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbStoredRow(), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 16 }),
        async (rows, rowGroupRows) => {
          const bytes = await encodeLogsParquet(rows, { rowGroupRows });
          const file = await openParquetFile(sourceFromBytes(bytes));
          assert.equal(file.numRows, rows.length);
          assert.equal(file.rowGroups.length, Math.ceil(rows.length / rowGroupRows));
          assert.deepEqual(await readAll(file), rows);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('edge values survive: time 0 and 2^64-1, template id 2^64-1, empty strings, absent body', async () => {
    const [base] = sampleRows(1);
    assert.ok(base !== undefined);
    const rows: StoredLogRow[] = [
      {
        ...base,
        record: {
          ...base.record,
          timeUnixNano: 0n,
          observedTimeUnixNano: 0n,
          body: null,
          severityText: '',
          traceId: new Uint8Array(0),
        },
      },
      {
        ...base,
        record: { ...base.record, timeUnixNano: 2n ** 64n - 1n, observedTimeUnixNano: 2n ** 63n },
        mined: { ...base.mined, templateId: 2n ** 64n - 1n },
      },
      {
        ...base,
        record: {
          ...base.record,
          body: { kind: 'kvlist', values: [{ key: 'k', value: { kind: 'bytes', value: new Uint8Array([1, 2]) } }] },
        },
      },
    ];
    const file = await openParquetFile(sourceFromBytes(await encodeLogsParquet(rows)));
    assert.deepEqual(await readAll(file), rows);
    const cols = await file.readRowGroup(0, [
      'body_kind',
      'body',
      'observed_time_unix_nano',
      'effective_time_unix_nano',
    ]);
    assert.deepEqual(Array.from(cols['body_kind']!), [2, 0, 1]);
    assert.equal(cols['body']![0], null, 'an absent body is NULL');
    assert.equal(cols['observed_time_unix_nano']![0], null, 'a wire 0 observed time is NULL');
    assert.equal(cols['effective_time_unix_nano']![0], 0n);
  });

  test('ids of an invalid length are stored as NULL and read back empty', async () => {
    const [base] = sampleRows(1);
    assert.ok(base !== undefined);
    const row: StoredLogRow = {
      ...base,
      record: { ...base.record, traceId: new Uint8Array(5), spanId: new Uint8Array(16) },
    };
    const file = await openParquetFile(sourceFromBytes(await encodeLogsParquet([row])));
    const cols = await file.readRowGroup(0, ['trace_id', 'span_id']);
    assert.deepEqual([cols['trace_id']![0], cols['span_id']![0]], [null, null]);
    const [back] = await readAll(file);
    assert.deepEqual([back?.record.traceId.length, back?.record.spanId.length], [0, 0]);
  });

  test('an empty input writes a valid file with no row groups', async () => {
    const file = await openParquetFile(sourceFromBytes(await encodeLogsParquet([])));
    assert.equal(file.numRows, 0);
    assert.equal(file.rowGroups.length, 0);
  });

  test('the streaming writer refuses a row group larger than rowGroupRows', async () => {
    const w = await LogsParquetWriter.create({ rowGroupRows: 2 });
    assert.throws(() => w.writeRowGroup(sampleRows(3)), RangeError);
  });
});

describe('a 70,000-row file in the local store', () => {
  const N = 70_000;
  let root: string;
  let rows: StoredLogRow[];
  let size: number;
  let source: ByteRangeSource;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-parquet-'));
    const store = createLocalObjectStore({ root });
    rows = sampleRows(N, { seed: 7 });
    const bytes = await encodeLogsParquet(rows);
    size = bytes.byteLength;
    const key = dataFileKey('acme', rows[0]!.record.timeUnixNano, uuidv7());
    await store.put(key, bytes);
    source = sourceFromStore(store, key, size);
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('has two row groups (65,536 + 4,464) whose footer min/max on time and template_id are exact', async () => {
    const file = await openParquetFile(source);
    assert.deepEqual(
      file.rowGroups.map((g) => g.numRows),
      [65_536, N - 65_536],
    );
    for (const g of file.rowGroups) {
      const slice = rows.slice(g.rowStart, g.rowStart + g.numRows);
      const times = slice.map((r) => r.record.timeUnixNano);
      const ids = slice.map((r) => r.mined.templateId);
      const min = (xs: bigint[]) => xs.reduce((a, b) => (b < a ? b : a));
      const max = (xs: bigint[]) => xs.reduce((a, b) => (b > a ? b : a));
      const col = (name: string) => g.columns.find((c) => c.name === name);
      assert.equal(col('time_unix_nano')?.min, min(times));
      assert.equal(col('time_unix_nano')?.max, max(times));
      assert.equal(col('effective_time_unix_nano')?.min, min(times));
      assert.equal(col('template_id')?.min, min(ids));
      assert.equal(col('template_id')?.max, max(ids));
      assert.equal(col('severity_number')?.min, 9);
      assert.equal(col('severity_number')?.max, 17);
      assert.ok((col('body')?.uncompressedBytes ?? 0) > (col('body')?.compressedBytes ?? 0), 'ZSTD compresses bodies');
    }
  });

  test('every row group decodes back to exactly the input rows', async () => {
    const file = await openParquetFile(source);
    const back = await readAll(file);
    assert.equal(back.length, N);
    assert.deepEqual(back, rows);
  });

  test('opening reads only the footer, and one row group with two columns reads a small fraction of the file', async () => {
    const w = watched(source);
    const file = await openParquetFile(w);
    const footerBytes = file.bytesRead;
    assert.ok(footerBytes <= 16 * 1024 && footerBytes < size / 50, `footer read ${footerBytes} of ${size}`);
    const g = file.rowGroups[1]!;
    const want = ['time_unix_nano', 'severity_number'];
    const cols = await file.readRowGroup(1, want);
    assert.equal(cols['time_unix_nano']!.length, g.numRows);
    const chunkBytes = g.columns.filter((c) => want.includes(c.name)).reduce((s, c) => s + c.compressedBytes, 0);
    const groupBytes = file.bytesRead - footerBytes;
    assert.ok(
      groupBytes >= chunkBytes && groupBytes <= chunkBytes + 1024,
      `read ${groupBytes} for chunks of ${chunkBytes}`,
    );
    assert.ok(file.bytesRead < size * 0.05, `read ${file.bytesRead} of ${size}`);
    await file.readRowGroup(0, LOG_COLUMN_NAMES);
    assert.ok(w.maxRead < size * 0.9, `largest single read ${w.maxRead} of ${size}: never the whole file`);
    assert.equal(
      file.uncompressedBytes(1, want),
      chunkBytes === 0
        ? 0
        : g.columns.filter((c) => want.includes(c.name)).reduce((s, c) => s + c.uncompressedBytes, 0),
    );
  });

  test('unknown columns and row groups are refused', async () => {
    const file = await openParquetFile(source);
    await assert.rejects(file.readRowGroup(0, ['no_such_column']), /unknown column/);
    await assert.rejects(file.readRowGroup(2, ['body']), RangeError);
  });
  test('a row group read in slices decodes exactly its rows, across page boundaries, and bad slices are refused', async () => {
    const file = await openParquetFile(source);
    const g = file.rowGroups[0]!;
    // Uneven slices so some boundaries fall inside pages; their concatenation is the whole group.
    const back: StoredLogRow[] = [];
    for (let start = 0; start < g.numRows; start += 9_973) {
      const end = Math.min(g.numRows, start + 9_973);
      const slice = decodeLogRows(await file.readRowGroup(0, LOG_COLUMN_NAMES, { start, end }));
      assert.equal(slice.length, end - start);
      back.push(...slice);
    }
    assert.deepEqual(back, rows.slice(0, g.numRows));
    const tail = decodeLogRows(await file.readRowGroup(1, LOG_COLUMN_NAMES, { start: 4_000, end: 4_464 }));
    assert.deepEqual(tail, rows.slice(65_536 + 4_000, N));
    await assert.rejects(file.readRowGroup(1, ['body'], { start: 0, end: 4_465 }), RangeError);
    await assert.rejects(file.readRowGroup(1, ['body'], { start: 10, end: 10 }), RangeError);
  });
});

describe('audit file', () => {
  test('template events round-trip through the reader', async () => {
    const events = [
      {
        eventType: 'template_created' as const,
        tenantId: 't/1',
        templateId: 2n ** 64n - 2n,
        oldVersion: 0,
        newVersion: 1,
        oldTemplate: '',
        newTemplate: 'user <*> logged in',
        positionsWidened: [],
        triggeringLineSample: 'user bob logged in',
        timestampUnixNano: 1_764_547_200_123_456_789n,
      },
      {
        eventType: 'template_widened' as const,
        tenantId: 't/1',
        templateId: 5n,
        oldVersion: 1,
        newVersion: 2,
        oldTemplate: 'a b c',
        newTemplate: 'a <*> <*>',
        positionsWidened: [1, 2],
        triggeringLineSample: 'a x y',
        timestampUnixNano: 1n,
      },
    ];
    const file = await openParquetFile(sourceFromBytes(await encodeAuditParquet(events)));
    assert.deepEqual(file.columnNames, [...AUDIT_COLUMN_NAMES]);
    const c = await file.readRowGroup(0, [...AUDIT_COLUMN_NAMES]);
    assert.deepEqual(Array.from(c['event_kind']!), [6, 0]);
    assert.deepEqual(Array.from(c['event_type']!), ['template_created', 'template_widened']);
    assert.deepEqual(Array.from(c['template_id']!), [2n ** 64n - 2n, 5n]);
    assert.deepEqual(Array.from(c['timestamp']!), [1_764_547_200_123_456_789n, 1n]);
    assert.deepEqual(Array.from(c['positions_widened']!), [[], [1, 2]]);
    assert.deepEqual(Array.from(c['new_template']!), ['user <*> logged in', 'a <*> <*>']);
  });
});
