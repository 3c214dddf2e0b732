/**
 * @module duckdb-interop.test
 * DuckDB (the oracle, dev dependency only) reads the files Sluice writes and agrees with the input on every
 * checked column: counts, exact ns times, bodies, severities, attributes JSON, trace ids, u64 template ids.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { keyValuesToJson, toHex } from '@sluice/core';
import type { StoredLogRow } from './log-parquet-writer.js';
import { encodeAuditParquet, encodeLogsParquet } from './log-parquet-writer.js';
import { sampleRows } from './testing/sample-rows.js';

describe('DuckDB reads Sluice data and audit files', () => {
  let dir: string;
  let instance: DuckDBInstance;
  let conn: DuckDBConnection;
  let rows: StoredLogRow[];
  let path: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-duckdb-'));
    rows = sampleRows(3000, { seed: 3 });
    const [a, b] = rows;
    // Special rows: a structured body, an absent body, a template id above 2^63, no trace context.
    rows[0] = {
      ...a!,
      record: {
        ...a!.record,
        body: { kind: 'kvlist', values: [{ key: 'msg', value: { kind: 'string', value: 'héllo' } }] },
      },
      mined: { ...a!.mined, templateId: 2n ** 64n - 1n },
    };
    rows[1] = { ...b!, record: { ...b!.record, body: null, traceId: new Uint8Array(0), spanId: new Uint8Array(0) } };
    path = join(dir, 'logs.parquet');
    await writeFile(path, await encodeLogsParquet(rows, { rowGroupRows: 1000 }));
    instance = await DuckDBInstance.create();
    conn = await instance.connect();
  });
  after(async () => {
    conn.closeSync();
    instance.closeSync();
    await rm(dir, { recursive: true, force: true });
  });

  test('column types: UBIGINT template_id, TIMESTAMP_NS times, BLOB ids, list of struct params', async () => {
    const r = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
    const types = Object.fromEntries(
      r.getRowObjectsJson().map((o) => [String(o['column_name']), String(o['column_type'])]),
    );
    assert.equal(types['template_id'], 'UBIGINT');
    assert.equal(types['time_unix_nano'], 'TIMESTAMP_NS');
    assert.equal(types['severity_number'], 'UTINYINT');
    assert.equal(types['trace_id'], 'BLOB');
    assert.equal(types['params'], 'STRUCT(type_tag INTEGER, "value" VARCHAR)[]');
    assert.equal(types['resource.service.name'], 'VARCHAR');
  });

  test('agrees on count, exact ns times, body, severity, attributes JSON, trace_id bytes and template_id', async () => {
    const r = await conn.runAndReadAll(
      `SELECT epoch_ns(time_unix_nano)::VARCHAR AS t, body, severity_number AS sev, attributes, hex(trace_id) AS trace,
              template_id::VARCHAR AS tid, "resource.service.name" AS svc, len(params)::INTEGER AS np, body_kind
       FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
    );
    const got = r.getRowObjectsJson();
    assert.equal(got.length, rows.length);
    for (let i = 0; i < rows.length; i++) {
      const { record, mined } = rows[i]!;
      const g = got[i]!;
      const body =
        record.body === null
          ? null
          : record.body.kind === 'string'
            ? record.body.value
            : JSON.stringify(JSON.parse(String(g['body'])));
      assert.equal(g['t'], record.timeUnixNano.toString(), `row ${i} time`);
      assert.equal(g['body'], body, `row ${i} body`);
      assert.equal(g['sev'], record.severityNumber);
      assert.equal(g['attributes'], keyValuesToJson(record.attributes));
      assert.equal(g['trace'], record.traceId.length === 0 ? null : toHex(record.traceId).toUpperCase());
      assert.equal(g['tid'], mined.templateId.toString());
      assert.equal(g['np'], mined.params.length);
    }
    assert.equal(got[0]!['body'], '{"kvlistValue":{"values":[{"key":"msg","value":{"stringValue":"héllo"}}]}}');
    assert.equal(got[0]!['body_kind'], 1);
    assert.equal(got[1]!['body_kind'], 2);
    assert.equal(got[2]!['svc'], 'svc-' + String((Number(rows[2]!.mined.templateId) - 1000) % 5));
  });

  test('footer statistics are visible to DuckDB and prune a time-range scan', async () => {
    const mid = rows[1500]!.record.timeUnixNano;
    const r = await conn.runAndReadAll(
      `SELECT count(*)::VARCHAR AS n FROM read_parquet('${path}') WHERE epoch_ns(time_unix_nano) >= ${mid}`,
    );
    assert.equal(r.getRowObjectsJson()[0]!['n'], String(rows.filter((x) => x.record.timeUnixNano >= mid).length));
    const s = await conn.runAndReadAll(
      `SELECT stats_min_value, stats_max_value FROM parquet_metadata('${path}') WHERE path_in_schema = 'template_id' ORDER BY row_group_id`,
    );
    assert.equal(s.getRowObjectsJson()[0]!['stats_max_value'], (2n ** 64n - 1n).toString());
  });

  test('reads a file written with bloom filters on template_id, trace_id, span_id and resource.service.name', async () => {
    const bloomPath = join(dir, 'bloom.parquet');
    const some = rows.slice(0, 500);
    await writeFile(
      bloomPath,
      await encodeLogsParquet(some, {
        bloomFilterColumns: ['template_id', 'trace_id', 'span_id', 'resource.service.name'],
      }),
    );
    const id = some[10]!.mined.templateId;
    const r = await conn.runAndReadAll(
      `SELECT count(*)::INTEGER AS n FROM read_parquet('${bloomPath}') WHERE template_id = ${id}`,
    );
    assert.equal(r.getRowObjectsJson()[0]!['n'], some.filter((x) => x.mined.templateId === id).length);
    const b = await conn.runAndReadAll(
      `SELECT count(*)::INTEGER AS n FROM parquet_metadata('${bloomPath}') WHERE bloom_filter_offset IS NOT NULL`,
    );
    assert.equal(b.getRowObjectsJson()[0]!['n'], 4);
  });

  test('reads an audit file', async () => {
    const audit = join(dir, 'audit.parquet');
    await writeFile(
      audit,
      await encodeAuditParquet([
        {
          eventType: 'template_widened',
          tenantId: 'acme',
          templateId: 42n,
          oldVersion: 1,
          newVersion: 2,
          oldTemplate: 'a b',
          newTemplate: 'a <*>',
          positionsWidened: [1],
          triggeringLineSample: 'a z',
          timestampUnixNano: 1_764_547_200_000_000_001n,
        },
      ]),
    );
    const r = await conn.runAndReadAll(
      `SELECT event_kind, event_type, template_id::VARCHAR AS tid, epoch_ns("timestamp")::VARCHAR AS ts, positions_widened::VARCHAR AS pw FROM read_parquet('${audit}')`,
    );
    assert.deepEqual(r.getRowObjectsJson(), [
      { event_kind: 0, event_type: 'template_widened', tid: '42', ts: '1764547200000000001', pw: '[1]' },
    ]);
  });
});
