/**
 * @module request-drain
 * Counts the requests a querier listener is answering, so its stop can close every connection once none is left.
 * Node's `closeIdleConnections` closes kept-alive connections between requests, but not a connection that a client
 * opened and never sent a request on (some clients open a spare one after aborting a response): Node counts those
 * as active until the headers timeout, and they would hold a stop for the whole `shutdown_timeout_secs`.
 */
import type { Server as HttpServer } from 'node:http';

/** A listener's requests in flight. */
export interface RequestDrain {
  /** Requests whose response has not yet finished or closed. */
  inFlight(): number;
  /** Resolves once no request is in flight (at once when none is). */
  drained(): Promise<void>;
}

/** Starts counting `server`'s requests. */
export function trackRequests(server: HttpServer): RequestDrain {
  let inFlight = 0;
  let waiters: (() => void)[] = [];
  server.on('request', (_req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) {
        const w = waiters;
        waiters = [];
        for (const resolve of w) resolve();
      }
    });
  });
  return {
    inFlight: () => inFlight,
    drained: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
  };
}
