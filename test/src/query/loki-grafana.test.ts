/**
 * Grafana without a plugin (docs/grafana.md): against a real `sluice serve` holding a corpus exported over
 * OTLP, the requests Grafana's built-in Loki datasource and Logs Drilldown issue — in the order and with the
 * parameters Grafana's code sends them (health check, Explore's label browser and query-stats hint, a logs query
 * with a line filter and its logs-volume query, a `sum by (level)` graph, Drilldown's volume, patterns, detected
 * fields and labels) — answer in Loki's shapes with the values `/v1/query` gives on the same corpus. Every real
 * LogQL query outside the subset is a 400, not an answer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { JsonValue } from '@sluice/core';
import { UNSUPPORTED_LOGQL } from '@sluice/query';
import { big, field, postQuery } from '../helpers/query-client.js';
import {
  CORPUS_BASE_NS,
  CORPUS_END_NS,
  corpusRecords,
  exportRecords,
  utf8CorpusRecords,
} from '../helpers/query-corpus.js';
import { waitForStoredRows } from '../helpers/read-store.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';
import { openWebSocket } from '../helpers/websocket-client.js';

const TENANT = 'grafana';
const N = 900;
/** A second tenant whose bodies are multi-byte UTF-8 or empty, for bytes_over_time / bytes_rate. */
const UTF8_TENANT = 'grafana-utf8';
const N_UTF8 = 360;
const S = CORPUS_BASE_NS;
const E = CORPUS_END_NS;
const RANGE_DSL = 'range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z)';
const MIN = 60_000_000_000n;

