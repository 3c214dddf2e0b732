/**
 * The querier answers every query shape exactly like a naive oracle computed outside the query path: the same
 * records are read back from Parquet with the storage reader and filtered/aggregated in plain JS. The corpus
 * goes in through the real receiver; queries go through the real `/v1/query` of the same `sluice serve`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { toHex } from '@sluice/core';
import type { JsonValue } from '@sluice/core';
import { big, field, postQuery } from '../helpers/query-client.js';
import { corpusRecords, exportRecords, utf8CorpusRecords } from '../helpers/query-corpus.js';
import { waitForStoredRows, type StoredRowView } from '../helpers/read-store.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const TENANTS = ['acme', 'acme2', 'beta'];
const PER_TENANT = 900;
/** A tenant whose bodies are empty, absent or multi-byte UTF-8 (utf8CorpusRecords), for body_bytes. */
const UTF8_TENANT = 'utf8';
const RANGE = 'range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z)';

type Row = StoredRowView;
const sev = (r: Row): number => r.record.severityNumber;
const bodyText = (r: Row): string => (r.record.body?.kind === 'string' ? r.record.body.value : '');
const service = (r: Row): string | undefined => {
  const kv = r.record.resource.attributes.find((a) => a.key === 'service.name');
  return kv?.value.kind === 'string' ? kv.value.value : undefined;
};
const attrValue = (r: Row, key: string): unknown => {
  const kv = r.record.attributes.find((a) => a.key === key);
  if (kv === undefined) return undefined;
  const v = kv.value;
  return v.kind === 'string' || v.kind === 'int' || v.kind === 'double' || v.kind === 'bool' ? v.value : undefined;
};

function recordTimes(answer: JsonValue): bigint[] {
  const records = field(answer, 'records') as readonly JsonValue[];
  return records.map((r) => big(field(r, 'time_unix_nano')));
}

function aggregate(answer: JsonValue): Map<string, JsonValue> {
  const groups = (field(answer, 'aggregate') ?? []) as readonly JsonValue[];
  const out = new Map<string, JsonValue>();
  for (const g of groups) out.set(JSON.stringify((field(g, 'key') as readonly JsonValue[]).map(String)), g);
  return out;
}

function countBy(rows: readonly Row[], key: (r: Row) => string[] | null): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) {
    const k = key(r);
    if (k === null) continue;
    const s = JSON.stringify(k);
    m.set(s, (m.get(s) ?? 0) + 1);
  }
  return m;
}

/** `sum|min|max|avg` of the inputs, as the oracle computes it. */
function naiveAggregate(fn: 'sum' | 'min' | 'max' | 'avg', values: readonly number[]): number {
  const sum = values.reduce((x, y) => x + y, 0);
  return fn === 'sum'
    ? sum
    : fn === 'min'
      ? Math.min(...values)
      : fn === 'max'
        ? Math.max(...values)
        : sum / values.length;
}

function bucketStart(ns: bigint, widthNs: bigint): string {
  const start = (ns / widthNs) * widthNs;
  return new Date(Number(start / 1_000_000n)).toISOString().replace('.000Z', 'Z');
}

