/**
 * @module query-app
 * The querier's HTTP surface (hono): `POST /v1/query` with the reference's body modes and shapes, `/mcp`
 * (streamable HTTP, stateless), and the probe endpoints. The status is committed only once the whole body is
 * known; the admission permit and the body's reservation are held until the response has been sent (or the
 * client went away).
 */
import type { ServerResponse } from 'node:http';
import { Hono, type Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Probes } from '@sluice/core';
import { parseRequestBody } from '@sluice/query';
import { createMcpServer } from './mcp-server.js';
import { errorEnvelope, httpStatusFor, type QueryError } from './query-error.js';
import type { QueryService } from './query-service.js';
import { MAX_QUERY_BODY_BYTES, readLimitedBody } from './read-limited-body.js';
import { queryTenant } from './tenant.js';

/** Options for {@link createQueryApp}. */
export interface QueryAppOptions {
  readonly service: QueryService;
  readonly probes: Probes;
  readonly tenantHeader: string;
  readonly defaultTenant: string | null;
  readonly mcpEnabled: boolean;
  readonly maxRows: number;
  readonly version: string;
}

function errorResponse(c: Context, error: QueryError): Response {
  return c.body(errorEnvelope(error), httpStatusFor(error.kind), { 'content-type': 'application/json' });
}

/** Builds the hono app. */
export function createQueryApp(options: QueryAppOptions): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();

  app.get('/healthz', (c) => c.text('ok\n'));
  app.get('/readyz', (c) => {
    const reason = options.probes.notReadyReason();
    return reason === null ? c.text('ready\n') : c.text(`not ready: ${reason}\n`, 503);
  });
  app.get('/metrics', async (c) => {
    const text = await options.probes.metricsText();
    return text === null
      ? c.text('prometheus metrics are disabled\n', 404)
      : c.text(text, 200, { 'content-type': 'text/plain; version=0.0.4' });
  });

  app.post('/v1/query', async (c) => {
    const tenant = queryTenant(c.req.header(options.tenantHeader) ?? null, options.tenantHeader, options.defaultTenant);
    if (!tenant.ok) return errorResponse(c, tenant.error);
    const body = await readLimitedBody(c.req.raw);
    if (body.status === 'too_large') {
      return errorResponse(c, {
        kind: 'request_too_large',
        message: `request body exceeds ${MAX_QUERY_BODY_BYTES} bytes`,
      });
    }
    if (body.status === 'invalid_utf8')
      return errorResponse(c, { kind: 'invalid_query', message: 'request body is not valid UTF-8' });
    const parsed = parseRequestBody(c.req.header('content-type'), body.text);
    if (!parsed.ok) return errorResponse(c, { kind: 'invalid_query', message: parsed.error.message });
    const outcome = await options.service.run(tenant.value, { kind: 'query', query: parsed.value }, c.req.raw.signal);
    if (outcome.status === 'cancelled') return c.body(null, 499 as never);
    if (outcome.status === 'error') return errorResponse(c, outcome.error);
    const outgoing: ServerResponse | undefined = c.env?.outgoing;
    // 'finish': the body has been handed to the socket; 'close': the client went away first. done() is idempotent.
    if (outgoing !== undefined) {
      outgoing.once('finish', () => outcome.done());
      outgoing.once('close', () => outcome.done());
    } else {
      queueMicrotask(() => outcome.done());
    }
    return c.body(outcome.body as Uint8Array<ArrayBuffer>, 200, { 'content-type': 'application/json' });
  });

  app.all('/mcp', async (c) => {
    if (!options.mcpEnabled) return c.text('not found\n', 404);
    const server = createMcpServer(
      { service: options.service, maxRows: options.maxRows, version: options.version },
      c.req.raw.signal,
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_QUERY_BODY_BYTES,
    });
    await server.connect(transport);
    return transport.handleRequest(c.req.raw);
  });

  app.notFound((c) => c.text('not found\n', 404));
  app.onError((_error, c) => errorResponse(c, { kind: 'internal', message: 'internal error' }));
  return app;
}
