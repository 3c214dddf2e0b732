/**
 * @module query-app
 * The querier's HTTP surface (hono): `POST /v1/query` with its three body modes and the response shapes, `/mcp`
 * (streamable HTTP, stateless), and the probe endpoints (answered by `@sluice/core`'s `answerProbe`, as on the
 * OTLP/HTTP listener). The status is committed only once the whole body is known; the admission permit and the
 * body's reservation are held until the response has been sent (or the client went away).
 *
 * With `Accept: application/vnd.apache.arrow.stream` a log query's records or aggregation rows are answered as an
 * Arrow IPC stream, built and governed in the worker like the JSON body (docs/design/query-engine.md, "Arrow
 * results"); errors stay JSON.
 *
 * With `Accept: application/x-ndjson` a log query's result is streamed instead (docs/design/query-governance.md,
 * "Streamed results"): the 200 is committed with the first batch of lines, each batch is written with
 * backpressure (the worker sends more only once the socket has drained), the last line is the trailer
 * `{"rows":n,"stats":{…}}`, and a failure after the first line ends the stream with one `{"error":{…}}` line.
 *
 * Every request passes, in order: the connection cap (503 `too_many_connections`; probes are still answered),
 * then the access gate — token (401), tenant header (400), the token's tenant set (403) — before its body is
 * read (docs/security.md). `/healthz` and `/readyz` need no token; `/metrics` is the admin surface.
 */
import type { ServerResponse } from 'node:http';
import { Hono, type Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { PROBE_PATHS, answerProbe, type Probes } from '@sluice/core';
import type { AccessGate, AccessRefusal, ConnectionCap, TenantSurface } from '@sluice/edge';
import type { Logger } from '@sluice/telemetry';
import { checkRequestedTimeout, parseQueryRequest } from '@sluice/query';
import { createMcpCancellations } from './mcp-cancellations.js';
import { handleMcpRequest } from './mcp-endpoint.js';
import { errorEnvelope, httpStatusFor, type QueryError } from './query-error.js';
import type { QueryService, ServiceOutcome } from './query-service.js';
import { MAX_QUERY_BODY_BYTES, readLimitedBody } from './read-limited-body.js';
import type { LiveTails } from './live-tails.js';
import { parseTailRequest, SINCE_PARAM } from './tail-request.js';
import { runTailSession, type TailHooks } from './tail-session.js';
import type { ConsoleAsset } from '@sluice/console';
import { registerConsoleRoutes } from './console-routes.js';
import { dslErrorPosition } from './dsl-error-position.js';
import { registerStatusRoute, type StatusRouteOptions } from './status-route.js';
import { registerLokiRoutes, type LokiRouteOptions } from './loki/loki-routes.js';
import { ARROW_STREAM } from '@sluice/engine';
import { wantsArrow } from './arrow-accept.js';

/** Options for {@link createQueryApp}. */
export interface QueryAppOptions {
  readonly service: QueryService;
  readonly probes: Probes;
  /** Token and tenant rule, shared with every other surface of the process. */
  readonly access: AccessGate;
  /** The listener's connection cap (`querier.max_connections`); absent when the app is not behind a socket. */
  readonly connectionCap?: ConnectionCap;
  readonly mcpEnabled: boolean;
  readonly maxRows: number;
  readonly version: string;
  /** `POST /v1/tail` (docs/design/query-governance.md, "Live tail"); absent = the route answers 404. */
  readonly tails?: TailRouteOptions;
  /** `GET /v1/status` (docs/console.md); absent = 404. */
  readonly status?: StatusRouteOptions;
  /** The web console's files (`querier.ui.enabled`); absent = `/` answers 404. */
  readonly consoleAssets?: ReadonlyMap<string, ConsoleAsset>;
  /** The Loki-compatible read API (docs/grafana.md); absent = its routes answer 404. */
  readonly loki?: Pick<LokiRouteOptions, 'tenantHeader' | 'sampleRows' | 'nowNs'>;
}

/** What the live-tail route needs. */
export interface TailRouteOptions {
  readonly registry: LiveTails;
  readonly log: Logger;
  /** `querier.limits.max_tail_secs` in ms. */
  readonly maxTailMs: number;
  /** `querier.limits.max_tail_buffer_bytes`. */
  readonly maxTailBufferBytes: number;
  /** `querier.limits.tail_poll_ms`. */
  readonly pollMs: number;
  /** Wall clock in ns (default `Date.now`). */
  readonly nowNs?: () => bigint;
  /** Test seams: the wait for a client that does not read the last line, and the tail's hooks. */
  readonly lingerMs?: number;
  readonly hooks?: TailHooks;
}

type AppContext = Context<{ Bindings: HttpBindings }>;

function errorResponse(c: Context, error: QueryError): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (error.kind === 'too_many_connections') {
    headers['connection'] = 'close';
    headers['retry-after'] = '1';
  }
  return c.body(errorEnvelope(error), httpStatusFor(error.kind), headers);
}

