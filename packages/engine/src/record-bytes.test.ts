/**
 * @module record-bytes.test
 * Rendering to bytes gives exactly `Buffer.from(renderLogRow(…))` for every row: string columns as PLAIN pages
 * (in the group and the slice layout) and as plain strings, values with quotes, backslashes, every control
 * character, multi-byte UTF-8, a leading BOM, invalid UTF-8 the decoder repairs, empty and NULL values, both body
 * kinds, and any projection. Records written back to back read as the records joined by commas across buffer
 * boundaries, a value larger than a buffer included, and every buffer is reserved before it is allocated.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { createMemoryPool } from '@sluice/limits';
import { BODY_KIND, LOG_COLUMNS, logSchema } from '@sluice/storage';
import {
  DictStringVector,
  FixedBytesVector,
  PlainStringVector,
  RowSlice,
  type ColumnData,
} from './decode/string-vector.js';
import type { Columns } from './predicate-eval.js';
import { RECORD_CHUNK_BYTES, RECORD_FIRST_CHUNK_BYTES, RecordBytes, renderLogRowBytes } from './record-bytes.js';
import { RECORD_COLUMNS, renderLogRow } from './records.js';
import { QueryAbort } from './failures.js';
import { MemoryTracker } from './tracker.js';

const C = LOG_COLUMNS;
const utf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');

/** Byte pieces values are made of: JSON specials, every control byte, multi-byte text, BOMs and invalid UTF-8. */
const PIECES: readonly Uint8Array[] = [
  utf8('plain text'),
  utf8('"quoted"'),
  utf8('back\\slash'),
  ...Array.from({ length: 0x20 }, (_, b) => Uint8Array.of(b)),
  Uint8Array.of(0x7f),
  utf8('Ünïcödé'),
  utf8('日本語'),
  utf8('🚀'),
  utf8('\u2028\u2029'),
  utf8('\uFEFF'),
  Uint8Array.of(0xff),
  Uint8Array.of(0xc3), // a lead byte without its continuation
  Uint8Array.of(0xc0, 0x80), // overlong
  Uint8Array.of(0xed, 0xa0, 0x80), // an encoded surrogate
  utf8('[{"key":"k","value":"v"}]'),
  new Uint8Array(0),
];

const value = fc.oneof(
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 6, arbitrary: fc.array(fc.constantFrom(...PIECES), { maxLength: 8 }) },
);

/** A PLAIN string column of `values` (`null` for NULL), laid out over pages of at most three rows. */
function plainColumn(values: readonly (Uint8Array[] | null)[]): PlainStringVector {
  const pages: Buffer[] = [];
  const page = new Uint16Array(values.length);
  const starts = new Int32Array(values.length);
  const lens = new Int32Array(values.length);
  const pageRows: number[] = [];
  for (let p = 0; p * 3 < values.length; p++) {
    pageRows.push(p * 3);
    const parts: Uint8Array[] = [Uint8Array.of(0xaa)]; // a byte before the first value: starts are not 0
    let at = 1;
    for (let i = p * 3; i < Math.min(values.length, p * 3 + 3); i++) {
      const v = values[i];
      page[i] = p;
      starts[i] = at;
      if (v === null || v === undefined) {
        lens[i] = -1;
        continue;
      }
      const bytes = Buffer.concat(v);
      lens[i] = bytes.length;
      parts.push(bytes);
      at += bytes.length;
    }
    pages.push(Buffer.concat(parts));
  }
  pageRows.push(values.length);
  return new PlainStringVector(pages, page, starts, lens, Int32Array.from(pageRows));
}

/** The same values as strings, decoded as the hyparquet path decodes them. */
function stringColumn(values: readonly (Uint8Array[] | null)[]): (string | null)[] {
  const decoder = new TextDecoder();
  return values.map((v) => (v === null ? null : decoder.decode(Buffer.concat(v))));
}

/** The record's string columns (BYTE_ARRAY in the schema): every one is drawn as PLAIN pages, strings or a dictionary. */
const STRING_COLUMNS: readonly string[] = RECORD_COLUMNS.filter(
  (name) => logSchema().find((e) => e.name === name)?.type === 'BYTE_ARRAY',
);

const KEYS = [
  'time_unix_nano',
  'observed_time_unix_nano',
  'severity_number',
  'severity_text',
  'trace_id',
  'span_id',
  'flags',
  'event_name',
  'scope_name',
  'scope_version',
  'scope_attributes',
  'attributes',
  'resource_attributes',
  'resource_schema_url',
  'scope_schema_url',
  'dropped_attributes_count',
  'template_id',
  'template_version',
  'body',
];

