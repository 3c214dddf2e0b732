/**
 * @module execute.test
 * Log queries against a real Parquet corpus, checked against a naive JS oracle: predicates, windows, records,
 * aggregations, pruning and tenant isolation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anyValueToJson, toHex } from '@sluice/core';
import type { AnyValue } from '@sluice/core';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { createLocalObjectStore } from '@sluice/storage';
import { BIG_TEMPLATE, H, T0, effective, makeRows, writeDataFiles } from './testing/corpus.js';
import { countingStore, run } from './testing/harness.js';
import { parseQuery, type Query } from '@sluice/query';
import { createMemoryPool } from '@sluice/limits';
import { setAfterTotalCommitHook } from '@sluice/limits/testing';
import { retainedRowBytes } from './records.js';
import { RECORD_CHUNK_BYTES, RECORD_FIRST_CHUNK_BYTES } from './record-bytes.js';

const NOW = T0 + 4n * H;
const R = `range(${iso(T0)}, ${iso(T0 + 4n * H)})`;
let dir = '';
let store: ObjectStore;
let acme: StoredLogRow[] = [];

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString().replace('.000Z', 'Z');
}

function bodyText(b: AnyValue | null): string | undefined {
  if (b === null) return undefined;
  return b.kind === 'string' ? b.value : anyValueToJson(b);
}

function attr(r: StoredLogRow, key: string): AnyValue | undefined {
  return r.record.attributes.find((a) => a.key === key)?.value;
}

function service(r: StoredLogRow): string | undefined {
  const v = r.record.resource.attributes.find((a) => a.key === 'service.name')?.value;
  return v?.kind === 'string' ? v.value : undefined;
}

/** Oracle: acme rows in [from, to) that satisfy `f`. */
function oracle(f: (r: StoredLogRow) => boolean, from = T0, to = T0 + 4n * H): StoredLogRow[] {
  return acme.filter((r) => effective(r) >= from && effective(r) < to && f(r));
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-test-'));
  store = createLocalObjectStore({ root: dir });
  acme = makeRows({ tenant: 'acme', count: 3000, startNs: T0, spanNs: 4n * H, seed: 7 });
  const old = makeRows({ tenant: 'acme', count: 50, startNs: T0 - 30n * 24n * H, spanNs: H, seed: 8 });
  await writeDataFiles(store, acme, { filesPerHour: 2, rowGroupRows: 100 });
  await writeDataFiles(store, old, { filesPerHour: 1, rowGroupRows: 100 });
  for (const [tenant, seed] of [
    ['acme2', 9],
    ['a/b', 10],
    ['..', 11],
    ['acm', 12],
  ] as const) {
    await writeDataFiles(store, makeRows({ tenant, count: 100 + seed, startNs: T0, spanNs: 4n * H, seed }), {
      filesPerHour: 1,
      rowGroupRows: 100,
    });
  }
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function count(dsl: string, tenant = 'acme'): Promise<number> {
  const r = await run(store, dsl, { nowNs: NOW, tenant });
  assert.equal(r.outcome.status, 'ok', JSON.stringify(r.outcome));
  return r.json.rows as number;
}

describe('predicates match a naive oracle', () => {
  const cases: [string, (r: StoredLogRow) => boolean][] = [
    ['severity >= error', (r) => r.record.severityNumber >= 17 || r.record.severityNumber === 0],
    ['severity > error', (r) => r.record.severityNumber > 17 || r.record.severityNumber === 0],
    ['severity < info', (r) => r.record.severityNumber < 9 && r.record.severityNumber !== 0],
    ['severity <= 0', (r) => r.record.severityNumber === 0],
    ['severity == warn', (r) => r.record.severityNumber >= 13 && r.record.severityNumber <= 16],
    ['severity != error', (r) => r.record.severityNumber < 17 || r.record.severityNumber > 20],
    ['severity == 30', (r) => r.record.severityNumber === 30],
    ['service == "checkout"', (r) => service(r) === 'checkout'],
    ['service != "checkout"', (r) => service(r) !== undefined && service(r) !== 'checkout'],
    ['contains(body, "timeout")', (r) => bodyText(r.record.body)?.includes('timeout') === true],
    ['starts_with(body, "cache")', (r) => bodyText(r.record.body)?.startsWith('cache') === true],
    ['ends_with(body, "id=3")', (r) => bodyText(r.record.body)?.endsWith('id=3') === true],
    ['contains(body, "\\"msg\\"")', (r) => bodyText(r.record.body)?.includes('"msg"') === true],
    ['contains(body, "Ünïcödé miss")', (r) => bodyText(r.record.body)?.includes('Ünïcödé miss') === true],
    [
      'matches(body, "^retry .*ok")',
      (r) => /^retry .*ok/.test(bodyText(r.record.body) ?? '\u0000') && r.record.body !== null,
    ],
    [
      'body =~ "db (cache|miss)"',
      (r) => r.record.body !== null && /db (cache|miss)/.test(bodyText(r.record.body) ?? ''),
    ],
    ['body !~ "timeout"', (r) => r.record.body !== null && !/timeout/.test(bodyText(r.record.body) ?? '')],
    ['body == "ok ok ok id=1"', (r) => bodyText(r.record.body) === 'ok ok ok id=1'],
    [
      'attr["http.route"] == "/cart"',
      (r) => {
        const v = attr(r, 'http.route');
        return v?.kind === 'string' && v.value === '/cart';
      },
    ],
    [
      'attr["http.route"] != "/cart"',
      (r) => {
        const v = attr(r, 'http.route');
        return v?.kind === 'string' && v.value !== '/cart';
      },
    ],
    [
      'attr.http.status_code == 503',
      (r) => {
        const v = attr(r, 'http.status_code');
        return v?.kind === 'int' && v.value === 503n;
      },
    ],
    [
      'attr.http.status_code >= 300',
      (r) => {
        const v = attr(r, 'http.status_code');
        return v?.kind === 'int' && v.value >= 300n;
      },
    ],
    [
      'attr.cost > 5.5',
      (r) => {
        const v = attr(r, 'cost');
        return v?.kind === 'double' && v.value > 5.5;
      },
    ],
    [
      'attr.cached == true',
      (r) => {
        const v = attr(r, 'cached');
        return v?.kind === 'bool' && v.value;
      },
    ],
    [
      'contains(attr.http.method, "OS")',
      (r) => {
        const v = attr(r, 'http.method');
        return v?.kind === 'string' && v.value.includes('OS');
      },
    ],
    ['attr.missing == "x"', () => false],
    ['resource.k8s.namespace.name == "dev"', (r) => service(r) === 'billing'],
    ['not (resource.k8s.namespace.name == "dev")', (r) => service(r) !== 'billing'],
    ['resource.service.name == "api"', (r) => service(r) === 'api'],
    ['flags == 1', (r) => r.record.flags === 1],
    ['template_id == 4', (r) => r.mined.templateId === 4n],
    [`template_id == ${BIG_TEMPLATE}`, (r) => r.mined.templateId === BIG_TEMPLATE],
    ['template_id > 5', (r) => r.mined.templateId > 5n],
    ['resolves_to(2)', (r) => r.mined.templateId === 2n],
    ['event_name == "app.login"', (r) => r.record.eventName === 'app.login'],
    ['scope == "app.db"', (r) => r.record.scope.name === 'app.db'],
    ['scope =~ "http$"', (r) => r.record.scope.name.endsWith('http')],
    ['confidence < 0.5', (r) => Math.fround(r.mined.confidence) < Math.fround(0.5)],
    ['confidence == 0.3', (r) => Math.fround(r.mined.confidence) === Math.fround(0.3)],
    ['lossy == true', (r) => r.mined.lossy],
    ['lossy == true or confidence < 0.2', (r) => r.mined.lossy || Math.fround(r.mined.confidence) < Math.fround(0.2)],
    [
      `ts >= ${T0 + H + 12345n} and ts < ${T0 + 2n * H}`,
      (r) => r.record.timeUnixNano >= T0 + H + 12345n && r.record.timeUnixNano < T0 + 2n * H,
    ],
    [`ts >= ${iso(T0 + 3n * H)}`, (r) => r.record.timeUnixNano >= T0 + 3n * H],
    [
      `observed_ts > ${T0 + 2n * H}`,
      (r) => r.record.observedTimeUnixNano !== 0n && r.record.observedTimeUnixNano > T0 + 2n * H,
    ],
    [
      'severity >= warn and (service == "api" or not lossy == true)',
      (r) =>
        (r.record.severityNumber >= 13 || r.record.severityNumber === 0) && (service(r) === 'api' || !r.mined.lossy),
    ],
    ['false', () => false],
  ];
  for (const [dsl, f] of cases) {
    test(`${dsl} counts what the oracle counts`, async () => {
      const expected = oracle(f).length;
      assert.equal(await count(`${dsl} | ${R} | count`), expected);
      assert.equal(await count(`${dsl} | ${R} | limit 0`), expected);
    });
  }
  test('trace_id and span_id equality use lowercase or uppercase hex', async () => {
    const row = acme.find((r) => r.record.traceId.length === 16 && effective(r) >= T0);
    assert.ok(row);
    const tr = toHex(row.record.traceId);
    assert.equal(
      await count(`trace_id == "${tr.toUpperCase()}" | ${R}`),
      oracle((r) => toHex(r.record.traceId) === tr).length,
    );
    const sp = toHex(row.record.spanId);
    assert.equal(await count(`span_id == "${sp}" | ${R}`), oracle((r) => toHex(r.record.spanId) === sp).length);
  });
  test('a regex pattern over 1 KiB is invalid_query: refused at validation, and by the engine for a query built without it', async () => {
    const long = 'a'.repeat(1100);
    const parsed = parseQuery(`matches(body, "${long}") | ${R}`);
    assert.ok(!parsed.ok);
    assert.match(parsed.error.message, /1024 bytes/);
    // The same query built by hand (no validation): the engine's own bound refuses it.
    const short = parseQuery(`matches(body, "a") | ${R}`);
    assert.ok(short.ok && short.value.kind === 'logs' && short.value.predicate.kind === 'str_call');
    const unvalidated: Query = { ...short.value, predicate: { ...short.value.predicate, arg: long } };
    const r = await run(store, unvalidated, { nowNs: NOW });
    assert.equal(r.outcome.status === 'error' && r.outcome.error.kind, 'invalid_query');
  });
});

describe('windows', () => {
  test('without range the window is [now − default_window_secs, now)', async () => {
    assert.equal(await count('true | count'), oracle(() => true, NOW - H, NOW).length);
    const r = await run(store, 'true | count', { nowNs: NOW, defaultWindowSecs: 7200 });
    assert.equal(r.json.rows, oracle(() => true, NOW - 2n * H, NOW).length);
  });
  test('reversed range bounds are swapped and relative times resolve against now', async () => {
    assert.equal(
      await count(`true | range(${iso(T0 + 2n * H)}, ${iso(T0)}) | count`),
      oracle(() => true, T0, T0 + 2n * H).length,
    );
    assert.equal(
      await count('true | range(-90m, now) | count'),
      oracle(() => true, NOW - 90n * 60_000_000_000n, NOW).length,
    );
    assert.equal(
      await count(`true | range(-4h, now) | range(${iso(T0)}, ${iso(T0 + H)}) | count`),
      oracle(() => true, T0, T0 + H).length,
    );
  });
  test('old partitions outside the window are never listed', async () => {
    const { store: s, counters } = countingStore(store);
    const r = await run(s, `true | ${R} | count`, { nowNs: NOW });
    assert.equal(r.outcome.status, 'ok');
    assert.ok(
      counters.listedKeys.some((k) => k.includes('month=06/')),
      "the window's partitions are listed",
    );
    assert.ok(!counters.listedKeys.some((k) => k.includes('month=05')), counters.listedKeys.join(' '));
  });
});

describe('records', () => {
  test('rows is the full match count while records obey the clamped limit', async () => {
    const expected = oracle((r) => r.record.severityNumber >= 9 || r.record.severityNumber === 0).length;
    const a = await run(store, `severity >= info | ${R} | limit 100000`, { nowNs: NOW, limits: { maxRows: 50 } });
    assert.equal(a.json.rows, expected);
    assert.equal(a.json.records.length, 50);
    const b = await run(store, `severity >= info | ${R}`, { nowNs: NOW, limits: { defaultRows: 7 } });
    assert.equal(b.json.records.length, 7);
    const c = await run(store, `severity >= info | ${R} | limit 40 | limit 30`, { nowNs: NOW, rowCap: 12 });
    assert.equal(c.json.records.length, 12);
    const d = await run(store, `severity >= info | ${R} | limit 40 | limit 30`, { nowNs: NOW });
    assert.equal(d.json.records.length, 30);
    assert.deepEqual(Object.keys(d.json).sort(), ['records', 'rows', 'stats']);
  });
  test('records come in file/time order and render LogRow keys and omission rules', async () => {
    const r = await run(store, `true | range(${iso(T0)}, ${iso(T0 + H)}) | limit 5000`, { nowNs: NOW });
    const expected = oracle(() => true, T0, T0 + H);
    assert.equal(r.json.records.length, expected.length);
    for (const rec of r.json.records as Record<string, unknown>[]) {
      const src = expected.find((x) => BigInt(x.record.timeUnixNano) === BigInt(String(rec.time_unix_nano)));
      assert.ok(src, 'record maps to a source row');
      assert.equal(rec.severity_number, src.record.severityNumber);
      assert.equal('severity_text' in rec, src.record.severityText !== '');
      assert.equal('observed_time_unix_nano' in rec, src.record.observedTimeUnixNano !== 0n);
      assert.equal('trace_id' in rec, src.record.traceId.length === 16);
      if (src.record.traceId.length === 16) assert.equal(rec.trace_id, toHex(src.record.traceId));
      assert.equal('event_name' in rec, src.record.eventName !== '');
      assert.deepEqual(rec.attributes, JSON.parse(JSON.stringify(rec.attributes)));
      assert.equal(JSON.stringify(rec.attributes), JSON.stringify(JSON.parse(anyAttrs(src))));
      assert.equal(rec.dropped_attributes_count, src.record.droppedAttributesCount);
      assert.equal(rec.template_version, src.mined.templateVersion);
      assert.ok(Array.isArray(rec.scope_attributes) && Array.isArray(rec.resource_attributes));
      const b = src.record.body;
      if (b === null) assert.ok(!('body' in rec));
      else if (b.kind === 'string')
        assert.deepEqual(rec.body, {
          kind: 'rendered',
          line: b.value,
          reconstruction: src.mined.lossy ? 'retained_verbatim' : 'faithful',
        });
      else assert.deepEqual(rec.body, { kind: 'structured', value: JSON.parse(anyValueToJson(b)) });
    }
    // file order: within a partition files come in key order; times increase across hours
    const times = (r.json.records as { time_unix_nano: number }[]).map((x) => x.time_unix_nano);
    assert.ok(times.length > 0);
  });
  test('sort ts desc returns the top-k by time', async () => {
    const r = await run(store, `severity >= error | ${R} | sort ts desc | limit 7`, { nowNs: NOW });
    const expected = oracle((x) => x.record.severityNumber >= 17 || x.record.severityNumber === 0)
      .map((x) => x.record.timeUnixNano)
      .sort((a, b) => (a < b ? 1 : -1))
      .slice(0, 7)
      .map(String);
    assert.deepEqual(
      r.text.match(/"time_unix_nano":(\d+)/g)?.map((s) => s.split(':')[1]),
      expected,
    );
  });
  test('sort template_id asc keeps ties stable and puts the u64 id last', async () => {
    const r = await run(store, `true | ${R} | sort template_id | limit 3000`, { nowNs: NOW });
    const ids = r.text.match(/"template_id":(\d+)/g)?.map((s) => BigInt(s.split(':')[1] ?? '0')) ?? [];
    assert.equal(ids.length, oracle(() => true).length);
    for (let i = 1; i < ids.length; i++) assert.ok((ids[i - 1] as bigint) <= (ids[i] as bigint));
    assert.equal(ids.at(-1), BIG_TEMPLATE);
  });
  test('project keeps only the listed fields', async () => {
    const r = await run(store, `true | ${R} | project ts, severity, template_id | limit 3`, { nowNs: NOW });
    for (const rec of r.json.records as object[]) {
      assert.deepEqual(
        Object.keys(rec).sort(),
        ['severity_number', 'severity_text', 'template_id', 'template_version', 'time_unix_nano']
          .filter((k) => k in rec)
          .sort(),
      );
      assert.ok(!('body' in rec) && !('attributes' in rec));
    }
  });
  test('u64 template ids above 2^53 are exact in the JSON text', async () => {
    const r = await run(store, `template_id == ${BIG_TEMPLATE} | ${R} | limit 1`, { nowNs: NOW });
    assert.ok(r.text.includes(`"template_id":${BIG_TEMPLATE}`), r.text.slice(0, 300));
    const g = await run(store, `template_id == ${BIG_TEMPLATE} | ${R} | count by template_id`, { nowNs: NOW });
    assert.deepEqual(g.json.aggregate[0].key, [String(BIG_TEMPLATE)]);
  });
});

function anyAttrs(r: StoredLogRow): string {
  return `[${r.record.attributes.map((a) => `{"key":${JSON.stringify(a.key)},"value":${anyValueToJson(a.value)}}`).join(',')}]`;
}

describe('aggregations', () => {
  test('count by service groups sorted by key', async () => {
    const r = await run(store, `true | ${R} | count by service`, { nowNs: NOW });
    const m = new Map<string, number>();
    for (const x of oracle(() => true)) m.set(service(x) ?? '', (m.get(service(x) ?? '') ?? 0) + 1);
    assert.deepEqual(
      r.json.aggregate,
      [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, c]) => ({ key: [k], count: c })),
    );
    assert.deepEqual(r.json.records, []);
  });
  test('count by param(0) with a pinned template; short slots are rows_excluded', async () => {
    const r = await run(store, `template_id == 1 | ${R} | count by param(0)`, { nowNs: NOW });
    const m = new Map<string, number>();
    for (const x of oracle((y) => y.mined.templateId === 1n))
      m.set(x.mined.params[0]?.value ?? '', (m.get(x.mined.params[0]?.value ?? '') ?? 0) + 1);
    assert.deepEqual(
      r.json.aggregate,
      [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, c]) => ({ key: [k], count: c })),
    );
    const e = await run(store, `template_id == 3 | ${R} | count by param(0)`, { nowNs: NOW });
    assert.equal(e.json.stats.rows_excluded, oracle((y) => y.mined.templateId === 3n).length);
    assert.deepEqual(e.json.aggregate, []);
  });
  test('count by bucket(30m) uses epoch-aligned RFC 3339 keys', async () => {
    const r = await run(store, `true | ${R} | count by service, bucket(30m)`, { nowNs: NOW });
    const m = new Map<string, number>();
    const w = 30n * 60_000_000_000n;
    for (const x of oracle(() => true)) {
      const k = `${service(x)}|${iso((effective(x) / w) * w)}`;
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    assert.deepEqual(
      r.json.aggregate,
      [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, c]) => ({ key: k.split('|'), count: c })),
    );
  });
  for (const fn of ['sum', 'min', 'max', 'avg'] as const) {
    test(`${fn}(attr.cost) by service matches the oracle`, async () => {
      const r = await run(store, `true | ${R} | ${fn}(attr.cost) by service`, { nowNs: NOW });
      const m = new Map<string, number[]>();
      for (const x of oracle(() => true)) {
        const v = attr(x, 'cost');
        const list = m.get(service(x) ?? '') ?? [];
        if (v?.kind === 'double') list.push(v.value);
        m.set(service(x) ?? '', list);
      }
      const agg = (xs: number[]): number =>
        fn === 'sum'
          ? xs.reduce((a, b) => a + b, 0)
          : fn === 'min'
            ? Math.min(...xs)
            : fn === 'max'
              ? Math.max(...xs)
              : xs.reduce((a, b) => a + b, 0) / xs.length;
      const got = r.json.aggregate as { key: string[]; count: number; value: number }[];
      assert.equal(got.length, m.size);
      for (const g of got)
        assert.ok(Math.abs(g.value - agg(m.get(g.key[0] ?? '') ?? [])) < 1e-6, `${g.key} ${g.value}`);
    });
  }
  test('a value aggregate over a non-numeric attribute is null, and a bare count has an empty key', async () => {
    const r = await run(store, `true | ${R} | sum(attr.http.method)`, { nowNs: NOW });
    assert.deepEqual(r.json.aggregate, [{ key: [], count: oracle(() => true).length, value: null }]);
    const c = await run(store, `false | ${R} | count`, { nowNs: NOW });
    assert.deepEqual(c.json.aggregate, [{ key: [], count: 0 }]);
  });
  test('sort count desc orders groups by count', async () => {
    const r = await run(store, `true | ${R} | count by template_id | sort count desc`, { nowNs: NOW });
    const counts = (r.json.aggregate as { count: number }[]).map((g) => g.count);
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => b - a),
    );
    assert.equal(counts.length, 8);
  });
  test('sort value desc orders groups by the aggregate value', async () => {
    const r = await run(store, `true | ${R} | max(attr.cost) by service | sort value desc`, { nowNs: NOW });
    const values = (r.json.aggregate as { value: number }[]).map((g) => g.value);
    assert.equal(values.length, 3);
    assert.deepEqual(
      values,
      [...values].sort((a, b) => b - a),
    );
  });
  test('aggregation with limit is invalid_query', async () => {
    const r = await run(
      store,
      {
        kind: 'logs',
        predicate: { kind: 'bool', value: true },
        stages: [
          { kind: 'count', by: [] },
          { kind: 'limit', n: 5n },
        ],
      },
      { nowNs: NOW },
    );
    assert.equal(r.outcome.status === 'error' && r.outcome.error.kind, 'invalid_query');
  });
});

