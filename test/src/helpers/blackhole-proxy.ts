/**
 * @module blackhole-proxy
 * A loopback TCP proxy in front of a real server (s3rver) that can stop answering: in `blackhole` mode it accepts
 * connections and reads what is sent, but never forwards it and never answers — an endpoint that is up at the
 * TCP level and silent above it, the hardest outage for a client to notice. In `delay` mode it forwards each
 * new connection after a pause. Connections made while open keep flowing when the mode changes, except that
 * `blackhole` also freezes them (nothing is forwarded either way), so a client mid-request hangs like on a real
 * network partition.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** What the proxy does with traffic. */
export type ProxyMode =
  { readonly kind: 'open' } | { readonly kind: 'blackhole' } | { readonly kind: 'delay'; readonly ms: number };

/** A running proxy. */
export interface BlackholeProxy {
  /** e.g. `http://127.0.0.1:40123` */
  readonly endpoint: string;
  set(mode: ProxyMode): void;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a proxy on a free 127.0.0.1 port forwarding to `target` (`http://127.0.0.1:port`). */
export async function startBlackholeProxy(target: string): Promise<BlackholeProxy> {
  const url = new URL(target);
  let mode: ProxyMode = { kind: 'open' };
  let accepted = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const server: Server = createServer((client) => {
    accepted++;
    track(client);
    if (mode.kind === 'blackhole') {
      // Read and drop: the client's request is "sent", the answer never comes.
      client.on('data', () => undefined);
      return;
    }
    const connect = (): void => {
      if (client.destroyed) return;
      const upstream = createConnection({ host: url.hostname, port: Number(url.port) });
      track(upstream);
      const forward = (from: Socket, to: Socket) => (chunk: Buffer) => {
        if (mode.kind === 'blackhole') return; // frozen: nothing passes either way
        to.write(chunk);
      };
      client.on('data', forward(client, upstream));
      upstream.on('data', forward(upstream, client));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    };
    if (mode.kind === 'delay') setTimeout(connect, mode.ms);
    else connect();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    set(next) {
      mode = next;
    },
    connections: () => accepted,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
