/**
 * @module connection-cap
 * Caps the open connections of one listener (see connection-budget.ts for the sizes). Up to `maxConnections`
 * connections are served. A connection past that is *refused*: it is marked ({@link ConnectionCap.isRefused}) so
 * the listener answers its first request with a clean "busy, retry" and closes it, and it is closed outright if
 * it sends nothing within a short grace. Past `maxConnections + refusalSlots`, Node closes new connections at
 * accept (`server.maxConnections`), so a flood costs at most that many file handles.
 *
 * On an HTTP listener at its cap, idle keep-alive connections are closed (at most once a second): a client holding
 * connections it does not use cannot keep the listener full, and well-behaved clients reconnect transparently.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import type { ListenerCap } from './connection-budget.js';

/** How a connection over the cap was refused. */
export type RefusalKind =
  /** Held in a refusal slot: its first request is answered "busy, retry" (or it is closed after the grace). */
  | 'answered'
  /** No refusal slot was free: closed at accept without an answer. */
  | 'dropped';

/** Options for {@link createConnectionCap}. */
export interface ConnectionCapOptions {
  readonly cap: ListenerCap;
  /** How long a refused connection may take to send its request before it is closed, ms (default 2000). */
  readonly refusalGraceMs?: number;
  /**
   * False for a protocol with no cheap "busy" answer before its handshake (gRPC over HTTP/2): every connection
   * over the cap is closed at accept, and no refusal slots are used. Default true.
   */
  readonly answersRefusals?: boolean;
  /** Called for every refused connection (metrics, rate-limited logs). */
  readonly onRefused?: (cap: ListenerCap, how: RefusalKind) => void;
}

/** A listener's connection cap. */
export interface ConnectionCap {
  readonly cap: ListenerCap;
  /**
   * Starts counting `server`'s connections. Call before adding the listener's own `connection` handlers that
   * consult {@link isRefused}.
   */
  attach(server: NetServer | HttpServer): void;
  /** True for a connection that arrived over the cap: answer "busy, retry" (or close it) instead of serving it. */
  isRefused(socket: Socket): boolean;
  /** Connections being served now (refused ones not included). */
  served(): number;
}

const RECLAIM_INTERVAL_MS = 1000;

function isHttpServer(server: NetServer | HttpServer): server is HttpServer {
  return typeof (server as HttpServer).closeIdleConnections === 'function';
}

/** Creates a cap; {@link ConnectionCap.attach} it to the listener's server. */
export function createConnectionCap(options: ConnectionCapOptions): ConnectionCap {
  const { cap } = options;
  const grace = options.refusalGraceMs ?? 2000;
  const answers = options.answersRefusals ?? true;
  const refused = new WeakSet<Socket>();
  let served = 0;
  let lastReclaim = -Infinity;
  return {
    cap,
    attach(server) {
      server.maxConnections = answers ? cap.maxConnections + cap.refusalSlots : cap.maxConnections;
      server.on('drop', () => options.onRefused?.(cap, 'dropped'));
      server.on('connection', (socket: Socket) => {
        if (served < cap.maxConnections) {
          served++;
          socket.once('close', () => served--);
          return;
        }
        refused.add(socket);
        if (!answers) {
          // Unreachable while maxConnections holds (Node drops at accept); kept for a server that bypasses it.
          socket.destroy();
          options.onRefused?.(cap, 'dropped');
          return;
        }
        options.onRefused?.(cap, 'answered');
        const timer = setTimeout(() => socket.destroy(), grace);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
        const now = performance.now();
        if (isHttpServer(server) && now - lastReclaim >= RECLAIM_INTERVAL_MS) {
          lastReclaim = now;
          server.closeIdleConnections();
        }
      });
    },
    isRefused: (socket) => refused.has(socket),
    served: () => served,
  };
}
