/**
 * @module loki-tail
 * Loki's live tail, `GET /loki/api/v1/tail?query=…` over a websocket (docs/grafana.md, "Live tail"), run by the same
 * tail session as `POST /v1/tail` (docs/design/query-governance.md, "Live tail"): the same slot limit
 * (`max_live_tails`), the same reserved buffer, the same polls through the query service. The session writes
 * NDJSON to what it takes for an HTTP response; {@link tailOverWebSocket} is that response for a websocket: each
 * batch of records becomes one Loki tail message `{"streams":[…]}`, and the session's last line becomes the close
 * frame (`1000` with the reason it ended, `1011` with the error's message). The buffer bound counts the records'
 * NDJSON bytes, which the message about equals.
 *
 * Deviation: without `start`, a Loki tail first sends the last hour (up to `limit` lines); Sluice's starts now,
 * which is what Grafana's live view shows. An explicit `start` is honoured.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { parseJsonExact } from '@sluice/core';
import type { AccessGate } from '@sluice/edge';
import type { Logger } from '@sluice/telemetry';
import { httpStatusFor } from '../query-error.js';
import type { QueryService } from '../query-service.js';
import type { LiveTails } from '../live-tails.js';
import { runTailSession } from '../tail-session.js';
import { parseLokiTime } from './loki-params.js';
import type { JsonObject } from './loki-run.js';
import { planOf } from './loki-routes.js';
import { streamsOf } from './loki-streams.js';
import { acceptWebSocket, isWebSocketUpgrade, refuseUpgrade, type WebSocketConnection } from './websocket.js';

/** The path of the tail websocket. */
export const LOKI_TAIL_PATH = '/loki/api/v1/tail';

/** What the tail upgrade needs. */
export interface LokiTailOptions {
  readonly service: QueryService;
  readonly access: AccessGate;
  /** `querier.loki.tenant_header`. */
  readonly tenantHeader: string;
  readonly registry: LiveTails;
  readonly log: Logger;
  readonly maxTailMs: number;
  readonly maxTailBufferBytes: number;
  readonly pollMs: number;
  readonly nowNs?: () => bigint;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * The tail session's response, over a websocket: the members of `ServerResponse` the session uses, nothing else.
 */
class TailOverWebSocket extends EventEmitter {
  shouldKeepAlive = true;
  writableFinished = false;
  constructor(
    private readonly ws: WebSocketConnection,
    private readonly parsers: readonly ('json' | 'logfmt')[],
  ) {
    super();
    ws.onClose(() => this.emit('close'));
  }
  get destroyed(): boolean {
    return this.ws.closed;
  }
  writeHead(): this {
    return this;
  }
  flushHeaders(): void {}
  write(bytes: Uint8Array, cb?: () => void): boolean {
    const rows: JsonObject[] = [];
    for (const line of Buffer.from(bytes).toString('utf8').split('\n')) {
      if (line === '') continue;
      const parsed = parseJsonExact(line, { mode: 'json_parse' });
      if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value)) {
        rows.push(parsed.value as JsonObject);
      }
    }
    const message = JSON.stringify({ streams: streamsOf(rows, { categorize: false, parsers: this.parsers }) });
    return this.ws.send(message, cb);
  }
  end(line: Uint8Array, cb?: () => void): this {
    const parsed = parseJsonExact(Buffer.from(line).toString('utf8').trim(), { mode: 'json_parse' });
    const last = parsed.ok ? (parsed.value as JsonObject) : {};
    const error = last['error'] as JsonObject | undefined;
    if (error !== undefined) this.ws.close(1011, String(error['message'] ?? 'internal error'));
    else this.ws.close(1000, String(last['end'] ?? ''));
    setImmediate(() => {
      this.writableFinished = true;
      cb?.();
      this.emit('finish');
    });
    return this;
  }
  destroy(): this {
    this.ws.close(1001, '');
    return this;
  }
}

function headerList(req: IncomingMessage, name: string): readonly string[] {
  return req.headersDistinct[name.toLowerCase()] ?? [];
}

/** The `upgrade` listener of the query listener: the Loki tail, every other upgrade refused. */
export function createLokiTailUpgrade(o: LokiTailOptions): (req: IncomingMessage, socket: Duplex) => void {
  const nowNs = o.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  return (req, socket) => {
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== LOKI_TAIL_PATH) return refuseUpgrade(socket, 404, 'Not Found', 'not found\n');
    if (req.method !== 'GET' || !isWebSocketUpgrade(req)) {
      return refuseUpgrade(socket, 400, 'Bad Request', 'expected a websocket upgrade (version 13)\n');
    }
    const ours = headerList(req, o.access.tenantHeader);
    const theirs = headerList(req, o.tenantHeader);
    if (ours.length > 0 && theirs.length > 0 && ours.join(',').trim() !== theirs.join(',').trim()) {
      return refuseUpgrade(
        socket,
        400,
        'Bad Request',
        `${o.access.tenantHeader} and ${o.tenantHeader} name different tenants\n`,
      );
    }
    const admitted = o.access.admit('query', {
      authorization: headerList(req, 'authorization'),
      tenant: ours.length > 0 ? ours : theirs,
    });
    if (!admitted.ok) {
      const status = httpStatusFor(admitted.error.kind);
      const headers: Record<string, string> =
        admitted.error.kind === 'unauthenticated' ? { 'www-authenticate': o.access.challenge } : {};
      return refuseUpgrade(socket, status, REASONS[status] ?? 'Error', `${admitted.error.message}\n`, headers);
    }
    const plan = planOf(url.searchParams.get('query'));
    if (!plan.ok) {
      const message =
        plan.error.kind === 'query' ? plan.error.error.message : 'message' in plan.error ? plan.error.message : '';
      return refuseUpgrade(socket, 400, 'Bad Request', `${message}\n`);
    }
    if (plan.value.kind !== 'logs')
      return refuseUpgrade(socket, 400, 'Bad Request', 'a tail takes a log query, not a metric query\n');
    const now = nowNs();
    const start = parseLokiTime('start', url.searchParams.get('start'), now);
    if (!start.ok) return refuseUpgrade(socket, 400, 'Bad Request', `${start.error}\n`);
    const slot = o.registry.open(admitted.value.tenant);
    if (!slot.ok)
      return refuseUpgrade(socket, httpStatusFor(slot.error.kind), 'Service Unavailable', `${slot.error.message}\n`);
    const ws = acceptWebSocket(req, socket);
    const outgoing = new TailOverWebSocket(ws, plan.value.parsers);
    void runTailSession({
      service: o.service,
      log: o.log,
      tenant: admitted.value.tenant,
      request: { predicate: plan.value.predicate, sinceNs: start.value },
      slot: slot.value,
      // The session uses only the members TailOverWebSocket has (see its doc).
      outgoing: outgoing as unknown as ServerResponse,
      maxTailMs: o.maxTailMs,
      maxTailBufferBytes: o.maxTailBufferBytes,
      pollMs: o.pollMs,
      nowNs,
    });
  };
}
