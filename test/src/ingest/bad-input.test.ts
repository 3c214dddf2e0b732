/**
 * Bad input never gets acknowledged, always gets the right 4xx / gRPC code with a specific message, does not
 * stop the server, and leaves nothing half-written in storage.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { credentials, Client, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { post, rpcStatusMessage } from '../helpers/http-client.js';
import { makeRecords } from '../helpers/records.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { readStoredRows, listStoreFiles } from '../helpers/read-store.js';
import { testConfigYaml } from '../helpers/test-config.js';

const PROTO = { 'content-type': 'application/x-protobuf' };
const JSON_CT = { 'content-type': 'application/json' };

function grpcExport(address: string, body: Buffer, tenant?: string): Promise<{ code: number; details: string }> {
  const client = new Client(address, credentials.createInsecure());
  const metadata = new Metadata();
  if (tenant !== undefined) metadata.set('x-sluice-tenant', tenant);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/opentelemetry.proto.collector.logs.v1.LogsService/Export',
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (error: ServiceError | null) => {
        client.close();
        resolve(error === null ? { code: 0, details: '' } : { code: error.code, details: error.details });
      },
    );
  });
}

describe('bad input', () => {
  let server: SluiceProcess;
  const dir = tempDir('bad-input');
  const dataDir = join(dir, 'data');
  const valid = Buffer.from(encodeLogsProtobuf(makeRecords(3, { tag: 'good' })));

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir,
        defaultTenant: null,
        maxRequestBytes: 1 << 20,
        maxDecompressedBytes: 4 << 20,
        flushAgeSecs: 600,
      }),
      { dir },
    );
    await server.waitReady();
  });
  after(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  const url = (): string => `${server.otlpHttpUrl}/v1/logs`;
  const withTenant = (h: Record<string, string>): Record<string, string> => ({ ...h, 'x-sluice-tenant': 'acme' });

  test('truncated protobuf is 400 with a message naming the truncation', async () => {
    const res = await post(url(), valid.subarray(0, valid.length - 7), withTenant(PROTO));
    assert.equal(res.status, 400);
    assert.match(rpcStatusMessage(res.body), /truncat/i);
  });

  test('a wrong wire type for a known field is 400 naming the wire type', async () => {
    // field 1 (resource_logs) sent as a varint instead of length-delimited
    const res = await post(url(), Buffer.from([0x08, 0x01]), withTenant(PROTO));
    assert.equal(res.status, 400);
    assert.match(rpcStatusMessage(res.body), /wire type/i);
  });

  test('invalid JSON is 400 without parser internals', async () => {
    const res = await post(url(), Buffer.from('{"resourceLogs": [ {'), withTenant(JSON_CT));
    assert.equal(res.status, 400);
    const message = (JSON.parse(res.body.toString('utf8')) as { message: string }).message;
    assert.match(message, /not valid JSON/);
    assert.doesNotMatch(message, /Unexpected|position \d+|SyntaxError/);
  });

  test('corrupt gzip is 400', async () => {
    const gz = gzipSync(valid);
    // Damage the deflate stream so inflate fails.
    for (let i = 12; i < 20; i++) gz[i] = gz[i]! ^ 0x55;
    const res = await post(url(), gz, withTenant({ ...PROTO, 'content-encoding': 'gzip' }));
    assert.equal(res.status, 400);
    assert.match(rpcStatusMessage(res.body), /gzip/);
  });

  test('a gzip bomb is 413 on the decompressed-size cap', async () => {
    const bomb = gzipSync(Buffer.alloc(64 << 20));
    assert.ok(bomb.length < 1 << 20, 'the bomb itself is under the wire cap');
    const res = await post(url(), bomb, withTenant({ ...PROTO, 'content-encoding': 'gzip' }), { chunked: true });
    assert.equal(res.status, 413);
    assert.match(rpcStatusMessage(res.body), /max_decompressed_bytes/);
  });

  test('an oversized body with Content-Length is 413 before reading and closes the connection', async () => {
    const res = await post(url(), Buffer.alloc(3 << 20), withTenant(PROTO));
    assert.equal(res.status, 413);
    assert.equal(res.headers.connection, 'close');
    assert.match(rpcStatusMessage(res.body), /max_request_bytes/);
  });

  test('an oversized chunked body is 413 while reading and closes the connection', async () => {
    const res = await post(url(), Buffer.alloc(3 << 20), withTenant(PROTO), { chunked: true });
    assert.equal(res.status, 413);
    assert.equal(res.headers.connection, 'close');
  });

  test('a missing tenant header (no default tenant) is 400', async () => {
    const res = await post(url(), valid, PROTO);
    assert.equal(res.status, 400);
    assert.match(rpcStatusMessage(res.body), /X-Sluice-Tenant/);
  });

  test('a tenant that breaks the grammar is 400', async () => {
    const res = await post(url(), valid, { ...PROTO, 'x-sluice-tenant': 'a/b' });
    assert.equal(res.status, 400);
    assert.match(rpcStatusMessage(res.body), /tenant/);
  });

  test('an unsupported media type is 415', async () => {
    const res = await post(url(), valid, withTenant({ 'content-type': 'text/plain' }));
    assert.equal(res.status, 415);
  });

  test('gRPC: truncated protobuf is INVALID_ARGUMENT, a bad tenant is INVALID_ARGUMENT, oversized is RESOURCE_EXHAUSTED', async () => {
    const truncated = await grpcExport(server.otlpGrpcAddress, valid.subarray(0, valid.length - 7), 'acme');
    assert.equal(truncated.code, GrpcStatus.INVALID_ARGUMENT);
    assert.match(truncated.details, /truncat/i);
    const badTenant = await grpcExport(server.otlpGrpcAddress, valid, 'x#y');
    assert.equal(badTenant.code, GrpcStatus.INVALID_ARGUMENT);
    const missing = await grpcExport(server.otlpGrpcAddress, valid);
    assert.equal(missing.code, GrpcStatus.INVALID_ARGUMENT);
    const huge = await grpcExport(server.otlpGrpcAddress, Buffer.alloc(5 << 20), 'acme');
    assert.equal(huge.code, GrpcStatus.RESOURCE_EXHAUSTED);
  });

  test('after all that the server still acknowledges a good export, and storage holds exactly the good records', async () => {
    const ok = await post(url(), valid, withTenant(PROTO));
    assert.equal(ok.status, 200);
    const grpcOk = await grpcExport(server.otlpGrpcAddress, valid, 'acme');
    assert.equal(grpcOk.code, 0);
    const exit = await server.stop();
    assert.equal(exit.code, 0);
    const rows = await readStoredRows({ backend: 'local', root: dataDir });
    assert.equal(rows.length, 6);
    for (const row of rows) {
      assert.equal(row.tenantId, 'acme');
      assert.ok(row.record.attributes.some((kv) => kv.key === 'tag'));
    }
    const files = await listStoreFiles({ backend: 'local', root: dataDir });
    assert.ok(
      files.every((f) => f.endsWith('.parquet')),
      `only published Parquet files: ${files.join(', ')}`,
    );
  });
});
