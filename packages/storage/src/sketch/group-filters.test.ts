/**
 * @module sketch/group-filters.test
 * The per-row-group filters are sound and readable by others: our XXH64 equals hyparquet's reference; folding
 * never loses an inserted hash and sets the same bits as hyparquet's filter; a trace/span id filter never rules
 * out a group holding the id and does rule out others; DuckDB answers id equality right on our files (they carry
 * no Parquet bloom filter, which DuckDB 1.5 misreads on BLOB columns); a body n-gram sketch never rules out a
 * group that holds a match (random bodies and needles, multi-byte UTF-8, punctuation), and does rule out the
 * groups of a rare request id; a file without filters, or with a damaged index, answers "may match".
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { sbbfContains } from 'hyparquet/src/bloom.js';
import { xxhash64 } from 'hyparquet/src/xxhash.js';
import { sourceFromBytes } from '../byte-range-source.js';
import type { StoredLogRow } from '../log-parquet-writer.js';
import { encodeLogsParquet } from '../log-parquet-writer.js';
import { openParquetFile } from '../parquet-reader.js';
import { LOG_COLUMNS } from '../parquet-schema.js';
import { sampleRows } from '../testing/sample-rows.js';
import { decodeFilterIndex, encodeFilterIndex } from './filter-index.js';
import { NGRAM_BYTES, buildBodyNgramSketch, needleNgramHashes, sketchMayContain } from './body-ngram-sketch.js';
import { filterRange, groupMayContainText, groupMayContainValue } from './group-filters.js';
import { createSplitBlockBloom, sbbfInsert, sbbfMayContain, shrinkSplitBlockBloom } from './split-block-bloom.js';
import { xxhash64Into } from './xxhash64.js';

const utf8 = new TextEncoder();

/** Rows whose bodies are `bodies` (string bodies), trace ids from the sample rows. */
function rowsWithBodies(bodies: readonly string[], seed = 1): StoredLogRow[] {
  const base = sampleRows(bodies.length, { seed });
  return base.map((r, i) => ({ ...r, record: { ...r.record, body: { kind: 'string', value: bodies[i]! } } }));
}

/** PLAIN layout (u32 length + bytes per value) of `values`, as the encoder lays out bodies. */
function plainLayout(values: readonly string[]): { data: Uint8Array; starts: Int32Array } {
  const parts = values.map((v) => utf8.encode(v));
  const data = new Uint8Array(parts.reduce((n, p) => n + 4 + p.length, 0));
  const starts = new Int32Array(values.length + 1);
  let at = 0;
  parts.forEach((p, i) => {
    starts[i] = at;
    new DataView(data.buffer).setUint32(at, p.length, true);
    data.set(p, at + 4);
    at += 4 + p.length;
  });
  starts[values.length] = at;
  return { data, starts };
}

describe('XXH64 and the split-block bloom filter', () => {
  test('xxhash64Into equals the reference XXH64 on every length 0..99 at any offset', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 140 }), fc.nat(20), (bytes, skip) => {
        const start = Math.min(skip, bytes.length);
        const got = xxhash64Into(bytes, start, bytes.length, { hi: 0, lo: 0 });
        assert.equal((BigInt(got.hi) << 32n) | BigInt(got.lo), xxhash64(bytes.subarray(start)));
      }),
      { numRuns: 2000 },
    );
  });

  test('folding a filter to its fill bound keeps every inserted hash, and our bits are the reference bits', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(2 ** 32 - 1), fc.nat(2 ** 32 - 1)), { maxLength: 400 }), (hashes) => {
        const words = createSplitBlockBloom(256);
        for (const [hi, lo] of hashes) sbbfInsert(words, hi, lo);
        // hyparquet's filter (BigInt block index) agrees bit for bit.
        for (const [hi, lo] of hashes) assert.ok(sbbfContains(words, (BigInt(hi) << 32n) | BigInt(lo)));
        const small = shrinkSplitBlockBloom(words, 0.5);
        for (const [hi, lo] of hashes) assert.ok(sbbfMayContain(small, hi, lo), 'an inserted hash survives folding');
        for (const [hi, lo] of hashes) assert.ok(sbbfContains(small, (BigInt(hi) << 32n) | BigInt(lo)));
      }),
      { numRuns: 200 },
    );
  });
});

