/**
 * The OTLP/gRPC listener's connection cap (`receiver.max_grpc_connections`), with real grpc-js clients: the
 * listener is our node:net server feeding grpc-js's connection injector, a connection past the cap is closed at
 * accept (the client sees UNAVAILABLE, retryable), and a connection within the cap keeps being served. The
 * access gate reads the `authorization` metadata.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { credentials, Client, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { createAccessGate, createConnectionCap, type RefusalKind } from '@sluice/edge';
import type { IngestService } from './ingest-service.js';
import { createOtlpGrpcServer, type OtlpGrpcServer } from './otlp-grpc-server.js';

const tenants: string[] = [];
const ingest: IngestService = {
  ingest: (_p, tenant) => {
    tenants.push(tenant);
    return Promise.resolve({ status: 'accepted', records: 0 });
  },
  refuse: (_p, outcome) => outcome,
};
const refusals: RefusalKind[] = [];
const cap = createConnectionCap({
  cap: {
    listener: 'otlp_grpc',
    key: 'receiver.max_grpc_connections',
    maxConnections: 1,
    refusalSlots: 4,
    source: 'explicit',
  },
  answersRefusals: false,
  onRefused: (_c, how) => refusals.push(how),
});
let server: OtlpGrpcServer;
let address: string;

before(async () => {
  server = createOtlpGrpcServer({
    ingest,
    maxMessageBytes: 1 << 20,
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: 'd' },
      protectMetrics: true,
    }),
    connectionCap: cap,
  });
  address = `127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
});

after(() => server.close());

function call(client: Client, tenant: string): Promise<number> {
  const metadata = new Metadata();
  metadata.set('x-sluice-tenant', tenant);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      metadata,
      { deadline: Date.now() + 5000 },
      (error: ServiceError | null) => resolve(error === null ? GrpcStatus.OK : error.code),
    );
  });
}

test('past receiver.max_grpc_connections a connection is closed at accept (UNAVAILABLE); the one within is served', async () => {
  const first = new Client(address, credentials.createInsecure());
  // grpc-js shares one connection per address between clients unless told otherwise.
  const second = new Client(address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  try {
    assert.equal(await call(first, 'a'), GrpcStatus.OK);
    assert.equal(cap.served(), 1);
    assert.equal(await call(second, 'b'), GrpcStatus.UNAVAILABLE);
    assert.ok(refusals.length > 0 && refusals.every((r) => r === 'dropped'), JSON.stringify(refusals));
    assert.equal(await call(first, 'a'), GrpcStatus.OK, 'the connection within the cap keeps working');
    assert.deepEqual(tenants, ['a', 'a']);
  } finally {
    first.close();
    second.close();
  }
});
