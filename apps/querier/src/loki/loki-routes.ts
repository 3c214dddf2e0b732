/**
 * @module loki-routes
 * The Loki-compatible read API on the query listener (docs/grafana.md): the subset of Loki's HTTP API that
 * Grafana's built-in Loki datasource and Logs Drilldown call, answered with Loki's parameters and shapes. Every
 * request passes the same access gate as `/v1/query` (bearer token, tenant, the token's tenant set) and every
 * query it makes runs through the same query service (admission, pool, caps, deadline).
 *
 * Tenant: our header (`tenancy.header`) or Loki's (`querier.loki.tenant_header`, default `X-Scope-OrgID`); both
 * present with different values is a 400.
 */
import type { ServerResponse } from 'node:http';
import type { Context, Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { Result } from '@sluice/core';
import type { AccessGate } from '@sluice/edge';
import {
  lokiGroupLabel,
  parseLogql,
  translateLogql,
  type LogqlError,
  type LokiPlan,
  type Predicate,
} from '@sluice/query';
import type { QueryService } from '../query-service.js';
import { MAX_QUERY_BODY_BYTES, readLimitedBody } from '../read-limited-body.js';
import { lokiErrorResponse, type LokiFailure } from './loki-error.js';
import {
  detectedFieldValues,
  detectedFields,
  detectedLabels,
  indexStats,
  labelNames,
  labelValues,
  patterns,
  sampleRows,
  seriesOf,
  volume,
} from './loki-metadata.js';
import { evaluateMetric, pointsOf, type LokiSeries } from './loki-metric.js';
import {
  parseLokiDirection,
  parseLokiDuration,
  parseLokiLimit,
  parseLokiRange,
  parseLokiStep,
  parseLokiTime,
  type LokiParams,
  type LokiRange,
} from './loki-params.js';
import { runLokiQuery, statsOf, type JsonObject, type LokiRunContext } from './loki-run.js';
import { streamsOf } from './loki-streams.js';

/** Options of {@link registerLokiRoutes}. */
export interface LokiRouteOptions {
  readonly service: QueryService;
  readonly access: AccessGate;
  /** `querier.loki.tenant_header`. */
  readonly tenantHeader: string;
  /** `querier.loki.sample_rows`: records read to list label names, series, detected labels and fields. */
  readonly sampleRows: number;
  /** Sluice's version (in `status/buildinfo`'s revision). */
  readonly version: string;
  /** Wall clock in ns (default `Date.now`). */
  readonly nowNs?: () => bigint;
}

/** The Loki API version `status/buildinfo` reports: the API level the subset follows, so Grafana enables its features. */
export const LOKI_API_VERSION = '3.4.0';

const PREFIX = '/loki/api/v1';
/** The request header asking for structured metadata and parsed labels apart from stream labels. */
export const ENCODING_FLAGS_HEADER = 'X-Loki-Response-Encoding-Flags';

type AppContext = Context<{ Bindings: HttpBindings }>;
type Handler = (params: LokiParams, ctx: LokiRunContext, c: AppContext) => Promise<Result<unknown, LokiFailure>>;

function headerValues(c: AppContext, name: string): readonly string[] {
  const incoming = c.env?.incoming;
  if (incoming !== undefined) return incoming.headersDistinct[name.toLowerCase()] ?? [];
  const value = c.req.header(name);
  return value === undefined ? [] : [value];
}

const bad = (message: string): { ok: false; error: LokiFailure } => ({
  ok: false,
  error: { kind: 'bad_request', message },
});

function logqlFailure(e: LogqlError): { ok: false; error: LokiFailure } {
  return {
    ok: false,
    error:
      e.kind === 'unsupported'
        ? { kind: 'unsupported', message: `unsupported LogQL: ${e.message}` }
        : { kind: 'bad_request', message: `parse error: ${e.message}` },
  };
}

/** Parses and translates LogQL text. */
export function planOf(text: string | null): Result<LokiPlan, LokiFailure> {
  if (text === null || text.trim() === '') return bad('query parameter is required');
  const parsed = parseLogql(text);
  if (!parsed.ok) return logqlFailure(parsed.error);
  const plan = translateLogql(parsed.value);
  return plan.ok ? plan : logqlFailure(plan.error);
}

/** The predicate of a selector parameter (`query`, `match[]`); absent = every record. */
function selectorPredicate(text: string | null): Result<Predicate, LokiFailure> {
  if (text === null || text.trim() === '') return { ok: true, value: { kind: 'bool', value: true } };
  const plan = planOf(text);
  if (!plan.ok) return plan;
  if (plan.value.kind !== 'logs') return bad(`expected a stream selector, got a metric query: ${text}`);
  return { ok: true, value: plan.value.predicate };
}

/** The label names the selector's matchers use (volume's default grouping). */
function matcherLabels(text: string | null): string[] {
  if (text === null) return [];
  const parsed = parseLogql(text);
  return parsed.ok && parsed.value.kind === 'logs' ? [...new Set(parsed.value.matchers.map((m) => m.name))] : [];
}

const seconds = (ns: bigint): number => Number(ns) / 1e9;
const sampleValue = (v: number): string => (Number.isInteger(v) ? v.toFixed(0) : String(v));

function matrix(series: readonly LokiSeries[], startNs: bigint, stepNs: bigint): unknown {
  return {
    resultType: 'matrix',
    result: series.map((s) => ({
      metric: s.labels,
      values: s.values.flatMap((v, i) => (v === null ? [] : [[seconds(startNs + stepNs * BigInt(i)), sampleValue(v)]])),
    })),
  };
}

function vector(series: readonly LokiSeries[], atNs: bigint): unknown {
  return {
    resultType: 'vector',
    result: series.flatMap((s) =>
      s.values[0] === null || s.values[0] === undefined
        ? []
        : [{ metric: s.labels, value: [seconds(atNs), sampleValue(s.values[0])] }],
    ),
  };
}

function summary(body: JsonObject | null, startedMs: number, returned: number): unknown {
  const stats = body === null ? {} : statsOf(body);
  const rows = body === null ? 0 : Number(body['rows'] ?? 0);
  const execTime = (performance.now() - startedMs) / 1000;
  return {
    summary: {
      bytesProcessedPerSecond: execTime > 0 ? Math.round((stats['bytes_read'] ?? 0) / execTime) : 0,
      linesProcessedPerSecond: execTime > 0 ? Math.round(rows / execTime) : 0,
      totalBytesProcessed: stats['bytes_read'] ?? 0,
      totalLinesProcessed: rows,
      totalEntriesReturned: returned,
      totalPostFilterLines: rows,
      execTime,
      queueTime: 0,
      subqueries: 0,
      shards: 0,
      splits: 0,
    },
  };
}

function categorized(c: AppContext): boolean {
  return headerValues(c, ENCODING_FLAGS_HEADER).some((v) => v.split(',').some((f) => f.trim() === 'categorize-labels'));
}

async function logsQuery(
  ctx: LokiRunContext,
  c: AppContext,
  plan: Extract<LokiPlan, { kind: 'logs' }>,
  window: LokiRange,
  params: LokiParams,
): Promise<Result<unknown, LokiFailure>> {
  const limit = parseLokiLimit(params);
  if (!limit.ok) return bad(limit.error);
  const direction = parseLokiDirection(params);
  if (!direction.ok) return bad(direction.error);
  const started = performance.now();
  const r = await runLokiQuery(ctx, {
    kind: 'logs',
    predicate: plan.predicate,
    stages: [
      { kind: 'range', from: { kind: 'absolute', ns: window.startNs }, to: { kind: 'absolute', ns: window.endNs } },
      { kind: 'sort', key: 'ts', descending: direction.value === 'backward' },
      { kind: 'limit', n: BigInt(limit.value) },
    ],
  });
  if (!r.ok) return r;
  const records = Array.isArray(r.value['records']) ? (r.value['records'] as unknown as JsonObject[]) : [];
  const categorize = categorized(c);
  return {
    ok: true,
    value: {
      status: 'success',
      data: {
        resultType: 'streams',
        result: streamsOf(records, { categorize, parsers: plan.parsers }),
        stats: summary(r.value, started, records.length),
        ...(categorize ? { encodingFlags: ['categorize-labels'] } : {}),
      },
    },
  };
}

const queryRange: Handler = async (params, ctx, c) => {
  const plan = planOf(params.get('query'));
  if (!plan.ok) return plan;
  const window = parseLokiRange(params, ctx.nowNs());
  if (!window.ok) return bad(window.error);
  if (plan.value.kind === 'logs') return logsQuery(ctx, c, plan.value, window.value, params);
  const step = parseLokiStep(params, window.value);
  if (!step.ok) return bad(step.error);
  const points = pointsOf(window.value.startNs, window.value.endNs, step.value);
  if (!points.ok) return points;
  const started = performance.now();
  let series: LokiSeries[];
  if (plan.value.kind === 'constant') {
    series = [{ labels: {}, values: new Array<number | null>(points.value.count).fill(plan.value.value) }];
  } else {
    const evaluated = await evaluateMetric(ctx, plan.value, points.value);
    if (!evaluated.ok) return evaluated;
    series = evaluated.value;
  }
  const data = matrix(series, points.value.startNs, step.value) as Record<string, unknown>;
  return { ok: true, value: { status: 'success', data: { ...data, stats: summary(null, started, 0) } } };
};

const instantQuery: Handler = async (params, ctx) => {
  const plan = planOf(params.get('query'));
  if (!plan.ok) return plan;
  const at = parseLokiTime('time', params.get('time'), ctx.nowNs());
  if (!at.ok) return bad(at.error);
  const started = performance.now();
  if (plan.value.kind === 'logs') {
    return {
      ok: false,
      error: {
        kind: 'unsupported',
        message: 'log queries are not supported as an instant query type; use query_range',
      },
    };
  }
  let series: LokiSeries[];
  if (plan.value.kind === 'constant') series = [{ labels: {}, values: [plan.value.value] }];
  else {
    const points = { startNs: at.value, stepNs: 1n, count: 1 };
    const evaluated = await evaluateMetric(ctx, plan.value, points);
    if (!evaluated.ok) return evaluated;
    series = evaluated.value;
  }
  const data = vector(series, at.value) as Record<string, unknown>;
  return { ok: true, value: { status: 'success', data: { ...data, stats: summary(null, started, 0) } } };
};

async function withSample(
  params: LokiParams,
  ctx: LokiRunContext,
  sampleRowsN: number,
  selector: string | null,
): Promise<Result<JsonObject[], LokiFailure>> {
  const predicate = selectorPredicate(selector);
  if (!predicate.ok) return predicate;
  const window = parseLokiRange(params, ctx.nowNs());
  if (!window.ok) return bad(window.error);
  return sampleRows(ctx, predicate.value, window.value, sampleRowsN);
}

/** Registers the Loki routes on the query app. */
export function registerLokiRoutes(app: Hono<{ Bindings: HttpBindings }>, options: LokiRouteOptions): void {
  const { access, service } = options;
  const nowNs = options.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  const sample = options.sampleRows;

  const route = (path: string, handler: Handler): void => {
    app.on(['GET', 'POST'], `${PREFIX}${path}`, async (c) => {
      const ours = headerValues(c, access.tenantHeader);
      const theirs = headerValues(c, options.tenantHeader);
      if (ours.length > 0 && theirs.length > 0 && ours.join(',').trim() !== theirs.join(',').trim()) {
        return lokiErrorResponse({
          kind: 'bad_request',
          message: `${access.tenantHeader} and ${options.tenantHeader} name different tenants; send one of them`,
        });
      }
      const admitted = access.admit('query', {
        authorization: headerValues(c, 'authorization'),
        tenant: ours.length > 0 ? ours : theirs,
      });
      if (!admitted.ok) {
        const response = lokiErrorResponse({ kind: 'query', error: admitted.error });
        if (admitted.error.kind === 'unauthenticated') response.headers.set('www-authenticate', access.challenge);
        return response;
      }
      const params = new URLSearchParams(new URL(c.req.url).search);
      if (
        c.req.method === 'POST' &&
        (c.req.header('content-type') ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')
      ) {
        const body = await readLimitedBody(c.req.raw);
        if (body.status === 'too_large') {
          return lokiErrorResponse({
            kind: 'query',
            error: { kind: 'request_too_large', message: `request body exceeds ${MAX_QUERY_BODY_BYTES} bytes` },
          });
        }
        if (body.status === 'invalid_utf8')
          return lokiErrorResponse({ kind: 'bad_request', message: 'request body is not valid UTF-8' });
        for (const [k, v] of new URLSearchParams(body.text)) params.append(k, v);
      }
      const holds: (() => void)[] = [];
      const ctx: LokiRunContext = {
        service,
        tenant: admitted.value.tenant,
        signal: c.req.raw.signal,
        holds,
        nowNs,
      };
      const releaseAll = (): void => {
        for (const h of holds.splice(0)) h();
      };
      let result: Result<unknown, LokiFailure>;
      try {
        result = await handler(params, ctx, c);
      } catch (e) {
        releaseAll();
        throw e;
      }
      if (!result.ok) {
        releaseAll();
        return lokiErrorResponse(result.error);
      }
      const outgoing: ServerResponse | undefined = c.env?.outgoing;
      // The permits and the bodies' reservations are held until the answer has been handed to the socket.
      if (outgoing === undefined || outgoing.destroyed || outgoing.writableFinished) queueMicrotask(releaseAll);
      else {
        outgoing.once('finish', releaseAll);
        outgoing.once('close', releaseAll);
      }
      return c.body(JSON.stringify(result.value), 200, { 'content-type': 'application/json; charset=utf-8' });
    });
  };

  route('/query_range', queryRange);
  route('/query', instantQuery);

  route('/labels', async (params, ctx) => {
    const rows = await withSample(params, ctx, sample, params.get('query'));
    return rows.ok ? { ok: true, value: { status: 'success', data: labelNames(rows.value) } } : rows;
  });

  route('/label/:name/values', async (params, ctx, c) => {
    const name = c.req.param('name') ?? '';
    const predicate = selectorPredicate(params.get('query'));
    if (!predicate.ok) return predicate;
    const window = parseLokiRange(params, ctx.nowNs());
    if (!window.ok) return bad(window.error);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return bad(`invalid label name ${JSON.stringify(name)}`);
    const values = await labelValues(ctx, lokiGroupLabel(name), predicate.value, window.value);
    return values.ok ? { ok: true, value: { status: 'success', data: values.value } } : values;
  });

  route('/series', async (params, ctx) => {
    const matches = params.getAll('match[]');
    const seen = new Map<string, Record<string, string>>();
    for (const m of matches.length > 0 ? matches : [null]) {
      const rows = await withSample(params, ctx, sample, m);
      if (!rows.ok) return rows;
      for (const s of seriesOf(rows.value)) seen.set(JSON.stringify(Object.entries(s).sort()), s);
    }
    return { ok: true, value: { status: 'success', data: [...seen.values()] } };
  });

  route('/index/stats', async (params, ctx) => {
    const predicate = selectorPredicate(params.get('query'));
    if (!predicate.ok) return predicate;
    const window = parseLokiRange(params, ctx.nowNs());
    if (!window.ok) return bad(window.error);
    return indexStats(ctx, predicate.value, window.value);
  });

  const volumeHandler =
    (ranged: boolean): Handler =>
    async (params, ctx) => {
      const query = params.get('query');
      const predicate = selectorPredicate(query);
      if (!predicate.ok) return predicate;
      const window = parseLokiRange(params, ctx.nowNs());
      if (!window.ok) return bad(window.error);
      const limit = parseLokiLimit(params, 'limit', 100);
      if (!limit.ok) return bad(limit.error);
      const target = (params.get('targetLabels') ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      const labels = target.length > 0 ? target : matcherLabels(query);
      const by = labels.map(lokiGroupLabel);
      if (by.filter((b) => b.nullable).length > 1) {
        return {
          ok: false,
          error: {
            kind: 'unsupported',
            message: 'volume by more than one label besides level/detected_level is not supported',
          },
        };
      }
      let series: LokiSeries[];
      let data: unknown;
      if (ranged) {
        const step = parseLokiStep(params, window.value);
        if (!step.ok) return bad(step.error);
        const points = pointsOf(window.value.startNs, window.value.endNs, step.value);
        if (!points.ok) return points;
        const r = await volume(ctx, predicate.value, by, points.value, step.value);
        if (!r.ok) return r;
        series = r.value;
        const total = (s: LokiSeries): number => s.values.reduce<number>((n, v) => n + (v ?? 0), 0);
        series = series.sort((a, b) => total(b) - total(a)).slice(0, limit.value);
        data = matrix(series, points.value.startNs, step.value);
      } else {
        const span = window.value.endNs - window.value.startNs;
        if (span <= 0n) return bad('end must be after start');
        const r = await volume(ctx, predicate.value, by, { startNs: window.value.endNs, stepNs: 1n, count: 1 }, span);
        if (!r.ok) return r;
        series = r.value.sort((a, b) => (b.values[0] ?? 0) - (a.values[0] ?? 0)).slice(0, limit.value);
        data = vector(series, window.value.endNs);
      }
      return { ok: true, value: { status: 'success', data } };
    };
  route('/index/volume', volumeHandler(false));
  route('/index/volume_range', volumeHandler(true));

  route('/patterns', async (params, ctx) => {
    const predicate = selectorPredicate(params.get('query'));
    if (!predicate.ok) return predicate;
    const window = parseLokiRange(params, ctx.nowNs());
    if (!window.ok) return bad(window.error);
    const stepText = params.get('step');
    const step =
      stepText === null || stepText === '' ? parseLokiStep(params, window.value) : parseLokiDuration('step', stepText);
    if (!step.ok) return bad(step.error);
    if ((window.value.endNs - window.value.startNs) / step.value > 11_000n) {
      return bad(
        'exceeded maximum resolution of 11000 points per timeseries. Try decreasing the query resolution (?step=XX)',
      );
    }
    const r = await patterns(ctx, predicate.value, window.value, step.value);
    return r.ok ? { ok: true, value: { status: 'success', data: r.value } } : r;
  });

  route('/detected_labels', async (params, ctx) => {
    const rows = await withSample(params, ctx, sample, params.get('query'));
    return rows.ok ? { ok: true, value: { detectedLabels: detectedLabels(rows.value) } } : rows;
  });

  route('/detected_fields', async (params, ctx) => {
    const limit = parseLokiLimit(params, 'line_limit', sample);
    if (!limit.ok) return bad(limit.error);
    const rows = await withSample(params, ctx, Math.min(limit.value, sample), params.get('query'));
    if (!rows.ok) return rows;
    const fieldLimit = parseLokiLimit(params, 'limit', 1000);
    if (!fieldLimit.ok) return bad(fieldLimit.error);
    return {
      ok: true,
      value: { fields: detectedFields(rows.value).slice(0, fieldLimit.value), limit: fieldLimit.value },
    };
  });

  route('/detected_field/:name/values', async (params, ctx, c) => {
    const limit = parseLokiLimit(params, 'line_limit', sample);
    if (!limit.ok) return bad(limit.error);
    const rows = await withSample(params, ctx, Math.min(limit.value, sample), params.get('query'));
    if (!rows.ok) return rows;
    return { ok: true, value: { values: detectedFieldValues(rows.value, c.req.param('name') ?? '') } };
  });

  route('/status/buildinfo', async () => ({
    ok: true,
    value: {
      version: LOKI_API_VERSION,
      revision: `sluice-${options.version}`,
      branch: '',
      buildUser: '',
      buildDate: '',
      goVersion: '',
    },
  }));

  route('/tail', async () => ({
    ok: false,
    error: { kind: 'bad_request', message: 'the live tail is a websocket: connect with Upgrade: websocket' },
  }));
}