describe('query oracle: /v1/query agrees with a naive evaluation of the same stored records', () => {
  let server: SluiceProcess;
  let url: string;
  const rowsOf = new Map<string, Row[]>();
  const dir = tempDir('oracle');

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), flushAgeSecs: 1, querier: true }),
      { dir },
    );
    await server.waitReady();
    url = server.queryUrl!;
    for (const [i, tenant] of TENANTS.entries())
      await exportRecords(server.otlpHttpUrl, tenant, corpusRecords(i, PER_TENANT));
    await exportRecords(server.otlpHttpUrl, UTF8_TENANT, utf8CorpusRecords(TENANTS.length, PER_TENANT));
    // Wait for the sink to publish everything (age flush), reading storage outside the query path.
    const total = (TENANTS.length + 1) * PER_TENANT;
    const all = await waitForStoredRows({ backend: 'local', root: join(dir, 'data') }, total);
    assert.equal(all.length, total);
    for (const t of [...TENANTS, UTF8_TENANT])
      rowsOf.set(
        t,
        all.filter((r) => r.tenantId === t),
      );
  });
  after(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  const filterCases: [string, (r: Row) => boolean][] = [
    ['severity >= warn', (r) => sev(r) >= 13 || sev(r) === 0],
    ['severity == error', (r) => sev(r) >= 17 && sev(r) <= 20],
    ['severity < info', (r) => sev(r) < 9 && sev(r) !== 0],
    ['service == "checkout"', (r) => service(r) === 'checkout'],
    ['service != "checkout" and severity >= info', (r) => service(r) !== 'checkout' && (sev(r) >= 9 || sev(r) === 0)],
    ['attr["http.method"] == "POST"', (r) => attrValue(r, 'http.method') === 'POST'],
    ['resource["deployment.environment"] == "dev"', (r) => service(r) === 'search'],
    ['contains(body, "timed out")', (r) => bodyText(r).includes('timed out')],
    ['starts_with(body, "GET /api")', (r) => bodyText(r).startsWith('GET /api')],
    ['ends_with(body, "EUR")', (r) => bodyText(r).endsWith('EUR')],
    ['matches(body, "db-[0-2] timed")', (r) => /db-[0-2] timed/.test(bodyText(r))],
    ['body =~ "^user (alice|bob) "', (r) => /^user (alice|bob) /.test(bodyText(r))],
    [
      'not (severity < warn) or contains(body, "cache miss")',
      (r) => !(sev(r) < 13 && sev(r) !== 0) || bodyText(r).includes('cache miss'),
    ],
    ['event_name == "audit.tick"', (r) => r.record.eventName === 'audit.tick'],
  ];

  for (const [predicate, keep] of filterCases) {
    test(`filter: ${predicate}`, async () => {
      for (const tenant of TENANTS) {
        const expected = rowsOf.get(tenant)!.filter(keep);
        const answer = await postQuery(url, tenant, `${predicate} | ${RANGE} | limit 10000`);
        assert.equal(answer.status, 200, answer.text.slice(0, 300));
        assert.equal(big(field(answer.json, 'rows')), BigInt(expected.length), `${tenant}: rows`);
        assert.deepEqual(
          new Set(recordTimes(answer.json)),
          new Set(expected.map((r) => r.record.timeUnixNano)),
          `${tenant}: the same records`,
        );
      }
    });
  }

  test('trace_id equality finds exactly one record', async () => {
    const target = rowsOf.get('beta')![123]!;
    const answer = await postQuery(url, 'beta', `trace_id == "${toHex(target.record.traceId)}" | ${RANGE}`);
    assert.deepEqual(recordTimes(answer.json), [target.record.timeUnixNano]);
  });

  test('a record renders every LogRow field from what was stored', async () => {
    const target = rowsOf.get('acme')![42]!;
    const answer = await postQuery(url, 'acme', `trace_id == "${toHex(target.record.traceId)}" | ${RANGE}`);
    const rec = (field(answer.json, 'records') as readonly JsonValue[])[0]!;
    assert.equal(big(field(rec, 'time_unix_nano')), target.record.timeUnixNano);
    assert.equal(big(field(rec, 'observed_time_unix_nano')), target.record.observedTimeUnixNano);
    assert.equal(Number(field(rec, 'severity_number')), target.record.severityNumber);
    assert.equal(field(rec, 'trace_id'), toHex(target.record.traceId));
    assert.equal(big(field(rec, 'template_id')), target.mined.templateId);
    assert.equal(field(field(rec, 'body'), 'line'), bodyText(target));
    const attrs = field(rec, 'attributes') as readonly JsonValue[];
    assert.deepEqual(
      attrs.map((a) => field(a, 'key')),
      target.record.attributes.map((a) => a.key),
    );
  });

  test('limit: records are clamped, `rows` stays the full count', async () => {
    const expected = rowsOf.get('acme')!.filter((r) => sev(r) >= 9 || sev(r) === 0);
    const answer = await postQuery(url, 'acme', `severity >= info | ${RANGE} | limit 7`);
    assert.equal(big(field(answer.json, 'rows')), BigInt(expected.length));
    const times = recordTimes(answer.json);
    assert.equal(times.length, 7);
    const all = new Set(expected.map((r) => r.record.timeUnixNano));
    for (const t of times) assert.ok(all.has(t));
  });

  test('sort ts desc | limit 5 returns the five latest matches, newest first', async () => {
    const expected = rowsOf
      .get('beta')!
      .filter((r) => service(r) === 'payments')
      .map((r) => r.record.timeUnixNano)
      .sort((a, b) => (a < b ? 1 : -1))
      .slice(0, 5);
    const answer = await postQuery(url, 'beta', `service == "payments" | ${RANGE} | sort ts desc | limit 5`);
    assert.deepEqual(recordTimes(answer.json), expected);
  });

  test('project keeps only the listed fields', async () => {
    const answer = await postQuery(url, 'acme', `severity >= error | ${RANGE} | project ts, body | limit 3`);
    assert.equal(answer.status, 200, answer.text);
    for (const rec of field(answer.json, 'records') as readonly JsonValue[]) {
      const keys = Object.keys(rec as object).sort();
      assert.deepEqual(keys, ['body', 'time_unix_nano']);
    }
  });

  test('count, count by service, count by template_id', async () => {
    for (const tenant of TENANTS) {
      const rows = rowsOf.get(tenant)!;
      const total = await postQuery(url, tenant, `true | ${RANGE} | count`);
      assert.equal(big(field([...aggregate(total.json).values()][0], 'count')), BigInt(rows.length));
      const bySvc = aggregate((await postQuery(url, tenant, `true | ${RANGE} | count by service`)).json);
      const expSvc = countBy(rows, (r) => [service(r) ?? '']);
      assert.equal(bySvc.size, expSvc.size);
      for (const [k, n] of expSvc) assert.equal(big(field(bySvc.get(k), 'count')), BigInt(n), `${tenant} ${k}`);
      const byTpl = aggregate((await postQuery(url, tenant, `true | ${RANGE} | count by template_id`)).json);
      const expTpl = countBy(rows, (r) => [r.mined.templateId.toString()]);
      assert.equal(byTpl.size, expTpl.size);
      for (const [k, n] of expTpl)
        assert.equal(big(field(byTpl.get(k), 'count')), BigInt(n), `${tenant} template ${k}`);
    }
  });

  test('count by param(n) under a single pinned template', async () => {
    const rows = rowsOf.get('acme')!;
    const sample = rows.find((r) => bodyText(r).startsWith('connection to db-'))!;
    const id = sample.mined.templateId;
    const pinned = rows.filter((r) => r.mined.templateId === id);
    const expected = countBy(pinned, (r) => (r.mined.params[0] === undefined ? null : [r.mined.params[0].value]));
    const got = aggregate((await postQuery(url, 'acme', `template_id == ${id} | ${RANGE} | count by param(0)`)).json);
    assert.equal(got.size, expected.size);
    for (const [k, n] of expected) assert.equal(big(field(got.get(k), 'count')), BigInt(n), k);
  });

  test('count by service, bucket(1h) and bucket(5m)', async () => {
    const rows = rowsOf.get('beta')!;
    for (const [w, ns] of [
      ['1h', 3_600_000_000_000n],
      ['5m', 300_000_000_000n],
    ] as const) {
      const expected = countBy(rows, (r) => [service(r) ?? '', bucketStart(r.record.timeUnixNano, ns)]);
      const got = aggregate((await postQuery(url, 'beta', `true | ${RANGE} | count by service, bucket(${w})`)).json);
      assert.equal(got.size, expected.size, `bucket(${w}) group count`);
      for (const [k, n] of expected) assert.equal(big(field(got.get(k), 'count')), BigInt(n), `bucket(${w}) ${k}`);
    }
  });

  test('sum, min, max, avg of a numeric attribute by service', async () => {
    const rows = rowsOf.get('acme2')!;
    for (const fn of ['sum', 'min', 'max', 'avg'] as const) {
      const got = aggregate(
        (await postQuery(url, 'acme2', `true | ${RANGE} | ${fn}(attr.latency_ms) by service`)).json,
      );
      for (const svc of ['checkout', 'payments', 'search']) {
        const values = rows.filter((r) => service(r) === svc).map((r) => Number(attrValue(r, 'latency_ms')));
        const expected = naiveAggregate(fn, values);
        const value = Number(field(got.get(JSON.stringify([svc])), 'value'));
        assert.ok(
          Math.abs(value - expected) < 1e-9 * Math.max(1, Math.abs(expected)),
          `${fn} ${svc}: ${value} vs ${expected}`,
        );
      }
    }
  });

  test('sum/min/max/avg(body_bytes) by service and by severity, bucket(5m) count UTF-8 bytes; empty and absent bodies add 0', async () => {
    const rows = rowsOf.get(UTF8_TENANT)!;
    // The oracle's size: the stored body's UTF-8 bytes (a string body's text; none here is structured).
    const size = (r: Row): number => Buffer.byteLength(bodyText(r), 'utf8');
    assert.ok(
      rows.some((r) => r.record.body === null) && rows.some((r) => bodyText(r) === '' && r.record.body !== null),
    );
    assert.ok(
      rows.some((r) => size(r) > bodyText(r).length),
      'multi-byte bodies',
    );
    for (const fn of ['sum', 'min', 'max', 'avg'] as const) {
      const got = aggregate((await postQuery(url, UTF8_TENANT, `true | ${RANGE} | ${fn}(body_bytes) by service`)).json);
      for (const svc of ['checkout', 'payments', 'search']) {
        const sizes = rows.filter((r) => service(r) === svc).map(size);
        const expected = naiveAggregate(fn, sizes);
        assert.equal(Number(field(got.get(JSON.stringify([svc])), 'value')), expected, `${fn} ${svc}`);
      }
    }
    const bucketed = aggregate(
      (await postQuery(url, UTF8_TENANT, `true | ${RANGE} | sum(body_bytes) by severity, bucket(5m)`)).json,
    );
    const expected = new Map<string, { count: number; bytes: number }>();
    for (const r of rows) {
      const k = JSON.stringify([String(sev(r)), bucketStart(r.record.timeUnixNano, 300_000_000_000n)]);
      const g = expected.get(k) ?? { count: 0, bytes: 0 };
      g.count++;
      g.bytes += size(r);
      expected.set(k, g);
    }
    assert.equal(bucketed.size, expected.size);
    for (const [k, g] of expected) {
      assert.equal(Number(field(bucketed.get(k), 'count')), g.count, k);
      assert.equal(Number(field(bucketed.get(k), 'value')), g.bytes, k);
    }
  });

  test('body_bytes anywhere but sum/min/max/avg is a 400 invalid_query saying it can only be aggregated', async () => {
    for (const q of [
      'body_bytes > 10',
      `true | ${RANGE} | count by body_bytes`,
      `true | ${RANGE} | project body_bytes`,
    ]) {
      const r = await postQuery(url, UTF8_TENANT, q);
      assert.equal(r.status, 400, q);
      assert.equal(field(field(r.json, 'error'), 'kind'), 'invalid_query');
      assert.match(String(field(field(r.json, 'error'), 'message')), /body_bytes .* can only be aggregated/);
    }
  });

  test('the default window is the last default_window_secs: the 2026-03 corpus is outside it', async () => {
    const answer = await postQuery(url, 'acme', 'true | count');
    const groups = field(answer.json, 'aggregate') as readonly JsonValue[];
    assert.equal(big(field(groups[0], 'count')), 0n);
  });

  test('the structured JSON form answers the same as the text form', async () => {
    const text = await postQuery(
      url,
      'acme',
      `service == "checkout" and severity >= warn | ${RANGE} | count by service`,
    );
    const structured = await postQuery(url, 'acme', {
      predicate: {
        and: [
          { field: 'service', op: '==', value: 'checkout' },
          { field: 'severity', op: '>=', value: 'warn' },
        ],
      },
      stages: [{ range: { from: '2026-03-01T10:00:00Z', to: '2026-03-01T13:00:00Z' } }, { count: { by: ['service'] } }],
    });
    assert.equal(structured.status, 200, structured.text);
    assert.deepEqual(field(structured.json, 'aggregate'), field(text.json, 'aggregate'));
  });

  test("tenant isolation: a tenant never sees another tenant's rows, including one whose name is a prefix", async () => {
    for (const tenant of ['acme', 'acme2', 'beta', 'acm', 'acme%32', '..', 'acme%2F..%2Fbeta']) {
      const answer = await postQuery(url, tenant, `true | ${RANGE} | limit 10000`);
      assert.equal(answer.status, 200, answer.text);
      const own = new Set((rowsOf.get(tenant) ?? []).map((r) => r.record.timeUnixNano));
      const times = recordTimes(answer.json);
      assert.equal(times.length, own.size, `${tenant} sees exactly its own ${own.size} rows`);
      for (const t of times) assert.ok(own.has(t));
    }
  });

  test('bad requests get the error envelope with a kind: missing tenant, invalid tenant, invalid query', async () => {
    const q = await postQuery(url, 'acme', 'severity >= | count');
    assert.equal(q.status, 400);
    assert.equal(field(field(q.json, 'error'), 'kind'), 'invalid_query');
    const bad = await postQuery(url, 'a:b', 'true');
    assert.equal(bad.status, 400);
    assert.equal(field(field(bad.json, 'error'), 'kind'), 'invalid_tenant');
  });
});
