/**
 * @module columnar/log-row-buffer.test
 * Rows packed into a row buffer as they arrive and encoded at the flush give the very file the row-object path
 * gives for the same rows sorted stably by effective time (byte for byte), and that file reads back as those rows
 * through our reader and through DuckDB: random rows (NULLs, multi-byte UTF-8, u64 ≥ 2^63, empty strings, equal
 * times, shared and distinct resources), bodies over 1 MiB, a dictionary that falls back to PLAIN, several row
 * groups from shuffled input.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { effectiveTimeUnixNano } from '@sluice/core';
import fc from 'fast-check';
import { sourceFromBytes } from '../byte-range-source.js';
import { decodeLogRows } from '../decode-log-rows.js';
import type { StoredLogRow } from '../log-parquet-writer.js';
import { openParquetFile } from '../parquet-reader.js';
import { LOG_COLUMN_NAMES } from '../parquet-schema.js';
import { arbStoredRow } from '../testing/arbitraries.js';
import { prng, sampleRows } from '../testing/sample-rows.js';
import { DICTIONARY_MAX_ENTRIES } from './byte-array-builder.js';
import { encodeLogRowBuffer, encodeLogsParquetColumnar } from './columnar-logs-writer.js';
import { createLogRowBuffer } from './log-row-buffer.js';

/** What the sink wrote before the row buffer: the rows stably sorted by effective time (u64 order). */
function sortedByEffectiveTime(rows: readonly StoredLogRow[]): StoredLogRow[] {
  return [...rows].sort((a, b) => {
    const ta = effectiveTimeUnixNano(a.record);
    const tb = effectiveTimeUnixNano(b.record);
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  });
}

function buffered(rows: readonly StoredLogRow[]) {
  const buffer = createLogRowBuffer(rows[0]!.tenantId);
  for (const r of rows) buffer.add(r.record, r.mined);
  return buffer;
}

const TIES = [0n, 1n, 1_767_225_600_000_000_000n, 2n ** 63n, 2n ** 63n + 1n, 2n ** 64n - 1n];

describe('row buffer against the row-object encoder', () => {
  let dir: string;
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  let seq = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-row-buffer-'));
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

  /** Same bytes as the row path, and the rows read back in effective-time order through both readers. */
  async function assertSameFile(
    rows: StoredLogRow[],
    options: { rowGroupRows?: number; pageTargetBytes?: number } = {},
    duck = true,
  ): Promise<void> {
    const expected = sortedByEffectiveTime(rows);
    const bytes = await encodeLogRowBuffer(buffered(rows), options);
    assert.ok(Buffer.from(bytes).equals(await encodeLogsParquetColumnar(expected, options)), 'same file bytes');
    const file = await openParquetFile(sourceFromBytes(bytes));
    const back: StoredLogRow[] = [];
    for (const g of file.rowGroups) back.push(...decodeLogRows(await file.readRowGroup(g.index, LOG_COLUMN_NAMES)));
    assert.deepEqual(back, expected);
    if (!duck) return;
    const d = await duckRows(bytes);
    assert.equal(d.length, expected.length);
    for (let i = 0; i < expected.length; i++) {
      const { record, mined, tenantId } = expected[i]!;
      assert.equal(d[i]!['tid'], mined.templateId.toString(), `row ${i} template_id`);
      assert.equal(d[i]!['t_ns'], BigInt.asIntN(64, record.timeUnixNano).toString(), `row ${i} time`);
      assert.equal(d[i]!['tenant_id'], tenantId);
      assert.equal(d[i]!['body'], record.body?.kind === 'string' ? record.body.value : d[i]!['body'], `row ${i} body`);
      if (record.body === null) assert.equal(d[i]!['body'], null, `row ${i} absent body`);
    }
  }

  test('random rows (NULLs, multi-byte UTF-8, u64 ≥ 2^63, empty strings, equal times, shared resources) give the row path’s bytes and read back through our reader and DuckDB', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(arbStoredRow(), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom('as-is', 'ties', 'shared'),
        fc.constantFrom(undefined, 64),
        async (generated, rowGroupRows, shape, pageTargetBytes) => {
          const first = generated[0]!;
          const rows = generated.map((r, i) => {
            const record =
              shape === 'ties'
                ? {
                    ...r.record,
                    timeUnixNano: TIES[i % TIES.length]!,
                    observedTimeUnixNano: TIES[(i * 5) % TIES.length]!,
                  }
                : shape === 'shared'
                  ? { ...r.record, resource: first.record.resource, scope: i % 2 ? first.record.scope : r.record.scope }
                  : r.record;
            return { ...r, tenantId: first.tenantId, record };
          });
          await assertSameFile(rows, { rowGroupRows, ...(pageTargetBytes ? { pageTargetBytes } : {}) });
        },
      ),
      { numRuns: 60 },
    );
  });

  test('bodies over 1 MiB (multi-byte UTF-8, a page each) give the same bytes and read back', async () => {
    const rows = sampleRows(6, { seed: 6 });
    const huge = 'é😀x'.repeat(200_000); // 1.4 MB of UTF-8
    for (const i of [0, 3, 5]) {
      rows[i] = { ...rows[i]!, record: { ...rows[i]!.record, body: { kind: 'string', value: `${i}${huge}` } } };
    }
    await assertSameFile(rows);
  });

  test('a severity-text dictionary that outgrows its limit mid-group falls back to PLAIN with the same bytes', async () => {
    const n = DICTIONARY_MAX_ENTRIES + 300;
    const rows = sampleRows(n, { seed: 22 }).map((r, i) => ({
      ...r,
      tenantId: 'acme',
      record: { ...r.record, severityText: `sev-${i}-ü` },
    }));
    await assertSameFile(rows, {}, false);
  });

  test('shuffled rows across several row groups are stored in effective-time order, equal times in arrival order', async () => {
    const random = prng(31);
    const rows = sampleRows(2_000, { seed: 31 }).map((r, i) => ({
      ...r,
      tenantId: 'acme',
      // 50 distinct times, so most rows tie with others and the arrival order decides.
      record: { ...r.record, timeUnixNano: 1_767_225_600_000_000_000n + BigInt(Math.floor(random() * 50)) * 1000n },
      mined: { ...r.mined, templateId: BigInt(i) },
    }));
    await assertSameFile(rows, { rowGroupRows: 700 }, false);
  });
});