describe('trace and span id bloom filters', () => {
  let dir: string;
  let db: DuckDBConnection;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-bloom-'));
    db = await (await DuckDBInstance.create(':memory:')).connect();
  });
  after(async () => {
    db.closeSync();
    await rm(dir, { recursive: true, force: true });
  });

  test('every id of a group may be there, an id of another group is ruled out, and DuckDB counts ids right', async () => {
    const rows = sampleRows(3000, { seed: 7 });
    const bytes = await encodeLogsParquet(rows, { rowGroupRows: 1000 });
    const file = await openParquetFile(sourceFromBytes(bytes));
    for (const g of file.rowGroups) {
      assert.ok(filterRange(file, g.index, 'trace_id') !== null, `group ${g.index} has a trace_id filter`);
      assert.ok(filterRange(file, g.index, 'span_id') !== null, `group ${g.index} has a span_id filter`);
      for (const r of rows.slice(g.index * 1000, (g.index + 1) * 1000)) {
        if (r.record.traceId.length !== 16) continue;
        assert.ok(await groupMayContainValue(file, g.index, LOG_COLUMNS.traceId, r.record.traceId));
        assert.ok(await groupMayContainValue(file, g.index, LOG_COLUMNS.spanId, r.record.spanId));
      }
    }
    // An id of group 1 only.
    const id = rows[1500]!.record.traceId;
    const hex = Buffer.from(id).toString('hex');
    const ours = await Promise.all([0, 1, 2].map((i) => groupMayContainValue(file, i, LOG_COLUMNS.traceId, id)));
    assert.deepEqual(ours, [false, true, false]);
    // No Parquet bloom filter in the file, so DuckDB's equality on the BLOB column is answered from the data.
    const path = join(dir, 'ids.parquet');
    await writeFile(path, bytes);
    const meta = await db.runAndReadAll(
      `SELECT count(*)::INTEGER AS n FROM parquet_metadata('${path}') WHERE bloom_filter_offset IS NOT NULL`,
    );
    assert.equal(meta.getRowObjects()[0]!['n'], 0);
    const count = await db.runAndReadAll(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${path}') WHERE trace_id = from_hex('${hex}')`,
    );
    const want = rows.filter((r) => Buffer.from(r.record.traceId).toString('hex') === hex).length;
    assert.ok(want >= 1);
    assert.equal(count.getRowObjects()[0]!['n'], want);
  });

  test('a file written without filters (hyparquet-writer, or sketches off) answers "may match" everywhere', async () => {
    const rows = sampleRows(200, { seed: 3 });
    for (const bytes of [
      await encodeLogsParquet(rows, { encoder: 'hyparquet-writer' }),
      await encodeLogsParquet(rows, { sketches: false }),
    ]) {
      const file = await openParquetFile(sourceFromBytes(bytes));
      assert.equal(filterRange(file, 0, 'trace_id'), null);
      assert.equal(filterRange(file, 0, 'body'), null);
      assert.equal(await groupMayContainValue(file, 0, LOG_COLUMNS.traceId, new Uint8Array(16)), true);
      assert.equal(await groupMayContainText(file, 0, needleNgramHashes('no such text')), true);
    }
  });
});

