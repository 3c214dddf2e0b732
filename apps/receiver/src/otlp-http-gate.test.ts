/**
 * The OTLP/HTTP listener's edge, over real sockets with a recording ingest service: the connection cap
 * (`receiver.max_http_connections`) answers 503 + Retry-After naming the key (probes still answered), and the
 * access gate runs before the media type and the body — 401 before 415, a refusal never reaches the service.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { createAccessGate, createConnectionCap, hashToken } from '@sluice/edge';
import type { IngestOutcome } from './ingest-outcome.js';
import type { IngestService } from './ingest-service.js';
import { createOtlpHttpServer, type OtlpHttpServer } from './otlp-http-server.js';

const ingested: string[] = [];
const refused: IngestOutcome[] = [];
const ingest: IngestService = {
  ingest: (_protocol, tenant) => {
    ingested.push(tenant);
    return Promise.resolve({ status: 'accepted', records: 1 });
  },
  refuse: (_protocol, outcome) => {
    refused.push(outcome);
    return outcome;
  },
};
const cap = createConnectionCap({
  cap: {
    listener: 'otlp_http',
    key: 'receiver.max_http_connections',
    maxConnections: 1,
    refusalSlots: 4,
    source: 'explicit',
  },
});
let server: OtlpHttpServer;
let port: number;
const TOKEN = createHash('sha256').update('seed').digest('hex');

before(async () => {
  server = createOtlpHttpServer({
    ingest,
    limits: { maxRequestBytes: 1 << 20, maxDecompressedBytes: 1 << 20 },
    access: createAccessGate({
      tokens: {
        grants: [{ name: 'c', sha256: hashToken(TOKEN), tenants: new Set(['a']), surfaces: new Set(['ingest']) }],
      },
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: null },
      protectMetrics: true,
    }),
    connectionCap: cap,
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve('') },
  });
  port = (await server.listen('127.0.0.1', 0)).port;
});

after(() => server.close());

function exchange(socket: Socket, request: string): Promise<{ head: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      resolve({ head: text.slice(0, text.indexOf('\r\n\r\n')), closed });
    };
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => finish(true));
    socket.write(request);
  });
}

async function open(): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  return s;
}

const post = (headers: string): string =>
  `POST /v1/logs HTTP/1.1\r\nHost: r\r\n${headers}Content-Length: 4\r\n\r\nabcd`;

test('the gate runs before the media type and the body: 401, 400, 403 close the connection and never ingest', async () => {
  const cases: [string, RegExp][] = [
    ['Content-Type: text/plain\r\n', /^HTTP\/1\.1 401 [\s\S]*www-authenticate: Bearer realm="sluice"/i],
    [`Authorization: Bearer ${TOKEN}\r\nContent-Type: text/plain\r\n`, /^HTTP\/1\.1 400 /],
    [`Authorization: Bearer ${TOKEN}\r\nX-Sluice-Tenant: ab\r\nContent-Type: text/plain\r\n`, /^HTTP\/1\.1 403 /],
  ];
  for (const [headers, want] of cases) {
    for (let i = 0; i < 100 && cap.served() > 0; i++) await new Promise((r) => setTimeout(r, 5));
    const answer = await exchange(await open(), post(headers));
    assert.match(answer.head, want, headers);
    assert.equal(answer.closed, true, 'a refusal before the body closes the connection');
  }
  assert.deepEqual(
    refused.map((o) => o.status),
    ['unauthenticated', 'bad_tenant', 'tenant_denied'],
  );
  assert.deepEqual(ingested, []);
  refused.length = 0;
});

test('past receiver.max_http_connections: 503 + Retry-After naming the key; probes still answered', async () => {
  for (let i = 0; i < 100 && cap.served() > 0; i++) await new Promise((r) => setTimeout(r, 5));
  const held = await open();
  for (let i = 0; i < 100 && cap.served() < 1; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(cap.served(), 1);
  const probe = await exchange(await open(), 'GET /readyz HTTP/1.1\r\nHost: r\r\n\r\n');
  assert.match(probe.head, /^HTTP\/1\.1 200 /);
  assert.equal(probe.closed, true);
  const busy = await exchange(
    await open(),
    post(`Authorization: Bearer ${TOKEN}\r\nX-Sluice-Tenant: a\r\nContent-Type: application/x-protobuf\r\n`),
  );
  assert.match(busy.head, /^HTTP\/1\.1 503 /);
  assert.match(busy.head, /\r\nretry-after: 1/i);
  assert.equal(busy.closed, true);
  assert.deepEqual(refused, [
    {
      status: 'unavailable',
      message: 'too many open connections to this listener (receiver.max_http_connections = 1); retry',
      retryAfterSecs: 1,
    },
  ]);
  assert.deepEqual(ingested, []);
  held.destroy();
});