/** Every value of a request header (several when repeated); `[]` when absent. */
function headerValues(c: AppContext, name: string): readonly string[] {
  const incoming = c.env?.incoming;
  if (incoming !== undefined) return incoming.headersDistinct[name.toLowerCase()] ?? [];
  const value = c.req.header(name);
  return value === undefined ? [] : [value];
}

/** A refusal of the gate as this surface's error (a 401 also carries the Bearer challenge). */
function refusalResponse(c: AppContext, access: AccessGate, refusal: AccessRefusal): Response {
  const response = errorResponse(c, refusal);
  if (refusal.kind === 'unauthenticated') response.headers.set('www-authenticate', access.challenge);
  return response;
}

const PROBES = new Set(PROBE_PATHS);

/** The request header that asks for a shorter deadline than `querier.limits.query_timeout_ms`, in ms. */
export const QUERY_TIMEOUT_HEADER = 'X-Sluice-Query-Timeout-Ms';

/**
 * The deadline a request asks for: the header and the body's `timeout_ms` (the smaller when both are given).
 * @returns `null` when neither is given, or a message naming the bad one
 */
function requestedTimeout(
  c: AppContext,
  bodyTimeoutMs: number | null,
): { ok: true; value: number | null } | { ok: false; error: string } {
  const values = headerValues(c, QUERY_TIMEOUT_HEADER);
  if (values.length > 1) return { ok: false, error: `${QUERY_TIMEOUT_HEADER} must be given at most once` };
  if (values.length === 0) return { ok: true, value: bodyTimeoutMs };
  const text = values[0]!.trim();
  const header = checkRequestedTimeout(QUERY_TIMEOUT_HEADER, /^[0-9]{1,16}$/.test(text) ? Number(text) : text);
  if (!header.ok) return header;
  return { ok: true, value: bodyTimeoutMs === null ? header.value : Math.min(header.value, bodyTimeoutMs) };
}

/** The media type of a streamed result. */
export const NDJSON = 'application/x-ndjson';

/** True when the request's `Accept` lists `application/x-ndjson` (parameters ignored, `q=0` excluded). */
export function wantsNdjson(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (type !== NDJSON) return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/**
 * Hands the permit and the body's reservation back once the response has been handed to the socket ('finish') or
 * the client went away ('close'); `done()` is idempotent.
 */
function releaseWhenSent(outgoing: ServerResponse | undefined, done: () => void): void {
  if (outgoing !== undefined && (outgoing.destroyed || outgoing.writableFinished)) {
    // The client went away before the answer was ready: 'close' has already been emitted and will not be again.
    done();
  } else if (outgoing !== undefined) {
    outgoing.once('finish', done);
    outgoing.once('close', done);
  } else {
    queueMicrotask(done);
  }
}

/**
 * Streams one query's result as NDJSON on the raw response. Errors before the first line are answered as usual
 * (`null`: the caller sends the JSON error); after it, the status is gone, so the stream ends with an error line.
 */
async function streamQuery(
  outgoing: ServerResponse,
  run: (write: (batch: Uint8Array) => Promise<void>) => Promise<ServiceOutcome>,
): Promise<
  { readonly sent: true } | { readonly sent: false; readonly outcome: Exclude<ServiceOutcome, { status: 'ok' }> }
> {
  let started = false;
  const start = (): void => {
    if (started) return;
    started = true;
    // No content-length: HTTP/1.1 chunked transfer encoding.
    outgoing.writeHead(200, { 'content-type': NDJSON, 'cache-control': 'no-store' });
  };
  // Resolves once the batch is written and the socket has drained, so the worker sends more only at the pace the
  // client reads: the querier holds a few batches, never the result.
  const write = (batch: Uint8Array): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      if (outgoing.destroyed) return reject(new Error('client went away'));
      start();
      if (outgoing.write(batch)) return resolve();
      const onDrain = (): void => {
        outgoing.off('close', onClose);
        resolve();
      };
      const onClose = (): void => {
        outgoing.off('drain', onDrain);
        reject(new Error('client went away'));
      };
      outgoing.once('drain', onDrain);
      outgoing.once('close', onClose);
    });
  const outcome = await run(write);
  if (!started && outcome.status !== 'ok') return { sent: false, outcome };
  if (outcome.status === 'cancelled') {
    outgoing.destroy();
    return { sent: true };
  }
  if (outcome.status === 'error') {
    // Same error object as the JSON body's; the stream ends after it.
    outgoing.end(`${errorEnvelope(outcome.error)}\n`);
    return { sent: true };
  }
  start();
  releaseWhenSent(outgoing, () => outcome.done());
  outgoing.end(outcome.body);
  return { sent: true };
}

