/**
 * @module s3-object-store-bounds.test
 * What the S3 store does against a misbehaving server (a scripted HTTP server on 127.0.0.1): short bodies, 5xx
 * answers, answers that never come or stall mid-body. Each call is bounded by small real timeouts (≤ 300 ms).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { TruncatedBodyError } from './object-store.js';
import { createResilientObjectStore } from './resilient-object-store.js';
import { createS3ObjectStore } from './s3-object-store.js';
import type { S3ObjectStore } from './s3-object-store.js';
import { StorageUnavailableError } from './storage-errors.js';
import { transientReason } from './transient-failure.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('S3 store against a misbehaving server', () => {
  let server: Server;
  let endpoint = '';
  let handle: Handler = (_req, res) => res.end();
  const requests: string[] = [];
  /** Requests whose socket closed before the server finished answering (the client gave up). */
  const abandoned: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.on('close', () => {
        if (!res.writableFinished) abandoned.push(`${req.method} ${req.url}`);
      });
      handle(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  function s3(requestTimeoutMs = 5_000): S3ObjectStore {
    requests.length = 0;
    return createS3ObjectStore({
      bucket: 'b',
      endpoint,
      region: 'us-east-1',
      prefix: '',
      accessKeyId: 'k',
      secretAccessKey: 's',
      forcePathStyle: true,
      connectTimeoutMs: 1_000,
      requestTimeoutMs,
    });
  }

  test('a range answer with fewer bytes than the range asked for is a TruncatedBodyError, not a RangeError', async () => {
    handle = (_req, res) => {
      res.writeHead(206, { 'Content-Range': 'bytes 0-99/1000', 'Content-Length': '10', ETag: '"e"' });
      res.end(Buffer.alloc(10));
    };
    const store = s3();
    try {
      const e = await store.getRange('f.parquet', 0, 100).catch((err: unknown) => err);
      assert.ok(e instanceof TruncatedBodyError, String(e));
      assert.deepEqual([e.key, e.expectedBytes, e.receivedBytes], ['f.parquet', 100, 10]);
      assert.equal(transientReason(e), 'truncated');
    } finally {
      store.close();
    }
  });

  test('a body cut off mid-answer is a transient failure, and the resilient store gets the whole object on retry', async () => {
    let n = 0;
    handle = (_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000', ETag: '"e"' });
      if (n++ === 0) {
        res.write(Buffer.alloc(100, 1));
        setTimeout(() => res.destroy(), 20);
      } else res.end(Buffer.alloc(1000, 1));
    };
    const inner = s3();
    const retries: string[] = [];
    const store = createResilientObjectStore(inner, {
      requestTimeoutMs: 2_000,
      maxAttempts: 3,
      retryBaseMs: 10,
      retryMaxMs: 10,
      onRetry: (e) => retries.push(e.reason),
    });
    try {
      const bytes = await store.get('obj');
      assert.equal(bytes?.byteLength, 1000);
      assert.equal(requests.length, 2);
      assert.equal(retries.length, 1);
      assert.ok(['connection', 'truncated'].includes(retries[0] ?? ''), retries[0]);
    } finally {
      inner.close();
    }
  });

  test('a 503 answer is one request (the SDK does not retry) and classifies as a server error', async () => {
    handle = (_req, res) => {
      res.writeHead(503, { 'Content-Type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>Reduce your request rate.</Message></Error>',
      );
    };
    const store = s3();
    try {
      const e = await store.head('obj').catch((err: unknown) => err);
      assert.equal(transientReason(e), 'server_error');
      assert.equal(requests.length, 1, 'exactly one HTTP request');
    } finally {
      store.close();
    }
  });

  test('an answer that never starts fails with a timeout at the HTTP handler’s request timeout', async () => {
    handle = () => undefined;
    const store = s3(200);
    try {
      const started = Date.now();
      const e = await store.get('obj').catch((err: unknown) => err);
      assert.equal(transientReason(e), 'timeout', String(e));
      assert.ok(Date.now() - started < 2_000, 'bounded near its 200 ms timeout');
    } finally {
      store.close();
    }
  });

  test('a body that stalls after the headers is cut by the resilient store’s timeout, which also closes the request', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000', ETag: '"e"' });
      res.write(Buffer.alloc(10));
    };
    const inner = s3(5_000);
    const store = createResilientObjectStore(inner, {
      requestTimeoutMs: 300,
      maxAttempts: 2,
      retryBaseMs: 10,
      retryMaxMs: 10,
    });
    try {
      const started = Date.now();
      const e = await store.get('stalled').catch((err: unknown) => err);
      assert.ok(e instanceof StorageUnavailableError, String(e));
      assert.deepEqual([e.operation, e.attempts, e.reason], ['get', 2, 'timeout']);
      assert.ok(Date.now() - started < 3_000, 'two 300 ms attempts, not the 5 s HTTP timeout');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(requests.length, 2);
      assert.equal(
        abandoned.filter((r) => r.includes('stalled')).length,
        2,
        'each timed-out attempt closed its request instead of leaving it open',
      );
    } finally {
      inner.close();
    }
  });
});
