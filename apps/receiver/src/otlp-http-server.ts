/**
 * @module otlp-http-server
 * OTLP/HTTP `POST /v1/logs` (protobuf and JSON, identity or gzip) on node:http, plus the probe endpoints.
 * node:http rather than a framework: the 413 path must stop reading and close the socket at once, which a
 * framework's keep-alive drain would defeat.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  /** Header carrying the tenant (matched case-insensitively). */
  readonly tenantHeader: string;
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

function respond(res: ServerResponse, encoding: OtlpEncoding, outcome: IngestOutcome, forceClose = false): void {
  const mapped = httpStatusFor(outcome);
  const status = mapped.status;
  const close = mapped.close || forceClose;
  const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
  const headers: Record<string, string> = { 'content-type': contentType };
  if (close) headers.connection = 'close';
  if (outcome.status === 'unavailable') headers['retry-after'] = String(outcome.retryAfterSecs);
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
  return 3;
}

/** Creates the OTLP/HTTP listener. */
export function createOtlpHttpServer(options: OtlpHttpServerOptions): OtlpHttpServer {
  const headerKey = options.tenantHeader.toLowerCase();
  let inFlight = 0;
  let drained: (() => void) | null = null;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (serveProbe(req, res, options.probes)) return;
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/v1/logs') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'text/plain' }).end('method not allowed: use POST\n');
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
    // headersDistinct keeps a repeated header as several values (plain `headers` would join them with ", ").
    const tenantValues = req.headersDistinct[headerKey] ?? [];
    const outcome = await options.ingest.ingest(protocol, tenantValues, body.body);
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