const LEVELS = ['unknown', 'trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const levelOf = (sev: number): string => (sev < 1 || sev > 24 ? 'unknown' : LEVELS[Math.floor((sev - 1) / 4) + 1]!);

interface LokiAnswer {
  readonly status: number;
  readonly text: string;
  readonly json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- Loki's JSON, checked field by field
}

describe('Grafana Loki datasource against a real sluice serve', () => {
  const dir = tempDir('loki-grafana');
  let server: SluiceProcess;

  async function loki(
    path: string,
    params: Record<string, string | bigint>,
    headers: Record<string, string> = {},
  ): Promise<LokiAnswer> {
    const u = new URL(`/loki/api/v1${path}`, server.queryUrl!);
    for (const [k, v] of Object.entries(params)) u.searchParams.append(k, String(v));
    const res = await fetch(u, { headers: { 'X-Scope-OrgID': TENANT, ...headers } });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, text, json };
  }

  async function dsl(query: string): Promise<JsonValue> {
    const r = await postQuery(server.queryUrl!, TENANT, query);
    assert.equal(r.status, 200, r.text);
    return r.json;
  }

  const groups = (answer: JsonValue): { key: string[]; count: number }[] =>
    ((field(answer, 'aggregate') ?? []) as JsonValue[]).map((g) => ({
      key: (field(g, 'key') as JsonValue[]).map(String),
      count: Number(field(g, 'count')),
    }));

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), flushAgeSecs: 1, querier: true }),
      { dir },
    );
    await server.waitReady();
    await exportRecords(server.otlpHttpUrl, TENANT, corpusRecords(0, N));
    await exportRecords(server.otlpHttpUrl, UTF8_TENANT, utf8CorpusRecords(1, N_UTF8));
    await waitForStoredRows({ backend: 'local', root: join(dir, 'data') }, N + N_UTF8);
  });
  after(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  test("the datasource's health check: instant vector(1)+vector(1) at time=4s answers one sample of 2", async () => {
    // pkg/tsdb/loki/healthcheck.go: instant query, step 1s, time range 1s..4s; the request carries time=End in ns.
    const r = await loki('/query', { direction: '', query: 'vector(1)+vector(1)', time: '4000000000' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.status, 'success');
    assert.equal(r.json.data.resultType, 'vector');
    assert.equal(r.json.data.result.length, 1);
    assert.deepEqual(r.json.data.result[0].metric, {});
    assert.equal(r.json.data.result[0].value[1], '2');
    const build = await loki('/status/buildinfo', {});
    assert.equal(build.status, 200);
    assert.match(build.json.version, /^3\./);
  });

  test("Explore's label browser: label names, values (exact), values under a selector, series, the stats hint", async () => {
    const labels = await loki('/labels', { start: S, end: E });
    assert.equal(labels.status, 200, labels.text);
    assert.deepEqual(labels.json, { status: 'success', data: ['deployment_environment', 'service_name'] });

    const services = await loki('/label/service_name/values', { start: S, end: E });
    const byService = groups(await dsl(`true | ${RANGE_DSL} | count by service`));
    assert.deepEqual(services.json.data, byService.map((g) => g.key[0]).sort());

    const env = await loki('/label/deployment_environment/values', {
      query: '{service_name="search"}',
      start: S,
      end: E,
    });
    assert.deepEqual(env.json.data, ['dev']);

    const series = await loki('/series', { 'match[]': '{service_name="checkout"}', start: S, end: E });
    assert.deepEqual(series.json, {
      status: 'success',
      data: [{ service_name: 'checkout', deployment_environment: 'prod' }],
    });

    const stats = await loki('/index/stats', { query: '{service_name="checkout"}', start: S, end: E });
    const checkout = byService.find((g) => g.key[0] === 'checkout')!.count;
    assert.equal(stats.json.entries, checkout);
    assert.equal(stats.json.streams, 1);
    for (const k of ['chunks', 'bytes']) assert.equal(typeof stats.json[k], 'number');
  });

  test('a logs query with a line filter: the same records as /v1/query, newest first, in Loki streams', async () => {
    // makeDataRequest: direction, limit (maxLines), start/end in ns, step in ms.
    const r = await loki('/query_range', {
      direction: 'backward',
      end: E,
      limit: '1000',
      query: '{service_name="checkout"} |= "timed out"',
      start: S,
      step: '10000ms',
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.resultType, 'streams');
    const entries: [string, string, Record<string, string>][] = [];
    for (const s of r.json.data.result) {
      assert.equal(s.stream.service_name, 'checkout');
      assert.equal(s.stream.deployment_environment, 'prod');
      for (const [ns, line] of s.values) entries.push([ns, line, s.stream]);
    }
    const expected = await dsl(
      `service == "checkout" and contains(body, "timed out") | ${RANGE_DSL} | sort ts desc | limit 1000`,
    );
    const records = field(expected, 'records') as JsonValue[];
    assert.ok(records.length > 10);
    entries.sort((a, b) => (BigInt(b[0]) > BigInt(a[0]) ? 1 : -1));
    assert.deepEqual(
      entries.map(([ns, line]) => [ns, line]),
      records.map((rec) => [big(field(rec, 'time_unix_nano')).toString(), field(field(rec, 'body'), 'line')]),
    );
    // Structured metadata is merged into the stream labels unless categorize-labels is asked for.
    assert.equal(entries[0]![2]['detected_level'], levelOf(Number(field(records[0], 'severity_number'))));
    assert.ok('http_method' in entries[0]![2]);
    const categorized = await loki(
      '/query_range',
      { direction: 'backward', end: E, limit: '5', query: '{service_name="checkout"} |= "timed out"', start: S },
      { 'X-Loki-Response-Encoding-Flags': 'categorize-labels' },
    );
    assert.deepEqual(categorized.json.data.encodingFlags, ['categorize-labels']);
    for (const s of categorized.json.data.result) {
      assert.deepEqual(Object.keys(s.stream).sort(), ['deployment_environment', 'service_name']);
      assert.ok(s.values[0][2].structuredMetadata.detected_level);
    }
    const forward = await loki('/query_range', {
      direction: 'forward',
      end: E,
      limit: '3',
      query: '{service_name="checkout"} |= "timed out"',
      start: S,
    });
    const oldest = await dsl(
      `service == "checkout" and contains(body, "timed out") | ${RANGE_DSL} | sort ts asc | limit 3`,
    );
    const got = forward.json.data.result.flatMap((s: { values: string[][] }) => s.values.map((v) => v[0])).sort();
    assert.deepEqual(
      got,
      (field(oldest, 'records') as JsonValue[]).map((rec) => big(field(rec, 'time_unix_nano')).toString()),
    );
  });

  /** The value `sum by (level) (count_over_time(<selector>[range]))` has at each t, from /v1/query's buckets. */
  async function expectedLevels(
    predicate: string,
    rangeNs: bigint,
    stepNs: bigint,
  ): Promise<Map<string, Map<number, number>>> {
    const from = new Date(Number((S - rangeNs) / 1_000_000n)).toISOString();
    const answer = await dsl(
      `${predicate} | range(${from}, 2026-03-01T13:00:00Z) | count by severity, bucket(${Number(MIN / 1_000_000_000n)}s)`,
    );
    const perMinute = new Map<string, Map<bigint, number>>();
    for (const g of groups(answer)) {
      const level = levelOf(Number(g.key[0]));
      const at = BigInt(Date.parse(g.key[1]!)) * 1_000_000n;
      const m = perMinute.get(level) ?? new Map<bigint, number>();
      m.set(at, (m.get(at) ?? 0) + g.count);
      perMinute.set(level, m);
    }
    const out = new Map<string, Map<number, number>>();
    for (const [level, m] of perMinute) {
      const points = new Map<number, number>();
      for (let t = S; t <= E; t += stepNs) {
        let n = 0;
        for (const [at, c] of m) if (at >= t - rangeNs && at < t) n += c;
        if (n > 0) points.set(Number(t / 1_000_000_000n), n);
      }
      if (points.size > 0) out.set(level, points);
    }
    return out;
  }

  function matrixOf(answer: LokiAnswer, label: string): Map<string, Map<number, number>> {
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.data.resultType, 'matrix');
    const out = new Map<string, Map<number, number>>();
    for (const s of answer.json.data.result) {
      const points = new Map<number, number>();
      for (const [t, v] of s.values) {
        assert.equal(typeof t, 'number');
        assert.equal(typeof v, 'string');
        points.set(t, Number(v));
      }
      out.set(s.metric[label], points);
    }
    return out;
  }

  test("the logs volume query of that logs query: sum by (level, detected_level) per minute equals /v1/query's counts", async () => {
    const r = await loki(
      '/query_range',
      {
        direction: 'backward',
        end: E,
        query:
          'sum by (level, detected_level) (count_over_time({service_name="checkout"} |= "timed out" | drop __error__[1m]))',
        start: S,
        step: '60000ms',
      },
      { 'X-Query-Tags': 'Source=logvolhist' },
    );
    const got = matrixOf(r, 'detected_level');
    assert.ok(got.size >= 2, 'several levels');
    for (const s of r.json.data.result) assert.equal(s.metric.level, s.metric.detected_level);
    assert.deepEqual(got, await expectedLevels('service == "checkout" and contains(body, "timed out")', MIN, MIN));
  });

  test('a sum by (level) (count_over_time(…[10m])) graph with a 5 minute step equals /v1/query over the same windows', async () => {
    const r = await loki('/query_range', {
      direction: 'backward',
      end: E,
      query: 'sum by (level) (count_over_time({deployment_environment="prod"}[10m]))',
      start: S,
      step: '300000ms',
    });
    const got = matrixOf(r, 'level');
    assert.ok(got.size >= 4, `levels: ${[...got.keys()].join(',')}`);
    assert.ok([...got.values()].every((points) => points.size > 30));
    assert.deepEqual(got, await expectedLevels('resource["deployment.environment"] == "prod"', 10n * MIN, 5n * MIN));
    // Grafana sends the time picker's bounds as they are; the points are aligned to the step, as Loki aligns them.
    const unaligned = await loki('/query_range', {
      direction: 'backward',
      end: E + 123_456_789n,
      query: 'sum by (level) (count_over_time({deployment_environment="prod"}[10m]))',
      start: S + 7_654_321n,
      step: '300000ms',
    });
    assert.deepEqual(unaligned.json.data.result, r.json.data.result);
  });

  test("a sum by (level) (bytes_over_time(…[1m])) graph equals the UTF-8 byte sums of /v1/query's records; bytes_rate divides by the range", async () => {
    const records = await postQuery(
      server.queryUrl!,
      UTF8_TENANT,
      `resource["deployment.environment"] == "prod" | ${RANGE_DSL} | limit 10000`,
    );
    assert.equal(records.status, 200, records.text);
    const rows = (field(records.json, 'records') as JsonValue[]).map((rec) => {
      const body = field(rec, 'body');
      const line = body === undefined ? '' : String(field(body, 'line'));
      return {
        ns: big(field(rec, 'time_unix_nano')),
        level: levelOf(Number(field(rec, 'severity_number'))),
        bytes: Buffer.byteLength(line, 'utf8'),
        chars: line.length,
      };
    });
    assert.ok(rows.length > 100, `records: ${rows.length}`);
    assert.ok(rows.some((r) => r.bytes > r.chars) && rows.some((r) => r.bytes === 0), 'multi-byte and empty lines');
    // Loki's value at t: the bytes of the records in [t − 1m, t); a window without records has no point.
    const expected = new Map<string, Map<number, number>>();
    for (let t = S; t <= E; t += MIN) {
      const sums = new Map<string, { n: number; bytes: number }>();
      for (const r of rows) {
        if (r.ns < t - MIN || r.ns >= t) continue;
        const g = sums.get(r.level) ?? { n: 0, bytes: 0 };
        g.n++;
        g.bytes += r.bytes;
        sums.set(r.level, g);
      }
      for (const [level, g] of sums) {
        const points = expected.get(level) ?? new Map<number, number>();
        points.set(Number(t / 1_000_000_000n), g.bytes);
        expected.set(level, points);
      }
    }
    /** The graph Grafana draws for `fn`: one point a minute over the corpus. */
    const graph = async (fn: string): Promise<Map<string, Map<number, number>>> =>
      matrixOf(
        await loki(
          '/query_range',
          {
            direction: 'backward',
            end: E,
            query: `sum by (level) (${fn}({deployment_environment="prod"}[1m]))`,
            start: S,
            step: '60000ms',
          },
          { 'X-Scope-OrgID': UTF8_TENANT },
        ),
        'level',
      );
    const got = await graph('bytes_over_time');
    assert.ok(got.size >= 4, `levels: ${[...got.keys()].join(',')}`);
    assert.ok(
      [...got.values()].some((points) => [...points.values()].includes(0)),
      'a window of empty lines is 0',
    );
    assert.deepEqual(got, expected);
    const perSecond = await graph('bytes_rate');
    assert.deepEqual([...perSecond.keys()].sort(), [...expected.keys()].sort());
    for (const [level, points] of expected) {
      const gotPoints = perSecond.get(level)!;
      assert.deepEqual([...gotPoints.keys()], [...points.keys()], level);
      for (const [t, bytes] of points)
        assert.ok(Math.abs(gotPoints.get(t)! - bytes / 60) < 1e-9 * (1 + bytes), `${level} ${t}`);
    }
  });

  test('Logs Drilldown: service volume, patterns from mined templates, detected fields and labels', async () => {
    const volume = await loki('/index/volume', {
      query: '{service_name=~".+"}',
      start: S,
      end: E,
      limit: '5000',
      targetLabels: 'service_name',
      aggregateBy: 'series',
    });
    assert.equal(volume.status, 200, volume.text);
    assert.equal(volume.json.data.resultType, 'vector');
    const byService = groups(await dsl(`true | ${RANGE_DSL} | count by service`));
    assert.deepEqual(
      new Map(
        volume.json.data.result.map((s: { metric: { service_name: string }; value: [number, string] }) => [
          s.metric.service_name,
          Number(s.value[1]),
        ]),
      ),
      new Map(byService.map((g) => [g.key[0], g.count])),
    );

    const patterns = await loki('/patterns', { query: '{service_name="checkout"}', start: S, end: E, step: '3600s' });
    assert.equal(patterns.status, 200, patterns.text);
    const byTemplate = groups(await dsl(`service == "checkout" | ${RANGE_DSL} | count by template_id`)).filter(
      (g) => g.key[0] !== '0',
    );
    const totals = patterns.json.data.map((p: { pattern: string; samples: [number, number][] }) => {
      assert.equal(typeof p.pattern, 'string');
      return p.samples.reduce((n, [, c]) => n + c, 0);
    });
    assert.ok(byTemplate.length >= 5);
    assert.deepEqual([...totals].sort(), byTemplate.map((g) => g.count).sort());
    assert.ok(patterns.json.data.some((p: { pattern: string }) => p.pattern.includes('<_>')));

    const fields = await loki('/detected_fields', { query: '{service_name="checkout"}', start: S, end: E });
    assert.equal(fields.status, 200, fields.text);
    const sample = field(
      await dsl(`service == "checkout" | ${RANGE_DSL} | sort ts desc | limit 1000`),
      'records',
    ) as JsonValue[];
    const distinct = (key: string): number =>
      new Set(
        sample.map((rec) => {
          const kv = (field(rec, 'attributes') as JsonValue[]).find((a) => field(a, 'key') === key);
          return JSON.stringify(field(kv, 'value'));
        }),
      ).size;
    const byLabel = new Map(fields.json.fields.map((f: { label: string }) => [f.label, f]));
    assert.deepEqual(byLabel.get('http_method'), {
      label: 'http_method',
      type: 'string',
      cardinality: distinct('http.method'),
      parsers: null,
    });
    assert.deepEqual(byLabel.get('latency_ms'), {
      label: 'latency_ms',
      type: 'int',
      cardinality: distinct('latency_ms'),
      parsers: null,
    });
    assert.equal((byLabel.get('detected_level') as { type: string }).type, 'string');
    const methods = await loki('/detected_field/http_method/values', {
      query: '{service_name="checkout"}',
      start: S,
      end: E,
    });
    assert.equal(methods.status, 200, methods.text);
    const expectedMethods = new Set(
      sample.map((rec) => {
        const kv = (field(rec, 'attributes') as JsonValue[]).find((a) => field(a, 'key') === 'http.method');
        return String(field(field(kv, 'value'), 'stringValue'));
      }),
    );
    assert.deepEqual(methods.json, { values: [...expectedMethods].sort() });

    const detected = await loki('/detected_labels', { query: '{service_name=~".+"}', start: S, end: E });
    assert.deepEqual(detected.json, {
      detectedLabels: [
        { label: 'deployment_environment', cardinality: 2 },
        { label: 'service_name', cardinality: 3 },
      ],
    });
  });

  test("Explore's live view: the /loki/api/v1/tail websocket sends records exported after it opened, as Loki tail messages", async () => {
    const base = `${server.queryUrl!.replace(/\/$/, '')}/loki/api/v1/tail`;
    const query = encodeURIComponent('{service_name="tail-e2e"} |= "live"');
    const refused = await openWebSocket(`${base}?query=${query}`, {
      'X-Scope-OrgID': TENANT,
      'X-Sluice-Tenant': 'other',
    });
    assert.deepEqual(refused.upgraded ? null : refused.status, 400);
    const metric = await openWebSocket(`${base}?query=${encodeURIComponent('sum(rate({a="b"}[1m]))')}`, {
      'X-Scope-OrgID': TENANT,
    });
    assert.deepEqual(metric.upgraded ? null : metric.status, 400);

    const opened = await openWebSocket(`${base}?query=${query}`, { 'X-Scope-OrgID': TENANT });
    assert.ok(opened.upgraded);
    const ws = opened.ws;
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    const template = corpusRecords(0, 1)[0]!;
    const live = Array.from({ length: 6 }, (_, k) => ({
      ...template,
      timeUnixNano: nowNs + BigInt(k) * 1000n,
      observedTimeUnixNano: nowNs + BigInt(k) * 1000n,
      severityNumber: 17,
      body: { kind: 'string' as const, value: k % 2 === 0 ? `live line ${k}` : `quiet line ${k}` },
      resource: {
        ...template.resource,
        attributes: [{ key: 'service.name', value: { kind: 'string' as const, value: 'tail-e2e' } }],
      },
    }));
    await exportRecords(server.otlpHttpUrl, TENANT, live);
    const lines = (): string[][] =>
      ws.messages.flatMap((m) =>
        (JSON.parse(m) as { streams: { stream: Record<string, string>; values: string[][] }[] }).streams.flatMap((st) =>
          st.values.map((v) => [v[0]!, v[1]!, st.stream['service_name']!, st.stream['detected_level']!]),
        ),
      );
    const deadline = Date.now() + 30_000;
    while (lines().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      lines().sort(),
      live
        .filter((_, k) => k % 2 === 0)
        .map((r) => [r.timeUnixNano.toString(), (r.body as { value: string }).value, 'tail-e2e', 'error']),
    );
    ws.close();
    // The server answers a close frame with its own and ends the connection (bounded: a hang is a failure).
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref());
    assert.notEqual(await Promise.race([ws.closed, timeout]), 'timeout', 'the server did not close the websocket');
    assert.equal(ws.closeFrame?.code, 1000);
  });

  test('every real LogQL query outside the subset is a 400 naming the construct', async () => {
    for (const [query, construct] of UNSUPPORTED_LOGQL) {
      const r = await loki('/query_range', { query, start: S, end: E, step: '60000ms' });
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.ok(r.text.includes(construct), `${query}: ${r.text}`);
    }
  });
});
