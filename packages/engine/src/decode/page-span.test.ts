/**
 * @module page-span.test
 * The page index narrows a window edge to the pages it touches: the span is exactly the pages whose effective-time
 * bounds meet the window, it holds every row in the window, a window between pages skips the group, and a
 * malformed or absent index reads the whole group.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeLogsParquet, openParquetFile, sourceFromBytes } from '@sluice/storage';
import { readOffsetIndex } from 'hyparquet';
import { H, T0, makeRows } from '../testing/corpus.js';
import { windowRowSpan, type PageIndexFile } from './page-span.js';

const NO_POOL = { grow: (n: number): number => n, shrink: (): void => undefined };

async function fileOf(bytes: Uint8Array, group = 0): Promise<PageIndexFile> {
  const f = await openParquetFile(sourceFromBytes(bytes));
  const rowGroup = f.metadata.row_groups[group];
  assert.ok(rowGroup);
  return { rowGroup, byteLength: bytes.length, read: async (s, e) => bytes.subarray(s, e) };
}

describe('page span from the page index', () => {
  test('a window edge keeps exactly the pages whose bounds meet it, and every row inside it', async () => {
    const rows = makeRows({ tenant: 'acme', count: 1000, startNs: T0, spanNs: H, seed: 5 });
    const bytes = await encodeLogsParquet(rows, { rowGroupRows: 1000, pageTargetBytes: 800 }); // 100 times a page
    const file = await fileOf(bytes);
    const chunk = file.rowGroup.columns.find((c) => c.meta_data?.path_in_schema[0] === 'effective_time_unix_nano')!;
    const view = new DataView(
      bytes.buffer,
      bytes.byteOffset + Number(chunk.offset_index_offset),
      chunk.offset_index_length,
    );
    const firsts = readOffsetIndex({ view, offset: 0 }).page_locations.map((p) => Number(p.first_row_index));
    assert.equal(firsts.length, 10);
    const times = rows.map((r) => r.record.timeUnixNano); // sorted, all set: the effective time
    // From the middle of page 3 to the middle of page 6.
    const window = { fromNs: times[350]!, toNs: times[650]! };
    const span = await windowRowSpan(file, window, NO_POOL);
    assert.deepEqual(span, { start: 300, end: 700 });
    for (let i = 0; i < 1000; i++)
      if (times[i]! >= window.fromNs && times[i]! < window.toNs) assert.ok(i >= span!.start && i < span!.end);
    // A window starting exactly at a page's first time keeps that page, and ends before the next page's first.
    assert.deepEqual(await windowRowSpan(file, { fromNs: times[400]!, toNs: times[500]! }, NO_POOL), {
      start: 400,
      end: 500,
    });
    // A window after every row: nothing to read.
    assert.deepEqual(await windowRowSpan(file, { fromNs: times[999]! + 1n, toNs: times[999]! + 2n }, NO_POOL), {
      start: 0,
      end: 0,
    });
  });

  test('a malformed or absent page index reads the whole group', async () => {
    const rows = makeRows({ tenant: 'acme', count: 300, startNs: T0, spanNs: H, seed: 6 });
    const bytes = await encodeLogsParquet(rows, { rowGroupRows: 300, pageTargetBytes: 800 });
    const file = await fileOf(bytes);
    const window = { fromNs: rows[100]!.record.timeUnixNano, toNs: rows[120]!.record.timeUnixNano };
    assert.ok((await windowRowSpan(file, window, NO_POOL)) !== undefined);
    const garbage: PageIndexFile = { ...file, read: async (s, e) => new Uint8Array(e - s).fill(0xff) };
    assert.equal(await windowRowSpan(garbage, window, NO_POOL), undefined);
    const noIndex: PageIndexFile = {
      ...file,
      rowGroup: {
        ...file.rowGroup,
        columns: file.rowGroup.columns.map((c) => ({ ...c, column_index_offset: undefined })),
      },
    };
    assert.equal(await windowRowSpan(noIndex, window, NO_POOL), undefined);
    const hyparquetFile = await encodeLogsParquet(rows, { encoder: 'hyparquet-writer' });
    assert.equal(await windowRowSpan(await fileOf(hyparquetFile), window, NO_POOL), undefined);
  });
});
