/**
 * @module arrow-answers.test
 * Arrow on `/v1/query` (docs/design/query-engine.md, "Arrow results") through the app, the query service and real
 * query workers over a real local store: `Accept: application/vnd.apache.arrow.stream` answers an Arrow IPC stream
 * that apache-arrow reads as the JSON answer's records or aggregation rows; JSON stays the answer (byte for byte)
 * to every other Accept; errors stay JSON with their usual status and kind when Arrow was asked; a drift statement
 * is answered as JSON; the body's reservation is given back once it has been sent.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { tableFromIPC } from 'apache-arrow';
import { ARROW_METADATA, ARROW_STREAM } from '@sluice/engine';
import { wantsArrow } from './arrow-accept.js';
import { createStoreFixture, harness, type Harness } from './testing/query-harness.js';

const ALL = 'range(2026-06-01T00:00:00Z, 2026-06-01T01:00:00Z)';
let fixture: { readonly dir: string; remove(): Promise<void> };
let h: Harness;

before(async () => {
  fixture = await createStoreFixture(['acme'], 300, (i) => (i % 5 === 0 ? '' : `ligne ${i % 7} grüße 日本 🎉`));
  // No footer cache: bytes_read is then the same on every run, and nothing stays on the pool between queries.
  h = harness({ dir: fixture.dir, maxConcurrent: 2, queryTimeoutMs: 0, footerCacheBytes: 0 });
});
after(async () => {
  await h.close();
  await fixture.remove();
});

async function post(
  text: string,
  accept: string | undefined,
): Promise<{ status: number; type: string | null; bytes: Uint8Array }> {
  const res = await h.app.request('/v1/query', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'X-Sluice-Tenant': 'acme',
      ...(accept !== undefined ? { accept } : {}),
    },
    body: JSON.stringify({ query: text }),
  });
  return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
}

const decode = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

describe('content negotiation', () => {
  test('wantsArrow: Arrow named and preferred at least as much as JSON; wildcards and JSON never select it', () => {
    for (const a of [
      ARROW_STREAM,
      `${ARROW_STREAM};q=0.9, */*;q=0.1`,
      `application/json;q=0.5, ${ARROW_STREAM}`,
      `${ARROW_STREAM}, application/json`,
      `APPLICATION/VND.APACHE.ARROW.STREAM`,
    ])
      assert.equal(wantsArrow(a), true, a);
    for (const a of [
      undefined,
      '*/*',
      'application/json',
      'application/*',
      `${ARROW_STREAM};q=0`,
      `${ARROW_STREAM};q=0.5, application/json`,
      `${ARROW_STREAM};q=0.5, application/*`,
      'application/vnd.apache.arrow.file',
    ])
      assert.equal(wantsArrow(a), false, String(a));
  });

  test('no Accept, */*, application/json and an Accept we do not serve all get the same JSON bytes', async () => {
    const text = `true | ${ALL} | limit 20`;
    const plain = await post(text, undefined);
    assert.equal(plain.status, 200);
    assert.equal(plain.type, 'application/json');
    for (const accept of ['*/*', 'application/json', 'text/csv', `${ARROW_STREAM};q=0.1, application/json`]) {
      const r = await post(text, accept);
      assert.equal(r.status, 200, accept);
      assert.equal(r.type, 'application/json', accept);
      assert.equal(decode(r.bytes), decode(plain.bytes), accept);
    }
  });
});

describe('Arrow answers over HTTP', () => {
  test('records: the JSON answer row for row, rows and stats in the schema metadata, the body released once sent', async () => {
    const text = `true | ${ALL} | limit 150`;
    const json = JSON.parse(
      decode((await post(text, undefined)).bytes).replace(/"(\w+_nano|template_id)":(\d+)/g, '"$1":"$2"'),
    );
    const r = await post(text, ARROW_STREAM);
    assert.equal(r.status, 200);
    assert.equal(r.type, ARROW_STREAM);
    const table = tableFromIPC(r.bytes);
    assert.equal(table.numRows, 150);
    assert.equal(table.schema.metadata.get(ARROW_METADATA.rows), String(json.rows));
    assert.equal(table.schema.metadata.get(ARROW_METADATA.kind), 'records');
    assert.deepEqual(JSON.parse(table.schema.metadata.get(ARROW_METADATA.stats) ?? 'null'), json.stats);
    const times = table.getChild('time_unix_nano')!.data[0]!.values as BigInt64Array;
    json.records.forEach((rec: { time_unix_nano: string; body: { line: string } }, i: number) => {
      assert.equal(times[i], BigInt(rec.time_unix_nano), `row ${i} time`);
      assert.equal(table.getChild('body_line')!.get(i), rec.body.line, `row ${i} line`);
    });
    assert.ok(json.records.some((rec: { body: { line: string } }) => rec.body.line === ''));
    assert.equal(h.pool.reserved(), 0, 'the body was released once sent');
  });

  test('aggregate rows: key columns, count, value', async () => {
    const text = `true | ${ALL} | count by severity`;
    const json = JSON.parse(decode((await post(text, undefined)).bytes));
    const table = tableFromIPC((await post(text, ARROW_STREAM)).bytes);
    assert.equal(table.schema.metadata.get(ARROW_METADATA.kind), 'aggregate');
    assert.deepEqual(
      table.toArray().map((row) => ({ key: [row.key_0], count: Number(row.count) })),
      json.aggregate,
    );
  });

  test('a drift statement asked as Arrow is answered as JSON', async () => {
    const r = await post('drift from -1h to now', ARROW_STREAM);
    assert.equal(r.status, 200);
    assert.equal(r.type, 'application/json');
    assert.ok(Array.isArray(JSON.parse(decode(r.bytes)).rows));
  });

  test('errors stay JSON with their status and kind when Arrow was asked: invalid_query 400, query_result_limit 422', async () => {
    const bad = await post('true | limit', ARROW_STREAM);
    assert.equal(bad.status, 400);
    assert.equal(bad.type, 'application/json');
    assert.equal(JSON.parse(decode(bad.bytes)).error.kind, 'invalid_query');
    const small = harness({
      dir: fixture.dir,
      maxConcurrent: 1,
      queryTimeoutMs: 0,
      footerCacheBytes: 0,
      limits: { maxResultBytes: 4096 },
    });
    try {
      const res = await small.app.request('/v1/query', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': 'acme', accept: ARROW_STREAM },
        body: JSON.stringify({ query: `true | ${ALL} | limit 300` }),
      });
      assert.equal(res.status, 422);
      assert.equal(res.headers.get('content-type'), 'application/json');
      const error = (await res.json()) as { error: { kind: string; limit: string } };
      assert.equal(error.error.kind, 'query_result_limit');
      assert.equal(error.error.limit, 'querier.limits.max_result_bytes');
      assert.equal(small.pool.reserved(), 0);
    } finally {
      await small.close();
    }
  });
});
