/**
 * Real clients end to end: the official OTel JS SDK exporters (HTTP/JSON, HTTP/protobuf, gRPC; each with and
 * without gzip) export to a running `sluice serve`; after the flush, the Parquet files hold exactly those
 * records, DuckDB reads the same files and agrees, and the S3 backend (s3rver) stores the same contents.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { toHex } from '@sluice/core';
import { buildSdkRecords, createExporter, exportBatch, type ExporterKind, type TestLog } from '../helpers/otel-sdk.js';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { duckDbRows, readStoredRows, type StoreLocation, type StoredRowView } from '../helpers/read-store.js';
import { testConfigYaml } from '../helpers/test-config.js';

const KINDS: ExporterKind[] = ['http-json', 'http-proto', 'grpc'];
const PER_CLIENT = 40;
const BASE_NS = 1_767_229_200_123_456_789n; // 2026-01-01T01:00:00.123456789Z: above 2^53, sub-ms digits

function logsFor(client: number): TestLog[] {
  const logs: TestLog[] = [];
  for (let i = 0; i < PER_CLIENT; i++) {
    const seq = client * 1000 + i;
    const structured = i % 10 === 9;
    logs.push({
      body: structured
        ? { order: seq, items: ['a', 'b'], nested: { ok: true } }
        : `order ${seq} shipped to zone-${i % 3} in ${i * 7} ms ünïcode`,
      severityNumber: [5, 9, 13, 17, 21][i % 5]!,
      severityText: ['DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'][i % 5]!,
      attributes: { seq, 'http.route': `/orders/${i % 4}`, ratio: i + 0.25, flag: i % 2 === 0, tags: ['x', 'y'] },
      timeNs: BASE_NS + BigInt(seq) * 1_000_003n,
      observedNs: BASE_NS + BigInt(seq) * 1_000_003n + 999n,
      traceId: i % 7 === 0 ? null : (seq + 1).toString(16).padStart(32, '0'),
      spanId: i % 7 === 0 ? null : (seq + 1).toString(16).padStart(16, 'a'),
      ...(i % 5 === 0 ? { eventName: 'order.shipped' } : {}),
    });
  }
  return logs;
}

function attr(row: StoredRowView, key: string): unknown {
  const kv = row.record.attributes.find((a) => a.key === key);
  return kv === undefined ? undefined : kv.value;
}

function checkRow(
  row: StoredRowView,
  log: TestLog,
  client: { kind: ExporterKind; gzip: boolean; tenant: string },
): void {
  assert.equal(row.tenantId, client.tenant);
  assert.equal(row.record.timeUnixNano, log.timeNs, 'time_unix_nano exact to the ns');
  assert.equal(row.record.observedTimeUnixNano, log.observedNs);
  assert.equal(row.record.severityNumber, log.severityNumber);
  assert.equal(row.record.severityText, log.severityText);
  if (typeof log.body === 'string') assert.deepEqual(row.record.body, { kind: 'string', value: log.body });
  else assert.equal(row.record.body?.kind, 'kvlist');
  assert.equal(toHex(row.record.traceId), log.traceId ?? '');
  assert.equal(toHex(row.record.spanId), log.spanId ?? '');
  assert.equal(row.record.eventName, log.eventName ?? '');
  assert.deepEqual(attr(row, 'http.route'), { kind: 'string', value: log.attributes['http.route'] as string });
  assert.deepEqual(attr(row, 'ratio'), { kind: 'double', value: log.attributes.ratio as number });
  assert.deepEqual(attr(row, 'flag'), { kind: 'bool', value: log.attributes.flag as boolean });
  assert.equal((attr(row, 'tags') as { kind: string }).kind, 'array');
  const service = row.record.resource.attributes.find((a) => a.key === 'service.name');
  assert.deepEqual(service?.value, { kind: 'string', value: `svc-${client.kind}` });
  assert.equal(row.record.scope.name, 'e2e-scope');
  assert.equal(row.record.scope.version, client.gzip ? '2.0.0-gz' : '2.0.0');
}

for (const backend of ['local', 's3'] as const) {
  describe(`real OTel SDK exporters → sluice serve → Parquet on ${backend}`, () => {
    let s3: TestS3Server | undefined;
    let server: SluiceProcess;
    const dir = tempDir(`exporters-${backend}`);
    let location: StoreLocation;
    const clients: { kind: ExporterKind; gzip: boolean; tenant: string; logs: TestLog[] }[] = [];

    before(async () => {
      if (backend === 's3') s3 = await startS3Server();
      location = s3 ? { backend: 's3', s3 } : { backend: 'local', root: join(dir, 'data') };
      server = await spawnSluice(
        testConfigYaml({
          walDir: join(dir, 'wal'),
          dataDir: join(dir, 'data'),
          ...(s3 ? { s3 } : {}),
          flushAgeSecs: 600,
        }),
        { dir },
      );
      await server.waitReady();
    });
    after(async () => {
      if (server.child.exitCode === null) await server.kill();
      await s3?.stop();
    });

    test('every exporter, with and without gzip, is acknowledged', async () => {
      let n = 0;
      for (const kind of KINDS) {
        for (const gzip of [false, true]) {
          const tenant = `${kind}.${gzip ? 'gzip' : 'plain'}`;
          const logs = logsFor(n++);
          const records = await buildSdkRecords(
            {
              resource: { 'service.name': `svc-${kind}`, 'deployment.environment': 'e2e' },
              scopeName: 'e2e-scope',
              scopeVersion: gzip ? '2.0.0-gz' : '2.0.0',
            },
            logs,
          );
          const exporter = createExporter(
            kind,
            { httpUrl: server.otlpHttpUrl, grpcAddress: server.otlpGrpcAddress },
            { tenant, gzip },
          );
          await exportBatch(exporter, records);
          await exporter.shutdown();
          clients.push({ kind, gzip, tenant, logs });
        }
      }
      assert.equal(clients.length, 6);
    });

    test('after a graceful stop the Parquet files hold exactly the exported records', async () => {
      const exit = await server.stop();
      assert.equal(exit.code, 0, server.logs.join('\n'));
      const rows = await readStoredRows(location);
      assert.equal(rows.length, clients.length * PER_CLIENT, 'no record lost or duplicated');
      for (const client of clients) {
        const mine = rows.filter((r) => r.tenantId === client.tenant);
        assert.equal(mine.length, PER_CLIENT, `tenant ${client.tenant}`);
        const bySeq = new Map(mine.map((r) => [(attr(r, 'seq') as { value: bigint }).value, r]));
        for (const log of client.logs) {
          const row = bySeq.get(BigInt(log.attributes.seq as number));
          assert.ok(row, `record seq ${String(log.attributes.seq)} of ${client.tenant}`);
          checkRow(row, log, client);
        }
      }
    });

    test('DuckDB reads the same files and agrees row by row', async () => {
      const ours = await readStoredRows(location);
      const duck = await duckDbRows(location);
      assert.equal(duck.length, ours.length);
      const key = (tenant: string, time: bigint): string => `${tenant}/${time}`;
      const index = new Map(ours.map((r) => [key(r.tenantId, r.record.timeUnixNano), r]));
      for (const d of duck) {
        const mine = index.get(key(d.tenantId, d.timeUnixNano));
        assert.ok(mine, `DuckDB row ${d.tenantId} ${d.timeUnixNano} exists in our read`);
        assert.equal(d.severityNumber, mine.record.severityNumber);
        assert.equal(d.traceIdHex, toHex(mine.record.traceId));
        assert.equal(d.templateId, mine.mined.templateId);
        if (mine.record.body?.kind === 'string') assert.equal(d.body, mine.record.body.value);
      }
    });
  });
}
