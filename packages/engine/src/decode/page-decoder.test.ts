/**
 * @module page-decoder.test
 * The columnar decoder's reservations are exact: the buffers it keeps are reserved at their byte size, what it
 * holds only while decoding is given back, and a query over columns it handles is served by a pool of exactly its
 * need and refused by one a few bytes smaller.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryPool } from '@sluice/limits';
import type { ObjectStore } from '@sluice/storage';
import {
  LOG_COLUMNS,
  createLocalObjectStore,
  encodeLogsParquet,
  ensureZstd,
  openParquetFile,
  sourceFromBytes,
} from '@sluice/storage';
import { H, T0, makeRows, writeDataFiles } from '../testing/corpus.js';
import { run } from '../testing/harness.js';
import { chunkKind, chunkRange, decodeChunk } from './page-decoder.js';
import { PlainStringVector } from './string-vector.js';

/** A reserve that records what is held and the most held at once. */
function recordingReserve(): { grow(n: number): number; shrink(n: number): void; held: number; peak: number } {
  const r = {
    held: 0,
    peak: 0,
    grow(n: number): number {
      r.held += n;
      r.peak = Math.max(r.peak, r.held);
      return n;
    },
    shrink(n: number): void {
      r.held -= n;
    },
  };
  return r;
}

async function decodeColumn(bytes: Uint8Array, name: string) {
  const file = await openParquetFile(sourceFromBytes(bytes));
  const elements = new Map(file.metadata.schema.map((e) => [e.name, e]));
  const md = file.metadata.row_groups[0]?.columns.find((c) => c.meta_data?.path_in_schema[0] === name)?.meta_data;
  assert.ok(md, name);
  const element = elements.get(name) ?? { name };
  const kind = chunkKind(md, element);
  assert.ok(kind, `${name} is handled`);
  const { start, length } = chunkRange(md);
  const reserve = recordingReserve();
  const rows = Number(file.metadata.row_groups[0]?.num_rows);
  const d = decodeChunk(bytes.subarray(start, start + length), md, element, kind, rows, reserve);
  return { d, reserve, rows };
}

describe('columnar decoder reservations', () => {
  let bytes: Uint8Array = new Uint8Array(0);
  before(async () => {
    await ensureZstd();
    const rows = makeRows({ tenant: 'acme', count: 3000, startNs: T0, spanNs: H, seed: 5 }).map((r) =>
      r.record.body?.kind === 'string'
        ? {
            ...r,
            record: { ...r.record, body: { kind: 'string' as const, value: r.record.body.value + 'é'.repeat(600) } },
          }
        : r,
    );
    bytes = await encodeLogsParquet(rows, { rowGroupRows: 3000 });
  });

  test('an INT64 column keeps exactly 8 bytes per row reserved and gives back every page buffer', async () => {
    for (const name of [LOG_COLUMNS.templateId, LOG_COLUMNS.timeUnixNano, LOG_COLUMNS.effectiveTimeUnixNano]) {
      const { d, reserve, rows } = await decodeColumn(bytes, name);
      assert.equal(d.reserved, rows * 8, name);
      assert.equal((d.data as BigInt64Array).byteLength, rows * 8, name);
      assert.equal(reserve.held, d.reserved, `${name}: transient buffers given back`);
      assert.ok(reserve.peak > reserve.held, `${name}: the decompressed page was reserved while it lived`);
    }
  });

  test('a PLAIN string column keeps its decompressed pages and 10 bytes of row index per row reserved, exactly', async () => {
    const { d, reserve, rows } = await decodeColumn(bytes, LOG_COLUMNS.body);
    assert.ok(d.data instanceof PlainStringVector);
    const vec = d.data;
    assert.ok(vec.pages.length > 1, 'bodies span several pages');
    const pageBytes = vec.pages.reduce((s, p) => s + p.byteLength, 0);
    assert.equal(d.reserved, pageBytes + rows * 10 + (vec.pages.length + 1) * 4);
    assert.equal(reserve.held, d.reserved);
  });
});

describe('targeted decoding', () => {
  test('a row range decodes only the pages holding it: its rows as in a full decode, the others NULL, fewer pages kept', async () => {
    await ensureZstd();
    const rows = makeRows({ tenant: 'acme', count: 3000, startNs: T0, spanNs: H, seed: 6 }).map((r, i) => ({
      ...r,
      record: { ...r.record, body: { kind: 'string' as const, value: `row ${i} ${'ü'.repeat(700)}` } },
    }));
    const bytes = await encodeLogsParquet(rows, { rowGroupRows: 3000 });
    const file = await openParquetFile(sourceFromBytes(bytes));
    const elements = new Map(file.metadata.schema.map((e) => [e.name, e]));
    const md = file.metadata.row_groups[0]?.columns.find((c) => c.meta_data?.path_in_schema[0] === 'body')?.meta_data;
    assert.ok(md);
    const element = elements.get('body') ?? { name: 'body' };
    const { start, length } = chunkRange(md);
    const chunk = bytes.subarray(start, start + length);
    const full = decodeChunk(chunk, md, element, 'utf8', 3000, recordingReserve()).data;
    assert.ok(full instanceof PlainStringVector && full.pages.length >= 3, 'bodies span at least three pages');
    // Straddle the boundary between the second and third pages: both must be decoded, the others not.
    const boundary = full.pageRows[2] as number;
    const range = { start: boundary - 3, end: boundary + 3 };
    const part = decodeChunk(chunk, md, element, 'utf8', 3000, recordingReserve(), range);
    assert.ok(part.data instanceof PlainStringVector);
    assert.equal(part.data.pages.length, 2, `${part.data.pages.length} of ${full.pages.length} pages`);
    for (let i = range.start; i < range.end; i++) assert.equal(part.data.get(i), full.get(i));
    assert.equal(part.data.get(0), null);
    assert.equal(part.data.get(2999), null);
  });
});

describe('a query over columns the decoder handles needs an exact, reproducible reservation', () => {
  let dir = '';
  let store: ObjectStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'decode-reserve-'));
    store = createLocalObjectStore({ root: dir });
    await writeDataFiles(store, makeRows({ tenant: 'acme', count: 4000, startNs: T0, spanNs: 2n * H, seed: 8 }), {
      filesPerHour: 1,
      rowGroupRows: 1000,
    });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('a pool a few bytes smaller than the need refuses with query_memory_limit; exactly the need serves', async () => {
    const text =
      'contains(body, "retry") | range(2026-06-01T00:10:00Z, 2026-06-01T01:50:00Z) | count by service, template_id';
    const nowNs = T0 + 3n * H;
    const measure = createMemoryPool({ sizeBytes: 1 << 30 });
    const first = await run(store, text, { nowNs, pool: measure });
    assert.equal(first.outcome.status, 'ok');
    const need = measure.peakReserved();
    const again = createMemoryPool({ sizeBytes: 1 << 30 });
    await run(store, text, { nowNs, pool: again });
    assert.equal(again.peakReserved(), need, 'the need is the same on every run');

    const exact = await run(store, text, { nowNs, pool: createMemoryPool({ sizeBytes: need }) });
    assert.equal(exact.outcome.status, 'ok');
    assert.equal(exact.text, first.text);
    const short = await run(store, text, { nowNs, pool: createMemoryPool({ sizeBytes: need - 8 }) });
    assert.equal(short.outcome.status, 'error');
    assert.equal(short.outcome.status === 'error' ? short.outcome.error.kind : '', 'query_memory_limit');
  });
});