const rowsArb = fc.integer({ min: 1, max: 9 }).chain((n) =>
  fc.record({
    strings: fc.tuple(...STRING_COLUMNS.map(() => fc.array(value, { minLength: n, maxLength: n }))),
    kinds: fc.array(fc.constantFrom(BODY_KIND.STRING, BODY_KIND.STRUCTURED, BODY_KIND.ABSENT), {
      minLength: n,
      maxLength: n,
    }),
    ids: fc.array(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), { minLength: n, maxLength: n }),
    lossy: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    traced: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    layout: fc.constantFrom('plain', 'slice', 'strings', 'dict'),
    keep: fc.option(fc.subarray(KEYS), { nil: undefined }),
  }),
);

/** Columns of `n` rows from the arbitrary's draw, string columns in the given layout. */
function columns(d: {
  strings: (Uint8Array[] | null)[][];
  kinds: number[];
  ids: bigint[];
  lossy: boolean[];
  traced: boolean[];
  layout: 'plain' | 'slice' | 'strings' | 'dict';
}): Columns {
  const n = d.kinds.length;
  const cols: Record<string, ColumnData> = {
    [C.timeUnixNano]: BigInt64Array.from(d.ids, (x) => BigInt.asIntN(64, x)),
    [C.observedTimeUnixNano]: d.ids.map((x, i) => (i % 2 === 0 ? x : null)),
    [C.severityNumber]: Int32Array.from(d.kinds, (k, i) => k + i),
    [C.flags]: Int32Array.from(d.kinds, (_, i) => i * 7),
    [C.droppedAttributesCount]: Int32Array.from(d.kinds, (_, i) => i),
    [C.templateId]: BigUint64Array.from(d.ids),
    [C.templateVersion]: Int32Array.from(d.kinds, (_, i) => i + 1),
    [C.bodyKind]: Int32Array.from(d.kinds),
    [C.lossyFlag]: d.lossy,
    [C.traceId]: new FixedBytesVector(
      16,
      Uint8Array.from({ length: 16 * n }, (_, k) => (k * 37) & 0xff),
      Uint8Array.from(d.traced, (t) => (t ? 1 : 0)),
    ),
    [C.spanId]: d.traced.map((t, i) => (t ? Uint8Array.from({ length: 8 }, (_, k) => k + i) : null)),
  };
  STRING_COLUMNS.forEach((name, c) => {
    const values = d.strings[c] as (Uint8Array[] | null)[];
    if (d.layout === 'strings') cols[name] = stringColumn(values);
    else if (d.layout === 'dict') {
      // A dictionary of the distinct decoded values, NULL as -1.
      const text = stringColumn(values);
      const dict = [...new Set(text.filter((v): v is string => v !== null))];
      cols[name] = new DictStringVector(
        dict,
        Int32Array.from(text, (v) => (v === null ? -1 : dict.indexOf(v))),
      );
    } else if (d.layout === 'plain') cols[name] = plainColumn(values);
    else {
      // The slice layout: the vector holds rows [base, base + n) of a group of n + base + 2 rows.
      const base = 2;
      cols[name] = new RowSlice(plainColumn(values), base, n + base + 2);
    }
  });
  return cols;
}

function tracker(): MemoryTracker {
  return new MemoryTracker(createMemoryPool({ sizeBytes: 1 << 30 }).createQuery('q'));
}