describe('pruning', () => {
  test('a windowed template_id needle prunes row groups and reads a small fraction of the bytes', async () => {
    const d = await mkdtemp(join(tmpdir(), 'engine-prune-'));
    try {
      const s = createLocalObjectStore({ root: d });
      const rows = makeRows({ tenant: 'acme', count: 20_000, startNs: T0 + H, spanNs: H, seed: 3 });
      await writeDataFiles(s, rows, { filesPerHour: 1, rowGroupRows: 1000 });
      let fileBytes = 0;
      for await (const e of s.list({ prefix: 'data/' })) if (e.kind === 'object') fileBytes += e.size;
      const win = `range(${iso(T0 + H)}, ${iso(T0 + 2n * H)})`;
      const r = await run(s, `template_id == 5 | ${win} | count`, { nowNs: NOW });
      assert.equal(r.json.rows, rows.filter((x) => x.mined.templateId === 5n).length);
      const st = r.json.stats as { row_groups_scanned: number; row_groups_pruned: number; bytes_read: number };
      assert.equal(st.row_groups_scanned + st.row_groups_pruned, 20);
      assert.ok(st.row_groups_scanned <= 4 && st.row_groups_pruned >= 16, JSON.stringify(st));
      assert.ok(st.bytes_read < fileBytes / 10, `${st.bytes_read} of ${fileBytes} ${JSON.stringify(st)}`);
      const full = await run(s, `contains(body, "zzz") | ${win} | count`, { nowNs: NOW });
      assert.equal(full.json.stats.row_groups_pruned, 0);
      assert.ok(full.json.stats.bytes_read > 3 * st.bytes_read, `${full.json.stats.bytes_read} vs ${st.bytes_read}`);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
  test('severity bands prune only when no value in the group can match', async () => {
    const r = await run(store, `severity == 30 | ${R} | count`, { nowNs: NOW });
    assert.equal(r.json.rows, oracle((x) => x.record.severityNumber === 30).length);
  });
});

describe('tenant isolation', () => {
  test('a tenant sees only its own rows; prefix tenants and crafted names do not leak', async () => {
    assert.equal(await count(`true | ${R} | count`), 3000);
    assert.equal(await count(`true | ${R} | count`, 'acm'), 112);
    assert.equal(await count(`true | ${R} | count`, 'acme2'), 109);
    assert.equal(await count(`true | ${R} | count`, 'a/b'), 110);
    assert.equal(await count(`true | ${R} | count`, 'a%2Fb'), 0);
    assert.equal(await count(`true | ${R} | count`, '..'), 111);
    assert.equal(await count(`true | ${R} | count`, '.'), 0);
    assert.equal(await count(`true | ${R} | count`, 'a'), 0);
  });
  test("a row whose tenant_id differs from its path is storage_corrupt tenant_mismatch naming the file, never the other tenant's rows", async () => {
    const d = await mkdtemp(join(tmpdir(), 'engine-tenant-'));
    try {
      const s = createLocalObjectStore({ root: d });
      const rows = makeRows({ tenant: 'evil', count: 10, startNs: T0, spanNs: H, seed: 1 });
      const { encodeLogsParquet, dataFileKey, uuidv7 } = await import('@sluice/storage');
      const key = dataFileKey('victim', T0, uuidv7());
      await s.put(key, await encodeLogsParquet(rows));
      const r = await run(s, `true | ${R} | count`, { nowNs: NOW, tenant: 'victim' });
      assert.deepEqual(r.outcome.status === 'error' && r.outcome.error, {
        kind: 'storage_corrupt',
        key,
        reason: 'tenant_mismatch',
      });
      const skipped = await run(s, `true | ${R} | limit 100`, {
        nowNs: NOW,
        tenant: 'victim',
        onCorruptObject: 'skip',
      });
      assert.equal(skipped.json.rows, 0);
      assert.deepEqual(skipped.json.records, []);
      assert.deepEqual(skipped.json.stats.skipped_objects, [{ key, reason: 'tenant_mismatch' }]);
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});

describe('the rendered body and the pool', () => {
  /** Runs `query` and returns its answer and what the pool held right after the query's last grow (the seal's). */
  async function heldAtSeal(query: string): Promise<{ r: Awaited<ReturnType<typeof run>>; atLastGrow: number }> {
    const pool = createMemoryPool({ sizeBytes: 1024 ** 3 });
    let atLastGrow = 0;
    setAfterTotalCommitHook(() => {
      atLastGrow = pool.reserved();
    });
    try {
      const r = await run(store, query, { nowNs: NOW, pool });
      assert.equal(r.outcome.status, 'ok');
      return { r, atLastGrow };
    } finally {
      setAfterTotalCommitHook(null);
    }
  }

  /** The records' own UTF-8 bytes and characters in the answer (without the commas between them), and their count. */
  function recordText(text: string): { bytes: number; chars: number; count: number } {
    const from = text.indexOf('"records":[') + '"records":['.length;
    const to = text.lastIndexOf(']');
    const count = (JSON.parse(text) as { records: unknown[] }).records.length;
    const records = text.slice(from, to);
    return { bytes: Buffer.byteLength(records, 'utf8') - (count - 1), chars: records.length - (count - 1), count };
  }

  test('while the body is written, the query holds its records’ reserved buffers, the kept chunks and the body', async () => {
    const { r, atLastGrow } = await heldAtSeal(`true | ${R} | limit 50`);
    const { bytes, count } = recordText(r.text);
    assert.equal(count, 50);
    // Unsorted records are rendered straight into reserved buffers, held until the seal; the
    // budget holds those buffers (the body's bytes) and reserves the body buffer again before writing it.
    // Buffers double from RECORD_FIRST_CHUNK_BYTES to RECORD_CHUNK_BYTES: at least those covering the records.
    let buffers = 0;
    for (
      let size = RECORD_FIRST_CHUNK_BYTES;
      buffers < bytes + count - 1;
      size = Math.min(2 * size, RECORD_CHUNK_BYTES)
    )
      buffers += size;
    const body = Buffer.byteLength(r.text, 'utf8');
    assert.ok(
      atLastGrow >= buffers + 2 * body,
      `held ${atLastGrow} at the seal < records ${buffers} + 2 × body ${body}`,
    );
  });

  test('a sorted answer holds each record’s string reservation until the seal as well', async () => {
    const { r, atLastGrow } = await heldAtSeal(`true | ${R} | sort ts desc | limit 50`);
    const { chars, count } = recordText(r.text);
    assert.equal(count, 50);
    // Each record's text stays reserved at 2 bytes a character + 96 (retainedRowBytes) until the seal.
    const records = retainedRowBytes('x'.repeat(chars)) + (count - 1) * retainedRowBytes('');
    const body = Buffer.byteLength(r.text, 'utf8');
    assert.ok(
      atLastGrow >= records + 2 * body,
      `held ${atLastGrow} at the seal < records ${records} + 2 × body ${body}`,
    );
  });
});
