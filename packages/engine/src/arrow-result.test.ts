/**
 * @module arrow-result.test
 * Arrow answers (docs/design/query-engine.md, "Arrow results"): the same query answered as JSON and as an Arrow IPC
 * stream, read back with apache-arrow, says the same thing — records (NULLs, multi-byte UTF-8, empty strings,
 * template ids at and above 2^63, structured and absent bodies, `project`, `sort`) and aggregation rows, `rows` and
 * `stats` in the schema metadata — and the stream is counted against max_result_bytes at its own size and held on
 * the query's reservation until it is released.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC, type Table } from 'apache-arrow';
import { createMemoryPool, type QueryReservation } from '@sluice/limits';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { createLocalObjectStore } from '@sluice/storage';
import { ARROW_METADATA, recordSlotBytes } from './arrow-log-result.js';
import type { ExecuteOutcome, ResultFormat } from './execute.js';
import { executeQuery } from './execute.js';
import { H, T0, makeRows, writeDataFiles } from './testing/corpus.js';
import { LIMITS, q } from './testing/harness.js';

const NOW = T0 + 2n * H;
const R = 'range(2026-06-01T00:00:00Z, 2026-06-01T02:00:00Z)';
const TOP_U64 = 2n ** 64n - 1n;
const HIGH_U64 = 2n ** 63n + 5n;
let dir = '';
let store: ObjectStore;

/** A few rows the random corpus does not have: u64 ids at and above 2^63, multi-byte and empty strings. */
function specialRows(): StoredLogRow[] {
  const [a, b, c] = makeRows({ tenant: 'acme', count: 3, startNs: T0 + 10n, spanNs: 3n, seed: 7 }) as [
    StoredLogRow,
    StoredLogRow,
    StoredLogRow,
  ];
  return [
    {
      ...a,
      record: {
        ...a.record,
        body: { kind: 'string', value: 'grüße 日本語 🎉 ok' },
        severityText: 'ÉRREUR',
        eventName: '',
        attributes: [{ key: 'ville', value: { kind: 'string', value: 'Zürich 東京' } }],
      },
      mined: { ...a.mined, templateId: TOP_U64 },
    },
    { ...b, record: { ...b.record, body: { kind: 'string', value: '' } }, mined: { ...b.mined, templateId: HIGH_U64 } },
    { ...c, record: { ...c.record, body: null, severityText: '' }, mined: { ...c.mined, templateId: 2n ** 63n } },
  ];
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-arrow-'));
  store = createLocalObjectStore({ root: dir });
  const rows = [...makeRows({ tenant: 'acme', count: 400, startNs: T0, spanNs: 2n * H, seed: 11 }), ...specialRows()];
  await writeDataFiles(store, rows, { filesPerHour: 2, rowGroupRows: 64 });
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  readonly outcome: ExecuteOutcome;
  /** Reservation held when the engine returned (the body's, until it is released). */
  readonly heldAfter: number;
}

async function answer(
  text: string,
  format: ResultFormat,
  o: { maxResultBytes?: number; poolBytes?: number; observe?: boolean } = {},
): Promise<Answer> {
  const pool = createMemoryPool({ sizeBytes: o.poolBytes ?? 1 << 30 });
  const reservation = pool.createQuery('arrow');
  const outcome = await executeQuery({
    store,
    tenant: 'acme',
    query: q(text),
    nowNs: NOW,
    defaultWindowSecs: 3600,
    limits: {
      ...LIMITS,
      ...(o.maxResultBytes !== undefined ? { maxResultBytes: o.maxResultBytes } : {}),
      ...(o.observe === true ? { enforcement: 'observe' as const } : {}),
    },
    reservation,
    format,
  });
  const heldAfter = reservation.held;
  if (outcome.status === 'ok') outcome.budget.release();
  assert.equal(reservation.held, 0, 'nothing stays reserved once the body is released');
  return { outcome, heldAfter };
}

function okBody(a: Answer): Buffer {
  assert.equal(a.outcome.status, 'ok', JSON.stringify(a.outcome.status === 'error' ? a.outcome.error : null));
  return (a.outcome as Extract<ExecuteOutcome, { status: 'ok' }>).body;
}