describe('rendering records straight to bytes', () => {
  test('every row renders to the bytes of its string rendering, in every layout and projection', () => {
    fc.assert(
      fc.property(rowsArb, (d) => {
        const cols = columns(d);
        // The slice layout numbers rows from the group's first row.
        const rowAt = (k: number): number => (d.layout === 'slice' ? k + 2 : k);
        const keep = d.keep === undefined ? undefined : new Set(d.keep);
        const out = new RecordBytes(tracker());
        const want: string[] = [];
        for (let k = 0; k < d.kinds.length; k++) {
          const row = rowAt(k);
          // Columns not in the slice layout are indexed from 0: the slice case reads them at the same row.
          const all = d.layout === 'slice' ? shifted(cols, 2) : cols;
          const text = renderLogRow(all, row, keep);
          want.push(text);
          const n = renderLogRowBytes(all, row, keep, out);
          assert.equal(n, Buffer.byteLength(text, 'utf8'), `row ${k}: the length it reports`);
        }
        if (d.layout === 'slice') {
          // A row of the group outside the slice reads its string columns as NULL, on both paths.
          const all = shifted(cols, 2);
          const outside = renderLogRow(all, 0, keep);
          want.push(outside);
          assert.equal(renderLogRowBytes(all, 0, keep, out), Buffer.byteLength(outside, 'utf8'));
        }
        assert.equal(Buffer.concat(out.chunks()).toString('utf8'), want.join(','));
        assert.deepEqual(Buffer.concat(out.chunks()), Buffer.from(want.join(','), 'utf8'));
      }),
      { numRuns: 1500 },
    );
  });

  test('records across buffer boundaries, and a value larger than a buffer, read as the records joined by commas', () => {
    const t = tracker();
    const out = new RecordBytes(t);
    const sizes = [10, RECORD_CHUNK_BYTES - 200, 5000, RECORD_CHUNK_BYTES * 3 + 17, 1, 40_000, 40_000, 40_000];
    const want: string[] = [];
    let reserved = 0;
    for (const [k, size] of sizes.entries()) {
      const body = [utf8('x'.repeat(size)), utf8('"\n\u0001é')];
      const cols = columns({
        strings: STRING_COLUMNS.map((name) => [name === C.body ? body : null]),
        kinds: [BODY_KIND.STRING],
        ids: [BigInt(k)],
        lossy: [false],
        traced: [true],
        layout: 'plain',
      });
      want.push(renderLogRow(cols, 0, undefined));
      const before = t.held;
      const n = renderLogRowBytes(cols, 0, undefined, out);
      assert.equal(n, Buffer.byteLength(want.at(-1) as string, 'utf8'));
      reserved += t.held - before;
    }
    const chunks = out.chunks();
    assert.deepEqual(Buffer.concat(chunks), Buffer.from(want.join(','), 'utf8'));
    assert.equal(out.count, sizes.length);
    // Every buffer was reserved before it was made, at its own size: the tracker holds them all.
    assert.ok(chunks.length > 3, `${chunks.length} buffers`);
    assert.ok(reserved >= Buffer.concat(chunks).length, `reserved ${reserved}`);
    assert.equal(t.held, reserved);
    assert.ok(
      chunks.some((c) => c.length > RECORD_CHUNK_BYTES),
      'the large value has a buffer of its own size',
    );
  });

  test('a buffer is reserved before it is allocated: a pool that cannot hold the next one refuses the record', () => {
    const pool = createMemoryPool({ sizeBytes: RECORD_CHUNK_BYTES + 100 });
    const t = new MemoryTracker(pool.createQuery('q'));
    const out = new RecordBytes(t);
    const cols = columns({
      strings: STRING_COLUMNS.map((name) => [name === C.body ? [utf8('y'.repeat(RECORD_CHUNK_BYTES))] : null]),
      kinds: [BODY_KIND.STRING],
      ids: [1n],
      lossy: [false],
      traced: [false],
      layout: 'plain',
    });
    assert.throws(
      () => renderLogRowBytes(cols, 0, undefined, out),
      (e: unknown) => e instanceof QueryAbort && e.failure.kind === 'query_memory_limit',
    );
    // The first buffer fitted; the body's did not and was never made; the half-written record is not handed out.
    assert.equal(t.held, RECORD_FIRST_CHUNK_BYTES);
    assert.equal(out.count, 0);
    assert.deepEqual(out.chunks(), []);
  });

  test('a record refused mid-way leaves the whole records before it, and only those', () => {
    const pool = createMemoryPool({ sizeBytes: RECORD_CHUNK_BYTES });
    const out = new RecordBytes(new MemoryTracker(pool.createQuery('q')));
    const record = (body: string): Columns =>
      columns({
        strings: STRING_COLUMNS.map((name) => [name === C.body ? [utf8(body)] : null]),
        kinds: [BODY_KIND.STRING],
        ids: [7n],
        lossy: [false],
        traced: [false],
        layout: 'plain',
      });
    const small = record('fits');
    const text = renderLogRow(small, 0, undefined);
    assert.equal(renderLogRowBytes(small, 0, undefined, out), Buffer.byteLength(text));
    // Its head fits in the first buffer; the rest needs a buffer the pool refuses.
    assert.throws(() => renderLogRowBytes(record('z'.repeat(RECORD_CHUNK_BYTES)), 0, undefined, out), QueryAbort);
    assert.equal(out.count, 1);
    assert.equal(Buffer.concat(out.chunks()).toString('utf8'), text);
  });
});

/** `cols` with every non-slice column moved `by` rows later, so all columns agree on group row numbers. */
function shifted(cols: Columns, by: number): Columns {
  const out: Record<string, ColumnData> = {};
  for (const [name, c] of Object.entries(cols)) {
    if (c === undefined || c instanceof RowSlice) out[name] = c as ColumnData;
    else out[name] = new RowSlice(c, by, (c as { length: number }).length + by + 2);
  }
  return out;
}