/** Builds the hono app. */
export function createQueryApp(options: QueryAppOptions): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const { access, connectionCap } = options;
  const cancellations = createMcpCancellations();
  const admit = (c: AppContext, surface: TenantSurface) =>
    access.admit(surface, {
      authorization: headerValues(c, 'authorization'),
      tenant: headerValues(c, access.tenantHeader),
    });

  app.use('*', async (c, next) => {
    const socket = c.env?.incoming?.socket;
    if (connectionCap === undefined || socket === undefined || !connectionCap.isRefused(socket)) return next();
    // Over the cap: answer and close. Probes are still answered, so a flood does not fail liveness checks.
    if (PROBES.has(c.req.path)) {
      await next();
      c.res.headers.set('connection', 'close');
      return;
    }
    const { key, maxConnections } = connectionCap.cap;
    return errorResponse(c, {
      kind: 'too_many_connections',
      message: `too many open connections to the query listener (${key} = ${maxConnections}); retry`,
    });
  });

  for (const path of PROBE_PATHS) {
    app.all(path, async (c) => {
      const r = (await answerProbe(c.req.method, path, options.probes, {
        authorizeMetrics: () => {
          const admitted = access.admitAdmin(headerValues(c, 'authorization'));
          return admitted.ok ? null : { message: admitted.error.message, challenge: access.challenge };
        },
      }))!;
      return c.req.method === 'HEAD' ? c.body(null, r.status, r.headers) : c.body(r.body, r.status, r.headers);
    });
  }

  if (options.status !== undefined)
    registerStatusRoute(app, options.status, (c, refusal) => refusalResponse(c, access, refusal));
  if (options.consoleAssets !== undefined) registerConsoleRoutes(app, options.consoleAssets);

  app.post('/v1/query', async (c) => {
    const admitted = admit(c, 'query');
    if (!admitted.ok) return refusalResponse(c, access, admitted.error);
    const body = await readLimitedBody(c.req.raw);
    if (body.status === 'too_large') {
      return errorResponse(c, {
        kind: 'request_too_large',
        message: `request body exceeds ${MAX_QUERY_BODY_BYTES} bytes`,
      });
    }
    if (body.status === 'invalid_utf8')
      return errorResponse(c, { kind: 'invalid_query', message: 'request body is not valid UTF-8' });
    const parsed = parseQueryRequest(c.req.header('content-type'), body.text);
    if (!parsed.ok) {
      const position = dslErrorPosition(c.req.header('content-type'), parsed.error);
      return errorResponse(c, {
        kind: 'invalid_query',
        message: parsed.error.message,
        ...(position !== undefined ? { position } : {}),
      });
    }
    const timeout = requestedTimeout(c, parsed.value.timeoutMs);
    if (!timeout.ok) return errorResponse(c, { kind: 'invalid_query', message: timeout.error });
    const job = { kind: 'query', query: parsed.value.query } as const;
    const runOptions = { signal: c.req.raw.signal, timeoutMs: timeout.value };
    const outgoing: ServerResponse | undefined = c.env?.outgoing;
    // A drift statement is one JSON document, not a row stream: it is answered whole, as application/json.
    if (wantsNdjson(c.req.header('accept')) && outgoing !== undefined && job.query.kind !== 'drift') {
      const streamed = await streamQuery(outgoing, (write) =>
        options.service.run(admitted.value.tenant, job, { ...runOptions, stream: { write } }),
      );
      if (streamed.sent) return RESPONSE_ALREADY_SENT;
      if (streamed.outcome.status === 'cancelled') return c.body(null, 499 as never);
      return errorResponse(c, streamed.outcome.error);
    }
    // Arrow when the client prefers it (docs/design/query-engine.md, "Arrow results"); a drift statement is one
    // JSON document, answered as JSON whatever was asked. Errors are JSON either way, so a client can read them.
    const arrow = job.query.kind !== 'drift' && wantsArrow(c.req.header('accept'));
    const outcome = await options.service.run(
      admitted.value.tenant,
      arrow ? { ...job, format: 'arrow' } : job,
      runOptions,
    );
    if (outcome.status === 'cancelled') return c.body(null, 499 as never);
    if (outcome.status === 'error') return errorResponse(c, outcome.error);
    // 'finish': the body has been handed to the socket; 'close': the client went away first.
    releaseWhenSent(outgoing, () => outcome.done());
    return c.body(outcome.body as Uint8Array<ArrayBuffer>, 200, {
      'content-type': arrow ? ARROW_STREAM : 'application/json',
    });
  });

  app.post('/v1/tail', async (c) => {
    const tails = options.tails;
    if (tails === undefined) return c.text('not found\n', 404);
    // The same gate as /v1/query: token, tenant header, the token's tenant set.
    const admitted = admit(c, 'query');
    if (!admitted.ok) return refusalResponse(c, access, admitted.error);
    const body = await readLimitedBody(c.req.raw);
    if (body.status === 'too_large')
      return errorResponse(c, {
        kind: 'request_too_large',
        message: `request body exceeds ${MAX_QUERY_BODY_BYTES} bytes`,
      });
    if (body.status === 'invalid_utf8')
      return errorResponse(c, { kind: 'invalid_query', message: 'request body is not valid UTF-8' });
    const nowNs = tails.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
    const request = parseTailRequest(
      c.req.header('content-type'),
      body.text,
      c.req.queries(SINCE_PARAM) ?? [],
      nowNs(),
    );
    if (!request.ok) return errorResponse(c, { kind: 'invalid_query', message: request.error });
    const outgoing: ServerResponse | undefined = c.env?.outgoing;
    if (outgoing === undefined) return errorResponse(c, { kind: 'internal', message: 'live tail needs a socket' });
    const slot = tails.registry.open(admitted.value.tenant);
    if (!slot.ok) return errorResponse(c, slot.error);
    await runTailSession({
      service: options.service,
      log: tails.log,
      tenant: admitted.value.tenant,
      request: request.value,
      slot: slot.value,
      outgoing,
      maxTailMs: tails.maxTailMs,
      maxTailBufferBytes: tails.maxTailBufferBytes,
      pollMs: tails.pollMs,
      nowNs,
      ...(tails.lingerMs !== undefined ? { lingerMs: tails.lingerMs } : {}),
      ...(tails.hooks !== undefined ? { hooks: tails.hooks } : {}),
    });
    return RESPONSE_ALREADY_SENT;
  });

  app.all('/mcp', async (c) => {
    if (!options.mcpEnabled) return c.text('not found\n', 404);
    const admitted = admit(c, 'mcp');
    if (!admitted.ok) return refusalResponse(c, access, admitted.error);
    return handleMcpRequest(c.req.raw, admitted.value, {
      service: options.service,
      maxRows: options.maxRows,
      version: options.version,
      access,
      cancellations,
    });
  });

  if (options.loki !== undefined) {
    registerLokiRoutes(app, { ...options.loki, service: options.service, access, version: options.version });
  }

  app.notFound((c) => c.text('not found\n', 404));
  app.onError((_error, c) => errorResponse(c, { kind: 'internal', message: 'internal error' }));
  return app;
}
