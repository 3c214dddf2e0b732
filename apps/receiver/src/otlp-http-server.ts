/**
 * @module otlp-http-server
 * OTLP/HTTP `POST /v1/logs` (protobuf and JSON, identity or gzip) on node:http, plus the probe endpoints.
 * node:http rather than a framework: the 413 path must stop reading and close the socket at once, which a
 * framework's keep-alive drain would defeat.
 *
 * Order of checks (docs/security.md): connection cap (503), the access gate — token (401), tenant (400), token's
 * tenant set (403) — before the body is read, then media type (415), body caps (413), decode (400), WAL.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertNever } from '@sluice/core';
import type { AccessGate, AccessRefusal, ConnectionCap } from '@sluice/edge';
import { encodeExportLogsResponse, encodeRpcStatus } from '@sluice/otlp';
import { readBody, type BodyLimits } from './body-reader.js';
import { httpStatusFor } from './http-status.js';
import type { IngestOutcome, OtlpEncoding } from './ingest-outcome.js';
import type { IngestService } from './ingest-service.js';
import { HTTP_KEEP_ALIVE_TIMEOUT_MS, type Probes } from '@sluice/core';
import { serveProbe } from './probes.js';

/** Options for {@link createOtlpHttpServer}. */
export interface OtlpHttpServerOptions {
  readonly ingest: IngestService;
  readonly limits: BodyLimits;
  /** Token and tenant rule (the tenant header is matched case-insensitively). */
  readonly access: AccessGate;
  /** This listener's connection cap (`receiver.max_http_connections`). */
  readonly connectionCap: ConnectionCap;
  readonly probes: Probes;
}

/** A started-or-startable OTLP/HTTP listener. */
export interface OtlpHttpServer {
  listen(host: string, port: number): Promise<AddressInfo>;
  /** Stops accepting, waits for in-flight exports (their WAL appends), then closes idle sockets. */
  close(): Promise<void>;
}

function mediaType(req: IncomingMessage): OtlpEncoding | null {
  const raw = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (raw === 'application/x-protobuf') return 'protobuf';
  if (raw === 'application/json') return 'json';
  return null;
}

function respond(
  res: ServerResponse,
  encoding: OtlpEncoding,
  outcome: IngestOutcome,
  forceClose = false,
  challenge = '',
): void {
  const mapped = httpStatusFor(outcome);
  const status = mapped.status;
  const close = mapped.close || forceClose;
  const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
  const headers: Record<string, string> = { 'content-type': contentType };
  if (close) headers.connection = 'close';
  if (outcome.status === 'unavailable' || outcome.status === 'disk_low') {
    headers['retry-after'] = String(outcome.retryAfterSecs);
  }
  if (outcome.status === 'unauthenticated') headers['www-authenticate'] = challenge;
  const body =
    outcome.status === 'accepted'
      ? encodeExportLogsResponse(encoding)
      : encodeRpcStatus(encoding, grpcCodeHint(status), outcome.message);
  // node's HTTP server calls socket.destroySoon() once a `Connection: close` response has finished; make that a
  // lingering close instead (see below).
  if (close) res.req.socket.destroySoon = () => lingeringClose(res.req);
  res.writeHead(status, headers);
  res.end(body);
}

/** How long, and how many bytes, a refused upload is discarded before its socket is destroyed. */
const LINGER_MS = 1000;
const LINGER_BYTES = 4 * 1024 * 1024;

/**
 * Closes the connection of a refused request without losing the response: half-close (FIN after the 413), then
 * discard what the client is still uploading for a short, bounded time. Destroying at once would make the
 * kernel answer the unread upload with a reset that can wipe the response from the client's buffer.
 */
function lingeringClose(req: IncomingMessage): void {
  const socket = req.socket;
  if (socket.destroyed) return;
  socket.end();
  let discarded = 0;
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) socket.destroy();
  });
  socket.once('close', () => clearTimeout(timer));
  req.resume();
}

/** google.rpc.Status code carried in an HTTP error body (INVALID_ARGUMENT, UNAVAILABLE, …). */
function grpcCodeHint(httpStatus: number): number {
  if (httpStatus === 503) return 14;
  if (httpStatus === 413) return 8;
  if (httpStatus === 401) return 16;
  if (httpStatus === 403) return 7;
  return 3;
}

