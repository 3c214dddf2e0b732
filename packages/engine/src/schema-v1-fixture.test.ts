/**
 * @module schema-v1-fixture.test
 * A data file of schema version 1, committed as written before version 2 (1 MiB pages, no page index; see
 * packages/storage/fixtures/), still decodes to its rows and answers every query exactly as the same rows
 * written by today's encoder (version 2: 128 KiB pages, page index), through both decoders.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObjectStore } from '@sluice/storage';
import {
  LOG_COLUMN_NAMES,
  SCHEMA_VERSION,
  SCHEMA_VERSION_KEY,
  createLocalObjectStore,
  dataFileKey,
  decodeLogRows,
  encodeLogsParquet,
  openParquetFile,
  sourceFromBytes,
  uuidv7,
} from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { run } from './testing/harness.js';

const FIXTURE = new URL('../../storage/fixtures/v1-columnar-1500-rows.parquet', import.meta.url);
/** How the fixture was made (packages/storage/fixtures/README.md). */
const T0 = 1_764_547_200_000_000_000n;
const ROWS = sampleRows(1500, { seed: 7, startNs: T0, tenant: 'acme' });
const NOW = T0 + 3_600_000_000_000n;

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

describe('schema version 1 files', () => {
  let dir = '';
  let v1: ObjectStore;
  let current: ObjectStore;
  const v1Bytes = new Uint8Array(readFileSync(FIXTURE));
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'schema-v1-'));
    v1 = createLocalObjectStore({ root: join(dir, 'v1') });
    current = createLocalObjectStore({ root: join(dir, 'current') });
    await v1.put(dataFileKey('acme', T0, uuidv7()), v1Bytes);
    await current.put(
      dataFileKey('acme', T0, uuidv7()),
      await encodeLogsParquet(ROWS, { rowGroupRows: 500, pageTargetBytes: 1024 }),
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('the committed fixture is version 1 without a page index, and decodes to the rows it was written from', async () => {
    const file = await openParquetFile(sourceFromBytes(v1Bytes));
    const version = file.metadata.key_value_metadata?.find((kv) => kv.key === SCHEMA_VERSION_KEY)?.value;
    assert.equal(version, '1');
    assert.notEqual(SCHEMA_VERSION, '1');
    assert.ok(file.metadata.row_groups.every((g) => g.columns.every((c) => c.column_index_offset === undefined)));
    const decoded = [];
    for (let g = 0; g < file.rowGroups.length; g++)
      decoded.push(...decodeLogRows(await file.readRowGroup(g, LOG_COLUMN_NAMES)));
    assert.deepEqual(decoded, ROWS);
  });

  test('queries over the version 1 file answer exactly as over the same rows in the current format', async () => {
    const times = ROWS.map((r) => r.record.timeUnixNano);
    const edge = `range(${iso(times[260]!)}, ${iso(times[1130]!)})`;
    const all = `range(${iso(T0)}, ${iso(NOW)})`;
    const statements = [
      `true | ${all} | count`,
      `true | ${edge} | count by template_id`,
      `true | ${edge} | count by service, bucket(1m)`,
      `contains(body, "timeout") | ${edge} | limit 30`,
      `severity >= warn | ${all} | sort ts desc | limit 10`,
      `trace_id == "${Buffer.from(ROWS[700]!.record.traceId).toString('hex')}" | ${all} | limit 5`,
      `true | ${edge} | limit 2000`,
    ];
    for (const text of statements) {
      for (const decoder of ['columnar', 'hyparquet'] as const) {
        const a = await run(v1, text, { nowNs: NOW, decoder });
        const b = await run(current, text, { nowNs: NOW, decoder });
        assert.equal(a.outcome.status, 'ok', `${decoder}: ${text}: ${a.text.slice(0, 200)}`);
        assert.ok(a.json.rows > 0, `${text} matches something`);
        const body = (t: string) => t.replace(/"stats":\{[^}]*\}/, '');
        assert.equal(body(a.text), body(b.text), `${decoder}: ${text}`);
      }
    }
  });
});
