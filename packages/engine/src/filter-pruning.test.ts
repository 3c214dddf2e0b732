/**
 * @module filter-pruning.test
 * Row-group filters change what is read, never what is answered: `contains(body, …)` and `trace_id ==` /
 * `span_id ==` count the same rows on files with filters and on the same rows without them (random needles,
 * multi-byte text, structured bodies), a rare request id is found by scanning one row group instead of all, and
 * a filter's bytes are held on the query's reservation while it is read, and only then.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { anyValueToJson, toHex } from '@sluice/core';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import {
  createLocalObjectStore,
  dataFileKey,
  encodeLogsParquet,
  filterRange,
  openParquetFile,
  sourceFromBytes,
  uuidv7,
} from '@sluice/storage';
import { createFilterPruner } from './filter-pruning.js';
import { H, T0, makeRows } from './testing/corpus.js';
import { run } from './testing/harness.js';
import { MemoryTracker } from './tracker.js';

const NOW = T0 + 2n * H;
const R = 'range(2026-06-01T00:00:00Z, 2026-06-01T01:00:00Z)';
const NEEDLE = 'req-5be2f0c94a7d13e8';
let dirs: string[] = [];
let withFilters: ObjectStore;
let without: ObjectStore;
let rows: StoredLogRow[] = [];

function bodyText(r: StoredLogRow): string | undefined {
  const b = r.record.body;
  return b === null ? undefined : b.kind === 'string' ? b.value : anyValueToJson(b);
}

async function store(sketches: boolean): Promise<ObjectStore> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-filters-'));
  dirs.push(dir);
  const s = createLocalObjectStore({ root: dir });
  // Two files of 2,000 rows in groups of 250: sixteen groups in all.
  for (const part of [rows.slice(0, 2000), rows.slice(2000)])
    await s.put(dataFileKey('acme', T0, uuidv7()), await encodeLogsParquet(part, { rowGroupRows: 250, sketches }));
  return s;
}

before(async () => {
  rows = makeRows({ tenant: 'acme', count: 4000, startNs: T0, spanNs: H, seed: 21 });
  // Multi-byte and rare text in a few bodies.
  rows[17] = {
    ...rows[17]!,
    record: { ...rows[17]!.record, body: { kind: 'string', value: 'Zürich 漢字テスト 😀 ok' } },
  };
  rows[3333] = {
    ...rows[3333]!,
    record: { ...rows[3333]!.record, body: { kind: 'string', value: `upstream timeout ${NEEDLE} after 30s` } },
  };
  withFilters = await store(true);
  without = await store(false);
});

after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
});

async function answer(s: ObjectStore, dsl: string): Promise<{ rows: number; pruned: number; scanned: number }> {
  const r = await run(s, dsl, { nowNs: NOW });
  assert.equal(r.outcome.status, 'ok', JSON.stringify(r.outcome));
  return { rows: r.json.rows, pruned: r.json.stats.row_groups_pruned, scanned: r.json.stats.row_groups_scanned };
}

describe('row-group filters in the engine', () => {
  test('contains(body, …) counts the same rows with and without filters, and as the oracle (random needles)', async () => {
    const texts = rows.map(bodyText).filter((t): t is string => t !== undefined);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // a slice of a stored body (structured bodies included: their canonical JSON)
          fc.tuple(fc.nat(texts.length - 1), fc.nat(60), fc.integer({ min: 1, max: 24 })).map(([i, from, len]) => {
            const cp = [...texts[i]!];
            return cp.slice(from % (cp.length || 1), (from % (cp.length || 1)) + len).join('');
          }),
          fc.string({
            unit: fc.constantFrom('a', 'e', 'r', 't', 'q', '-', '5', '漢', ' ', '"'),
            minLength: 1,
            maxLength: 12,
          }),
          fc.constantFrom(NEEDLE, '漢字テスト', 'Zürich', 'no-such-request-id-0000'),
        ),
        async (needle) => {
          fc.pre(needle.length > 0);
          const dsl = `contains(body, ${JSON.stringify(needle)}) | ${R} | count`;
          const a = await answer(withFilters, dsl);
          const b = await answer(without, dsl);
          assert.equal(a.rows, b.rows, needle);
          assert.equal(a.rows, texts.filter((t) => t.includes(needle)).length, needle);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a request id that occurs once is found by scanning one row group of sixteen', async () => {
    const a = await answer(withFilters, `contains(body, "${NEEDLE}") | ${R} | count`);
    const b = await answer(without, `contains(body, "${NEEDLE}") | ${R} | count`);
    assert.equal(a.rows, 1);
    assert.equal(b.rows, 1);
    assert.deepEqual([a.scanned, a.pruned], [1, 15]);
    assert.deepEqual([b.scanned, b.pruned], [16, 0]);
  });

  test('trace_id == and span_id == count the same rows with and without filters; an absent id scans nothing', async () => {
    const withIds = rows.filter((r) => r.record.traceId.length === 16);
    assert.ok(withIds.length >= 10, `${withIds.length} rows with a trace id`);
    for (const r of [withIds[0]!, withIds[withIds.length >> 1]!, withIds[withIds.length - 1]!]) {
      for (const [field, id] of [
        ['trace_id', toHex(r.record.traceId)],
        ['span_id', toHex(r.record.spanId)],
      ] as const) {
        const dsl = `${field} == "${id}" | ${R} | count`;
        const want = rows.filter((x) => toHex(field === 'trace_id' ? x.record.traceId : x.record.spanId) === id).length;
        assert.equal((await answer(withFilters, dsl)).rows, want);
        assert.equal((await answer(without, dsl)).rows, want);
        assert.ok((await answer(withFilters, dsl)).scanned < 16, `${field} filter pruned groups`);
      }
    }
    const absent = await answer(withFilters, `trace_id == "${'ab'.repeat(16)}" | ${R} | count`);
    assert.deepEqual([absent.rows, absent.scanned], [0, 0]);
  });

  test("a filter's bytes are reserved while it is read and given back after the check", async () => {
    const bytes = await encodeLogsParquet(rows.slice(0, 500), { rowGroupRows: 250 });
    const file = await openParquetFile(sourceFromBytes(bytes));
    const length = filterRange(file, 1, 'body')?.length ?? 0;
    assert.ok(length > 0);
    const pool = createMemoryPool({ sizeBytes: 1 << 24 });
    const tracker = new MemoryTracker(pool.createQuery('filters'));
    const heldAtRead: number[] = [];
    const watched = {
      ...file,
      readBytes: (offset: number, len: number) => {
        heldAtRead.push(tracker.held);
        return file.readBytes(offset, len);
      },
    };
    const parsed = parseQuery(`contains(body, "${NEEDLE}")`);
    assert.ok(parsed.ok && 'predicate' in parsed.value);
    const pruner = createFilterPruner(parsed.value.predicate);
    assert.equal(await pruner.mayMatch(watched, 1, tracker), false);
    assert.deepEqual(heldAtRead, [length]);
    assert.equal(tracker.held, 0);
    // A pool that cannot hold the filter refuses the check (typed), rather than reading unaccounted bytes.
    const small = createMemoryPool({ sizeBytes: 1 << 20 });
    const tight = new MemoryTracker(small.createQuery('tight', { maxBytes: length - 1 }));
    await assert.rejects(pruner.mayMatch(watched, 1, tight), /memory/i);
  });
});