/** The gate's refusal as an ingest outcome. */
function refusalOutcome(refusal: AccessRefusal): IngestOutcome {
  switch (refusal.kind) {
    case 'unauthenticated':
      return { status: 'unauthenticated', message: refusal.message };
    case 'missing_tenant':
    case 'invalid_tenant':
      return { status: 'bad_tenant', message: refusal.message };
    case 'tenant_denied':
      return { status: 'tenant_denied', message: refusal.message };
    default:
      return assertNever(refusal, 'access refusal');
  }
}

/** Creates the OTLP/HTTP listener. */
export function createOtlpHttpServer(options: OtlpHttpServerOptions): OtlpHttpServer {
  const { access, connectionCap } = options;
  const headerKey = access.tenantHeader.toLowerCase();
  let inFlight = 0;
  let drained: (() => void) | null = null;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const encodingHint = mediaType(req) ?? 'json';
    const path = (req.url ?? '/').split('?')[0];
    if (connectionCap.isRefused(req.socket)) {
      // Over the cap: answer and close. Probes are still answered, so a flood does not fail liveness checks.
      res.setHeader('connection', 'close');
      if (serveProbe(req, res, options.probes, access)) return;
      const { key, maxConnections } = connectionCap.cap;
      const outcome = options.ingest.refuse(encodingHint === 'json' ? 'http_json' : 'http_protobuf', {
        status: 'unavailable',
        message: `too many open connections to this listener (${key} = ${maxConnections}); retry`,
        retryAfterSecs: 1,
      });
      respond(res, encodingHint, outcome, true);
      return;
    }
    if (serveProbe(req, res, options.probes, access)) return;
    if (path !== '/v1/logs') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('method not allowed: use POST\n');
      return;
    }
    // The gate runs before the body is read: an unauthenticated client gets nothing decoded or buffered.
    // headersDistinct keeps a repeated header as several values (plain `headers` would join them with ", ").
    const admitted = access.admit('ingest', {
      authorization: req.headersDistinct['authorization'] ?? [],
      tenant: req.headersDistinct[headerKey] ?? [],
    });
    if (!admitted.ok) {
      const outcome = options.ingest.refuse(
        encodingHint === 'json' ? 'http_json' : 'http_protobuf',
        refusalOutcome(admitted.error),
      );
      // The body was not read: close so a keep-alive connection is not left mid-body.
      respond(res, encodingHint, outcome, true, access.challenge);
      return;
    }
    const encoding = mediaType(req);
    const contentEncoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding === null || (contentEncoding !== 'identity' && contentEncoding !== 'gzip')) {
      const message =
        encoding === null
          ? 'unsupported Content-Type: use application/x-protobuf or application/json'
          : 'unsupported Content-Encoding: use gzip or none';
      const outcome = options.ingest.refuse(encoding === 'json' ? 'http_json' : 'http_protobuf', {
        status: 'unsupported_media_type',
        message,
      });
      // The body was not read: close so a keep-alive connection is not left mid-body.
      respond(res, encoding ?? 'json', outcome, true);
      return;
    }
    const protocol = encoding === 'json' ? 'http_json' : 'http_protobuf';
    const body = await readBody(req, contentEncoding === 'gzip', options.limits);
    if (body.status === 'aborted') return;
    if (body.status !== 'ok') {
      respond(res, encoding, options.ingest.refuse(protocol, body));
      return;
    }
    const outcome = await options.ingest.ingest(protocol, admitted.value.tenant, body.body);
    respond(res, encoding, outcome);
  };

  const server: Server = createServer(
    { requestTimeout: 60_000, keepAliveTimeout: HTTP_KEEP_ALIVE_TIMEOUT_MS },
    (req, res) => {
      inFlight++;
      handle(req, res)
        .catch(() => {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
        })
        .finally(() => {
          inFlight--;
          if (inFlight === 0 && drained !== null) drained();
        });
    },
  );
  connectionCap.attach(server);
  server.on('connection', (socket) => socket.setNoDelay(true));

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      server.closeIdleConnections();
      // Keep-alive sockets that a client holds open are idle now; anything left is closed outright.
      const force = setTimeout(() => server.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(force);
    },
  };
}