/** The JSON answer, with the u64 members read as exact decimal strings (the fixture's attributes have no such keys). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function jsonAnswer(text: string): Promise<any> {
  const body = okBody(await answer(text, 'json')).toString('utf8');
  return JSON.parse(body.replace(/"(time_unix_nano|observed_time_unix_nano|template_id)":(\d+)/g, '"$1":"$2"'));
}

async function arrowAnswer(text: string): Promise<Table> {
  return tableFromIPC(okBody(await answer(text, 'arrow')));
}

/** Row `i` of column `name` as a plain value: 64-bit integers as bigint, NULL as null. */
function cellOf(table: Table, name: string, i: number): unknown {
  const column = table.getChild(name);
  assert.ok(column !== null, `column ${name}`);
  if (!column.isValid(i)) return null;
  const chunk = column.data[0];
  assert.ok(chunk !== undefined);
  const values = chunk.values as unknown;
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) return values[i];
  return column.get(i) as unknown;
}

const U64_FIELDS = ['time_unix_nano', 'observed_time_unix_nano', 'template_id'];
const JSON_FIELDS = ['scope_attributes', 'attributes', 'resource_attributes'];

/** Asserts that every JSON record equals the Arrow row at the same place, member by member. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function assertSameRecords(json: any, table: Table): void {
  assert.equal(table.numRows, json.records.length);
  const names = table.schema.fields.map((f) => f.name);
  json.records.forEach((rec: Record<string, unknown>, i: number) => {
    for (const name of names) {
      const got = cellOf(table, name, i);
      if (name.startsWith('body_')) {
        const body = rec['body'] as Record<string, unknown> | undefined;
        const member = body?.[name.slice('body_'.length)];
        if (name === 'body_value')
          assert.deepEqual(got === null ? undefined : JSON.parse(got as string), member, `row ${i} ${name}`);
        else assert.equal(got, member ?? null, `row ${i} ${name}`);
        continue;
      }
      const want = rec[name];
      if (U64_FIELDS.includes(name)) {
        const exact = want === undefined ? null : BigInt(want as string);
        // Times are Timestamp(ns) (int64 bits); template ids are UInt64.
        assert.equal(got === null ? null : BigInt.asUintN(64, got as bigint), exact, `row ${i} ${name}`);
      } else if (JSON_FIELDS.includes(name)) assert.deepEqual(JSON.parse(got as string), want, `row ${i} ${name}`);
      else assert.equal(got, want ?? null, `row ${i} ${name}`);
    }
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function assertSameHeader(json: any, table: Table, kind: 'records' | 'aggregate'): void {
  const meta = table.schema.metadata;
  assert.equal(meta.get(ARROW_METADATA.kind), kind);
  assert.equal(meta.get(ARROW_METADATA.rows), String(json.rows));
  assert.deepEqual(JSON.parse(meta.get(ARROW_METADATA.stats) ?? 'null'), json.stats);
}

describe('Arrow answers equal the JSON answers', () => {
  test('every record, in order, member by member: NULLs, multi-byte UTF-8, empty strings, u64 ids ≥ 2^63, bodies', async () => {
    const text = `true | ${R} | limit 1000`;
    const json = await jsonAnswer(text);
    const table = await arrowAnswer(text);
    assert.equal(json.records.length, 403);
    assertSameRecords(json, table);
    assertSameHeader(json, table, 'records');
    // The fixture's special rows are really there, and really compared.
    const ids = json.records.map((r: { template_id: string }) => BigInt(r.template_id));
    for (const id of [TOP_U64, HIGH_U64, 2n ** 63n]) assert.ok(ids.includes(id), `template ${id}`);
    const lines = json.records.map((r: { body?: { line?: string } }) => r.body?.line);
    assert.ok(lines.includes('') && lines.includes('grüße 日本語 🎉 ok'));
    assert.ok(table.getChild('observed_time_unix_nano')!.nullCount > 0);
    assert.ok(table.getChild('body_kind')!.nullCount > 0);
    assert.equal(table.schema.fields.find((f) => f.name === 'template_id')?.type.toString(), 'Uint64');
    assert.equal(
      table.schema.fields.find((f) => f.name === 'time_unix_nano')?.type.toString(),
      'Timestamp<NANOSECOND, UTC>',
    );
  });

  test('sort and project: the same rows in the same order, only the projected columns', async () => {
    const text = `contains(body, "a") | ${R} | sort ts desc | project ts, trace_id, body, template_id | limit 40`;
    const json = await jsonAnswer(text);
    const table = await arrowAnswer(text);
    assert.deepEqual(
      table.schema.fields.map((f) => f.name),
      [
        'time_unix_nano',
        'trace_id',
        'template_id',
        'template_version',
        'body_kind',
        'body_line',
        'body_reconstruction',
        'body_value',
      ],
    );
    assertSameRecords(json, table);
    assertSameHeader(json, table, 'records');
  });

  test('no match: an empty table with the whole schema, rows 0 in the metadata', async () => {
    const text = `contains(body, "no such needle") | ${R}`;
    const json = await jsonAnswer(text);
    const table = await arrowAnswer(text);
    assert.equal(table.numRows, 0);
    assert.equal(table.schema.fields.length, 22);
    assertSameHeader(json, table, 'records');
  });

  for (const text of [
    `true | ${R} | count by service`,
    `true | ${R} | count by template_id, severity`,
    `true | ${R} | avg(attr.cost) by service`,
    `true | ${R} | sum(attr.http.method)`,
    `true | ${R} | count by service | sort count desc`,
  ]) {
    test(`aggregate rows equal the JSON aggregate: ${text.split('| ').slice(2).join('| ')}`, async () => {
      const json = await jsonAnswer(text);
      const table = await arrowAnswer(text);
      assertSameHeader(json, table, 'aggregate');
      assert.ok(json.aggregate.length > 0);
      assert.equal(table.numRows, json.aggregate.length);
      json.aggregate.forEach((g: { key: string[]; count: number; value?: number | null }, i: number) => {
        g.key.forEach((k, t) => assert.equal(cellOf(table, `key_${t}`, i), k, `group ${i} key ${t}`));
        assert.equal(cellOf(table, 'count', i), BigInt(g.count));
        if ('value' in g) assert.equal(cellOf(table, 'value', i), g.value);
        else assert.equal(table.getChild('value'), null);
      });
    });
  }
});

describe('Arrow answers are governed like JSON ones', () => {
  const text = `true | ${R} | limit 1000`;

  test('the stream is counted against max_result_bytes at its own size: one byte under it is query_result_limit', async () => {
    const size = okBody(await answer(text, 'arrow')).byteLength;
    const jsonSize = okBody(await answer(text, 'json')).byteLength;
    assert.ok(size < jsonSize, `arrow ${size} < json ${jsonSize}`);
    const exact = await answer(text, 'arrow', { maxResultBytes: size });
    assert.equal(okBody(exact).byteLength, size, 'a ceiling of exactly its size serves it (though the JSON is larger)');
    const under = await answer(text, 'arrow', { maxResultBytes: size - 1 });
    assert.equal(under.outcome.status, 'error');
    assert.deepEqual(under.outcome.status === 'error' ? under.outcome.error : null, {
      kind: 'query_result_limit',
      limitBytes: size - 1,
    });
  });

  test('observe mode serves a stream past max_result_bytes and reports the crossing with its size', async () => {
    const size = okBody(await answer(text, 'arrow')).byteLength;
    const observed = await answer(text, 'arrow', { maxResultBytes: size - 1, observe: true });
    assert.equal(okBody(observed).byteLength, size);
    assert.deepEqual(observed.outcome.status === 'ok' ? observed.outcome.crossed : null, [
      { limit: 'max_result_bytes', value: size, ceiling: size - 1 },
    ]);
  });

  test('the stream stays reserved on the query, at exactly its size, until it is released', async () => {
    const a = await answer(text, 'arrow');
    assert.equal(a.heldAfter, okBody(a).byteLength);
  });

  test('the value positions of held records are reserved before the stream is counted and built', async () => {
    // Every grow in order: the positions (two int32 per row and column) must be reserved between the last record
    // the collector holds and the body, so the stream is never built on unreserved memory.
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    const inner = pool.createQuery('arrow-positions');
    const grows: number[] = [];
    const reservation: QueryReservation = {
      get queryId() {
        return inner.queryId;
      },
      get held() {
        return inner.held;
      },
      get lastRefusal() {
        return inner.lastRefusal;
      },
      get released() {
        return inner.released;
      },
      tryGrow: (bytes) => {
        grows.push(bytes);
        return inner.tryGrow(bytes);
      },
      shrink: (bytes) => inner.shrink(bytes),
      releaseAll: () => inner.releaseAll(),
    };
    const outcome = await executeQuery({
      store,
      tenant: 'acme',
      query: q(`true | ${R} | limit 50`),
      nowNs: NOW,
      defaultWindowSecs: 3600,
      limits: LIMITS,
      reservation,
      format: 'arrow',
    });
    const body = okBody({ outcome, heldAfter: 0 });
    if (outcome.status === 'ok') outcome.budget.release();
    assert.equal(tableFromIPC(body).numRows, 50);
    assert.equal(grows.at(-1), body.byteLength, 'the body is the last grow');
    assert.equal(grows.at(-2), recordSlotBytes(50), 'the value positions are reserved just before it');
  });
});