describe('body n-gram sketches', () => {
  // Bodies from a small alphabet with multi-byte characters, so needles often do occur.
  const bodyArb = fc.string({
    unit: fc.constantFrom('a', 'b', 'c', '_', '7', 'é', '漢', '😀', ' ', '-', '='),
    maxLength: 40,
  });

  test('a group holding a body that contains the needle is never ruled out (random bodies and needles)', () => {
    fc.assert(
      fc.property(
        fc.array(bodyArb, { minLength: 1, maxLength: 30 }),
        bodyArb,
        fc.nat(),
        (bodies, randomNeedle, pick) => {
          const source = bodies[pick % bodies.length]!;
          const cut = [...source];
          const from = pick % (cut.length + 1);
          const sub = cut.slice(from, from + 1 + (pick % 12)).join('');
          const { data, starts } = plainLayout(bodies);
          const sketch = buildBodyNgramSketch(data, starts, bodies.length);
          for (const needle of [sub, randomNeedle]) {
            const matches = bodies.some((b) => b.includes(needle));
            const may = sketch === null || sketchMayContain(sketch, needleNgramHashes(needle));
            if (matches) assert.ok(may, `needle ${JSON.stringify(needle)} in ${JSON.stringify(bodies)}`);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('a request id that occurs once in 20,000 rows rules out every other group, read from the written file', async () => {
    const rows = sampleRows(20_000, { seed: 11 });
    const needle = 'req-5be2f0c94a7d13e8';
    rows[12_345] = {
      ...rows[12_345]!,
      record: { ...rows[12_345]!.record, body: { kind: 'string', value: `upstream timeout ${needle} after 30s` } },
    };
    const bytes = await encodeLogsParquet(rows, { rowGroupRows: 2000 });
    const file = await openParquetFile(sourceFromBytes(bytes));
    const hashes = needleNgramHashes(needle);
    const may: number[] = [];
    for (const g of file.rowGroups) if (await groupMayContainText(file, g.index, hashes)) may.push(g.index);
    assert.deepEqual(may, [6], 'only the group with the id is read');
    // A sketch costs less to read than what it spares: every group's sketch under half its compressed body chunk.
    for (const g of file.rowGroups) {
      const range = filterRange(file, g.index, 'body');
      assert.ok(range !== null);
      const body = g.columns.find((c) => c.name === LOG_COLUMNS.body)!;
      assert.ok(range.length <= body.compressedBytes / 2, `sketch ${range.length} B vs body ${body.compressedBytes} B`);
    }
  });

  test('needles without five word bytes in a row never prune; a damaged sketch index is ignored, not trusted', async () => {
    assert.deepEqual(needleNgramHashes('a'.repeat(NGRAM_BYTES - 1)), []);
    assert.deepEqual(needleNgramHashes('ab-cd-ef.gh ij'), [], 'no five word bytes in a row');
    assert.equal(needleNgramHashes('漢字').length, 2, 'six UTF-8 bytes: two windows');
    const rows = rowsWithBodies(['alpha beta', 'gamma delta']);
    const bytes = await encodeLogsParquet(rows);
    const file = await openParquetFile(sourceFromBytes(bytes));
    assert.equal(await groupMayContainText(file, 0, needleNgramHashes('zzzzzz')), false);
    const good = encodeFilterIndex([{ body: { offset: 100, length: 64 }, trace_id: { offset: 164, length: 32 } }]);
    assert.deepEqual(decodeFilterIndex(good, 1, 1000), [
      { body: { offset: 100, length: 64 }, trace_id: { offset: 164, length: 32 } },
    ]);
    for (const bad of [
      'not json',
      '{"version":2,"ngram":5,"groups":[{"body":[100,64]}]}',
      '{"version":1,"ngram":4,"groups":[{"body":[100,64]}]}',
      '{"version":1,"ngram":5,"groups":[{"body":[100,64]},{}]}',
      '{"version":1,"ngram":5,"groups":[{"body":[100,63]}]}',
      '{"version":1,"ngram":5,"groups":[{"body":[990,64]}]}',
      '{"version":1,"ngram":5,"groups":[[100,64]]}',
    ])
      assert.equal(decodeFilterIndex(bad, 1, 1000), null, bad);
  });
});
