/**
 * The ingest service acknowledges only what the WAL made durable, refuses bad input before the WAL, and bounds
 * the bytes waiting for an fsync.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeLogsProtobuf } from '@sluice/otlp';
import type { LogRecord } from '@sluice/core';
import { createIngestService, type WalAppender } from './ingest-service.js';
import { decodeWalExport } from '@sluice/sink';

const record: LogRecord = {
  timeUnixNano: 1_767_225_600_000_000_000n,
  observedTimeUnixNano: 0n,
  severityNumber: 9,
  severityText: 'INFO',
  body: { kind: 'string', value: 'hello 1' },
  attributes: [],
  droppedAttributesCount: 0,
  flags: 0,
  traceId: new Uint8Array(0),
  spanId: new Uint8Array(0),
  eventName: '',
  resource: { attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
  scope: { name: '', version: '', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
};
const body = encodeLogsProtobuf([record, record]);

/** A WAL whose appends resolve only when the test releases them (an explicit gate, not a timer). */
function gatedWal(): WalAppender & { appended: Uint8Array[]; release(): void; fail(): void } {
  const appended: Uint8Array[] = [];
  let waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  return {
    appended,
    append(payload) {
      appended.push(payload);
      return new Promise<void>((resolve, reject) => waiters.push({ resolve, reject }));
    },
    release() {
      for (const w of waiters) w.resolve();
      waiters = [];
    },
    fail() {
      for (const w of waiters) w.reject(Object.assign(new Error('fdatasync failed'), { code: 'WAL_IO' }));
      waiters = [];
    },
  };
}

describe('ingest service', () => {
  test('acknowledges only after the WAL append resolves, with the tenant and body in the WAL record', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => null, maxInflightBytes: 1 << 20 });
    let settled = false;
    const pending = service.ingest('http_protobuf', 'acme', body).then((o) => {
      settled = true;
      return o;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, 'not acknowledged before the fsync');
    wal.release();
    assert.deepEqual(await pending, { status: 'accepted', records: 2 });
    const stored = decodeWalExport(wal.appended[0]!);
    assert.equal(stored.tenant, 'acme');
    assert.equal(stored.encoding, 'protobuf');
    assert.deepEqual(stored.body, body);
  });

  test('a WAL failure is a transient refusal (503), never an ack', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => null, maxInflightBytes: 1 << 20 });
    const pending = service.ingest('grpc', 'default', body);
    await new Promise((r) => setImmediate(r));
    wal.fail();
    const outcome = await pending;
    assert.equal(outcome.status, 'unavailable');
  });

  test('a fenced WAL refuses at once: 503 with Retry-After and a message naming the fence, not the WAL error text', async () => {
    const fenced: WalAppender = {
      append: () =>
        Promise.reject(
          Object.assign(new Error('WAL fenced since … after: EIO (/var/wal/1.wal)'), { code: 'WAL_FENCED' }),
        ),
    };
    const service = createIngestService({ wal: fenced, busyReason: () => null, maxInflightBytes: 1 << 20 });
    const outcome = await service.ingest('http_protobuf', 'default', body);
    assert.deepEqual(outcome, {
      status: 'unavailable',
      message: 'the write-ahead log is fenced after a disk error and refuses exports until it recovers; retry',
      retryAfterSecs: 1,
    });
  });

  test('undecodable bodies are refused before the WAL', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => null, maxInflightBytes: 1 << 20 });
    assert.equal((await service.ingest('http_protobuf', 'acme', body.subarray(0, body.length - 3))).status, 'invalid');
    assert.equal((await service.ingest('http_json', 'acme', new TextEncoder().encode('{'))).status, 'invalid');
    assert.equal(wal.appended.length, 0);
  });

  test('an empty export is acknowledged without a WAL write', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => null, maxInflightBytes: 1 << 20 });
    assert.deepEqual(await service.ingest('http_protobuf', 'default', new Uint8Array(0)), {
      status: 'accepted',
      records: 0,
    });
    assert.equal(wal.appended.length, 0);
  });

  test('bytes waiting for an fsync are capped: the next export is a 503 until the WAL catches up', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => null, maxInflightBytes: body.length + 1 });
    const first = service.ingest('http_protobuf', 'default', body);
    const second = await service.ingest('http_protobuf', 'default', body);
    assert.equal(second.status, 'unavailable');
    assert.match((second as { message: string }).message, /max_inflight_bytes/);
    wal.release();
    assert.equal((await first).status, 'accepted');
    const third = service.ingest('http_protobuf', 'default', body);
    await new Promise((r) => setImmediate(r));
    wal.release();
    assert.equal((await third).status, 'accepted', 'capacity returns once the first append is durable');
  });

  test('the in-flight figures count bodies awaiting their fsync; the peak keeps the most at once, a refusal adds nothing', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => null, maxInflightBytes: 2 * body.length });
    assert.deepEqual(service.inflightFigures(), { used: 0, peak: 0 });
    const first = service.ingest('http_protobuf', 'default', body);
    const second = service.ingest('http_protobuf', 'default', body);
    assert.deepEqual(service.inflightFigures(), { used: 2 * body.length, peak: 2 * body.length });
    assert.equal((await service.ingest('http_protobuf', 'default', body)).status, 'unavailable');
    assert.deepEqual(service.inflightFigures(), { used: 2 * body.length, peak: 2 * body.length });
    wal.release();
    await Promise.all([first, second]);
    assert.deepEqual(service.inflightFigures(), { used: 0, peak: 2 * body.length });
    const failing = service.ingest('http_protobuf', 'default', body);
    wal.fail();
    assert.equal((await failing).status, 'unavailable');
    assert.deepEqual(
      service.inflightFigures(),
      { used: 0, peak: 2 * body.length },
      'a failed append gives its bytes back',
    );
  });

  test('a busy reason (WAL backlog, shutdown) refuses with Retry-After', async () => {
    const wal = gatedWal();
    const service = createIngestService({ wal, busyReason: () => 'shutting down', maxInflightBytes: 1 << 20 });
    const outcome = await service.ingest('http_protobuf', 'default', body);
    assert.deepEqual(outcome, { status: 'unavailable', message: 'shutting down', retryAfterSecs: 1 });
    assert.equal(wal.appended.length, 0);
  });

  test('the disk guard refuses disk_low with Retry-After before anything is written, and is asked with the body size', async () => {
    const wal = gatedWal();
    const asked: number[] = [];
    let low = true;
    const service = createIngestService({
      wal,
      busyReason: () => null,
      maxInflightBytes: 1 << 20,
      diskLow: (bytes) => {
        asked.push(bytes);
        return low ? 'the write-ahead log volume is low' : null;
      },
    });
    const refused = await service.ingest('grpc', 'acme', body);
    assert.deepEqual(refused, { status: 'disk_low', message: 'the write-ahead log volume is low', retryAfterSecs: 1 });
    assert.equal(wal.appended.length, 0, 'nothing written');
    assert.deepEqual(asked, [body.length]);
    low = false;
    const pending = service.ingest('grpc', 'acme', body);
    await new Promise((r) => setImmediate(r));
    wal.release();
    assert.equal((await pending).status, 'accepted');
    assert.equal(wal.appended.length, 1);
  });
});
