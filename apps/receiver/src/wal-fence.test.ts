/**
 * The receiver over a WAL whose fdatasync fails (EIO injected through the WAL's file port): the export it covered
 * is answered 503 + Retry-After, the next ones 503 (HTTP) and UNAVAILABLE (gRPC) at once, `/readyz` answers 503
 * naming the fence while `/healthz` stays 200, the fence is reported once — and once the WAL resumes (no restart),
 * exports are acknowledged again and the WAL holds exactly the acknowledged ones (docs/design/wal.md).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, Client, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import type { LogRecord, Probes } from '@sluice/core';
import { parseConfig } from '@sluice/config';
import { createAccessGate, createConnectionCap } from '@sluice/edge';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { decodeWalExport } from '@sluice/sink';
import { readWal, segmentFileName, type WalFencedEvent, type WalResumedEvent } from '@sluice/wal';
import { FaultPort } from '@sluice/wal/testing';
import { startReceiver, type Receiver } from './create-receiver.js';

const record = (body: string): LogRecord => ({
  timeUnixNano: 1_767_225_600_000_000_000n,
  observedTimeUnixNano: 0n,
  severityNumber: 9,
  severityText: 'INFO',
  body: { kind: 'string', value: body },
  attributes: [],
  droppedAttributesCount: 0,
  flags: 0,
  traceId: new Uint8Array(0),
  spanId: new Uint8Array(0),
  eventName: '',
  resource: { attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
  scope: { name: '', version: '', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
});
const exportOf = (body: string): Buffer => Buffer.from(encodeLogsProtobuf([record(body)]));

const dir = mkdtempSync(join(tmpdir(), 'sluice-wal-fence-'));
const walDir = join(dir, 'wal');
const port = new FaultPort();
const fenced: WalFencedEvent[] = [];
const resumed: WalResumedEvent[] = [];
let receiver: Receiver;
let grpc: Client;

before(async () => {
  const parsed = parseConfig({
    fileText: `storage:
  backend: local
  local:
    root: ${JSON.stringify(join(dir, 'data'))}
receiver:
  grpc_addr: 127.0.0.1:0
  http_addr: 127.0.0.1:0
  wal_dir: ${JSON.stringify(walDir)}
  wal:
    group_commit_ms: 5
querier:
  enabled: false
tenancy:
  default_tenant: t
`,
    env: {},
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.error));
  const probes: Probes = {
    notReadyReason: () => receiver.notReadyReason(),
    metricsText: () => Promise.resolve(null),
  };
  const cap = (listener: 'otlp_http' | 'otlp_grpc') =>
    createConnectionCap({
      cap: {
        listener,
        key: `receiver.max_${listener.slice(5)}_connections`,
        maxConnections: 16,
        refusalSlots: 4,
        source: 'explicit',
      },
    });
  receiver = await startReceiver(parsed.value, {
    probes,
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: 't' },
      protectMetrics: false,
    }),
    connectionCaps: { http: cap('otlp_http'), grpc: cap('otlp_grpc') },
    sinkCeilingBytes: 64 * 1024 * 1024,
    walFilePort: port,
    walObserver: { fenced: (e) => fenced.push(e), resumed: (e) => resumed.push(e) },
  });
  await receiver.whenReplayed();
  grpc = new Client(`127.0.0.1:${receiver.grpcPort}`, credentials.createInsecure());
});

after(async () => {
  grpc.close();
  await receiver.stop();
  rmSync(dir, { recursive: true, force: true });
});

function http(
  method: string,
  path: string,
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: receiver.httpAddress.port,
        method,
        path,
        headers: { 'content-type': 'application/x-protobuf' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function grpcExport(body: Buffer): Promise<GrpcStatus> {
  return new Promise((resolve) => {
    grpc.makeUnaryRequest(
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      new Metadata(),
      { deadline: Date.now() + 5000 },
      (error: ServiceError | null) => resolve(error === null ? GrpcStatus.OK : error.code),
    );
  });
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('EIO on the WAL fdatasync: 503 + Retry-After and UNAVAILABLE while fenced, /readyz 503 naming the fence, then acknowledged again without a restart', async () => {
  assert.equal((await http('POST', '/v1/logs', exportOf('before'))).status, 200);

  port.inject({ op: 'fdatasync', errno: 'EIO' });
  const covered = await http('POST', '/v1/logs', exportOf('lost-to-eio'));
  assert.equal(covered.status, 503, covered.text);
  assert.equal(covered.headers['retry-after'], '1');
  assert.equal(port.pendingFaults(), 0);

  const refused = await http('POST', '/v1/logs', exportOf('refused-http'));
  assert.equal(refused.status, 503);
  assert.equal(refused.headers['retry-after'], '1');
  assert.doesNotMatch(refused.text, /EIO|injected|\.wal/, 'no file-system text reaches the client');
  assert.equal(await grpcExport(exportOf('refused-grpc')), GrpcStatus.UNAVAILABLE);

  const ready = await http('GET', '/readyz');
  assert.equal(ready.status, 503);
  assert.match(ready.text, /write-ahead log is fenced after EIO .*receiver\.wal\.fence_retry_ms/);
  assert.equal((await http('GET', '/healthz')).status, 200, 'liveness stays up: the WAL resumes by itself');
  await until(() => fenced.length === 1);
  assert.equal(fenced[0]!.error.errno, 'EIO');
  assert.equal(fenced[0]!.cut, true);

  await until(async () => (await http('GET', '/readyz')).status === 200);
  assert.equal(resumed.length, 1);
  assert.equal((await http('POST', '/v1/logs', exportOf('after-http'))).status, 200);
  assert.equal(await grpcExport(exportOf('after-grpc')), GrpcStatus.OK);

  // The WAL holds exactly the acknowledged exports, in order (the cut removed the one the failed sync covered).
  const segment = join(walDir, segmentFileName(1));
  const bodies: string[] = [];
  for await (const e of readWal(walDir, null, { segment: 1, offset: statSync(segment).size })) {
    bodies.push(Buffer.from(decodeWalExport(e.payload).body).toString('latin1'));
  }
  const labels = ['before', 'lost-to-eio', 'refused-http', 'refused-grpc', 'after-http', 'after-grpc'];
  assert.deepEqual(
    bodies.map((b) => labels.find((l) => b.includes(l))),
    ['before', 'after-http', 'after-grpc'],
  );
});
