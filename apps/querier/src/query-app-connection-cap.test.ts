/**
 * The query listener at its connection cap (`querier.max_connections`), over real sockets: a connection past the
 * cap gets `503 too_many_connections` naming the key, with `Retry-After` and `Connection: close`, while the
 * probes are still answered on it; connections within the cap are served normally.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createAccessGate, createConnectionCap } from '@sluice/edge';
import { createQueryApp } from './query-app.js';

let server: ServerType;
let port: number;
const cap = createConnectionCap({
  cap: {
    listener: 'query_http',
    key: 'querier.max_connections',
    maxConnections: 1,
    refusalSlots: 4,
    source: 'explicit',
  },
});

before(async () => {
  const app = createQueryApp({
    service: { run: () => Promise.reject(new Error('not reached')) },
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve('sluice_up 1\n') },
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: 'd' },
      protectMetrics: true,
    }),
    connectionCap: cap,
    mcpEnabled: true,
    maxRows: 10,
    version: 'test',
  });
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    cap.attach(s as Server);
  });
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  await new Promise<void>((resolve) => {
    (server as Server).closeAllConnections();
    server.close(() => resolve());
  });
});

function exchange(socket: Socket, request: string): Promise<{ head: string; body: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    const done = (closed: boolean): void => {
      const at = text.indexOf('\r\n\r\n');
      resolve({ head: text.slice(0, at), body: text.slice(at + 4), closed });
    };
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.once('close', () => done(true));
    socket.write(request);
  });
}

async function open(): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  return s;
}

test('past querier.max_connections: 503 too_many_connections with Retry-After and close; probes still answered', async () => {
  const held = await open();
  for (let i = 0; i < 100 && cap.served() < 1; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(cap.served(), 1);

  const probe = await exchange(await open(), 'GET /healthz HTTP/1.1\r\nHost: q\r\n\r\n');
  assert.match(probe.head, /^HTTP\/1\.1 200 /);
  assert.match(probe.head, /\r\nconnection: close/i);
  assert.equal(probe.closed, true);

  const body = JSON.stringify({ query: 'true' });
  const refused = await exchange(
    await open(),
    `POST /v1/query HTTP/1.1\r\nHost: q\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  assert.match(refused.head, /^HTTP\/1\.1 503 /);
  assert.match(refused.head, /\r\nretry-after: 1/i);
  assert.match(refused.head, /\r\nconnection: close/i);
  assert.equal(refused.closed, true);
  const error = (JSON.parse(refused.body) as { error: { kind: string; message: string } }).error;
  assert.equal(error.kind, 'too_many_connections');
  assert.match(error.message, /querier\.max_connections = 1/);

  const served = exchange(held, 'GET /readyz HTTP/1.1\r\nHost: q\r\nConnection: close\r\n\r\n');
  assert.match((await served).head, /^HTTP\/1\.1 200 /, 'the connection within the cap is served');
});
