/**
 * @module ndjson-stream.test
 * Streamed results (docs/design/query-governance.md, "Streamed results") over a real socket, real query workers and
 * a real local store: `Accept: application/x-ndjson` on `/v1/query` answers chunked NDJSON whose lines, parsed one
 * by one, are the JSON answer's records (or aggregation groups) and end in the `{"rows","stats"}` trailer. An
 * over-limit condition after the first line ends the stream with an `{"error":{…}}` line; before it, the normal
 * JSON error status stands. A client that stops reading keeps the querier's buffered bytes at a few batches (the
 * worker waits for the socket to drain), and a client that goes away mid-stream gets its query stopped: permit and
 * reservations released.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { ResultCeiling } from '@sluice/limits';
import type { QueryObserver } from './query-service.js';
import {
  WINDOW,
  createStoreFixture,
  harness,
  query,
  within,
  type Harness,
  type HarnessOptions,
} from './testing/query-harness.js';
import { nonCacheHeldBytes } from './worker-footer-cache.js';

/** Rows of tenant `big`, each with a 1000-character body: a result far larger than any socket buffer. */
const BIG_ROWS = 20_000;
/** Every fixture row: one per second from T0 (the file sits in the first hour's partition). */
const ALL_ROWS = 'range(2026-06-01T00:00:00Z, 2026-06-01T06:00:00Z)';
const BATCH = 4096;

let fixture: { readonly dir: string; remove(): Promise<void> };
before(async () => {
  fixture = await createStoreFixture(['acme', 'big'], BIG_ROWS, (i, tenant) =>
    tenant === 'big' ? `${i} ${'x'.repeat(1000)}` : `line ${i % 7}`,
  );
});
after(async () => {
  await fixture.remove();
});

interface Served {
  readonly h: Harness;
  readonly port: number;
  /** The server side of every request, in arrival order. */
  readonly responses: ServerResponse[];
  readonly crossed: ResultCeiling[];
  readonly answered: number[];
  stop(): Promise<void>;
}

async function served(o: Omit<HarnessOptions, 'dir' | 'maxConcurrent' | 'queryTimeoutMs'> = {}): Promise<Served> {
  const crossed: ResultCeiling[] = [];
  const answered: number[] = [];
  const observer: QueryObserver = {
    finished: () => {},
    answered: (_kind, bytes) => answered.push(bytes),
    ceilingCrossed: (limit) => crossed.push(limit),
  };
  const h = harness({
    dir: fixture.dir,
    maxConcurrent: 1,
    queryTimeoutMs: 0,
    streamBatchBytes: BATCH,
    observer,
    ...o,
    limits: { maxRows: BIG_ROWS, maxResultBytes: 64 << 20, ...o.limits },
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: h.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const responses: ServerResponse[] = [];
  server.on('request', (_req, res: ServerResponse) => responses.push(res));
  return {
    h,
    port: (server.address() as AddressInfo).port,
    responses,
    crossed,
    answered,
    async stop() {
      // A failed leg may leave a paused client connected: closed here, so a failure fails instead of hanging.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if ('closeAllConnections' in server) server.closeAllConnections();
      await closed;
      await h.close();
    },
  };
}

/**
 * The stats of a scan with `bytes_read` set aside: it counts bytes read from storage, and the second of two runs of
 * a statement finds the footers in its worker's footer cache (docs/design/query-governance.md, "Footer cache").
 */
function sameScan(stats: unknown): unknown {
  return { ...(stats as Record<string, unknown>), bytes_read: 'set aside' };
}

/** Posts a query asking for NDJSON; resolves with the response still unread. */
function post(port: number, tenant: string, q: string, accept = 'application/x-ndjson'): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/query',
        headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': tenant, accept },
      },
      resolve,
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query: q }));
  });
}

/** Reads a response to its end and parses it line by line (every line must be one JSON value). */
async function lines(res: IncomingMessage): Promise<{ text: string; parsed: Record<string, unknown>[] }> {
  let text = '';
  res.setEncoding('utf8');
  for await (const chunk of res) text += chunk as string;
  assert.ok(text.endsWith('\n'), 'the stream ends with a complete line');
  const parsed = text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { text, parsed };
}

describe('NDJSON: records line by line, ending in the trailer', () => {
  test('a record query streams the JSON answer’s records, one per line, then {"rows","stats"}', async () => {
    const s = await served();
    try {
      const q = `true | ${WINDOW} | limit 2500`;
      const res = await post(s.port, 'acme', q);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/x-ndjson');
      assert.equal(res.headers['transfer-encoding'], 'chunked');
      const { text, parsed } = await lines(res);
      const trailer = parsed.at(-1);
      assert.equal(parsed.length, 2501);
      assert.deepEqual(Object.keys(trailer ?? {}), ['rows', 'stats']);
      const json = await query(s.h, 'acme', { query: q });
      assert.equal(json.status, 200);
      assert.equal(trailer?.['rows'], json.json.rows, 'rows counts every match, as in the JSON answer');
      assert.equal(json.json.rows, 3600, 'the window holds the first hour of the fixture');
      assert.deepEqual(sameScan(trailer?.['stats']), sameScan(json.json.stats));
      assert.deepEqual(parsed.slice(0, -1), json.json.records, 'the same records, in the same order');
      assert.ok(s.answered.includes(Buffer.byteLength(text)), 'the response size counts every line sent');
      assert.equal(nonCacheHeldBytes(s.h.pool), 0);
      assert.equal(s.h.gate.inFlight(), 0);
    } finally {
      await s.stop();
    }
  });

  test('a sorted query and a count by stream their lines in the JSON answer’s order', async () => {
    const s = await served();
    try {
      for (const q of [`true | ${WINDOW} | sort ts desc | limit 40`, `true | ${WINDOW} | count by body`]) {
        const { parsed } = await lines(await post(s.port, 'acme', q));
        const json = await query(s.h, 'acme', { query: q });
        const items = json.json.aggregate ?? json.json.records;
        assert.ok(items.length > 1, q);
        assert.deepEqual(parsed.slice(0, -1), items, q);
        const last = parsed.at(-1);
        assert.deepEqual(
          { rows: last?.['rows'], stats: sameScan(last?.['stats']) },
          { rows: json.json.rows, stats: sameScan(json.json.stats) },
          q,
        );
      }
    } finally {
      await s.stop();
    }
  });

  test('without the Accept header, or for a drift statement, the answer is the usual JSON document', async () => {
    const s = await served();
    try {
      const plain = await post(s.port, 'acme', `true | ${WINDOW} | limit 3`, 'application/json');
      assert.equal(plain.headers['content-type'], 'application/json');
      const zero = await post(s.port, 'acme', `true | ${WINDOW} | limit 3`, 'application/x-ndjson;q=0');
      assert.equal(zero.headers['content-type'], 'application/json');
      const drift = await post(s.port, 'acme', 'drift from 2026-06-01T00:00:00Z to 2026-06-01T01:00:00Z');
      assert.equal(drift.headers['content-type'], 'application/json');
      for (const r of [plain, zero, drift]) r.resume();
    } finally {
      await s.stop();
    }
  });
});

describe('NDJSON: limits before and after the first line', () => {
  test('over max_result_bytes after the first line: 200, then the lines that fitted, then one error line', async () => {
    const s = await served({ limits: { maxResultBytes: 20_000 } });
    try {
      const res = await post(s.port, 'acme', `true | ${WINDOW} | limit 2500`);
      assert.equal(res.statusCode, 200, 'the status went with the first line');
      const { text, parsed } = await lines(res);
      const last = parsed.at(-1) as { error?: Record<string, unknown> };
      assert.deepEqual(Object.keys(last), ['error']);
      assert.equal(last.error?.['kind'], 'query_result_limit');
      assert.equal(last.error?.['limit'], 'querier.limits.max_result_bytes');
      assert.equal(last.error?.['ceiling'], 20_000);
      assert.equal(last.error?.['retryable'], false);
      assert.ok(parsed.length > 2, 'records went out before the error');
      for (const record of parsed.slice(0, -1)) assert.ok('time_unix_nano' in record, 'no trailer before it');
      const sent = Buffer.byteLength(text) - Buffer.byteLength(`${JSON.stringify(last)}\n`);
      assert.ok(sent <= 20_000, `the lines sent (${sent} bytes) fit the ceiling`);
      await within(2000, () => s.h.gate.inFlight() === 0 && nonCacheHeldBytes(s.h.pool) === 0, 'released');
    } finally {
      await s.stop();
    }
  });

  test('over max_result_bytes before the first line: the normal 422 JSON error', async () => {
    const s = await served({ limits: { maxResultBytes: 1000 } });
    try {
      const res = await post(s.port, 'acme', `true | ${WINDOW} | limit 2500`);
      assert.equal(res.statusCode, 422);
      assert.equal(res.headers['content-type'], 'application/json');
      let text = '';
      for await (const chunk of res) text += String(chunk);
      assert.equal((JSON.parse(text) as { error: { kind: string } }).error.kind, 'query_result_limit');
    } finally {
      await s.stop();
    }
  });

  test('observe mode streams past max_result_bytes to the trailer and counts it', async () => {
    const s = await served({ limits: { maxResultBytes: 20_000, enforcement: 'observe' } });
    try {
      const { parsed } = await lines(await post(s.port, 'acme', `true | ${WINDOW} | limit 2500`));
      assert.equal(parsed.length, 2501);
      assert.deepEqual(Object.keys(parsed.at(-1) ?? {}), ['rows', 'stats']);
      assert.deepEqual(s.crossed, ['max_result_bytes']);
    } finally {
      await s.stop();
    }
  });
});

describe('NDJSON: backpressure and disconnects', () => {
  test('a client that stops reading keeps the querier’s buffered bytes and reservations at a few batches', async () => {
    const s = await served();
    try {
      const res = await post(s.port, 'big', `true | ${ALL_ROWS} | limit ${BIG_ROWS}`);
      assert.equal(res.statusCode, 200);
      res.pause();
      const out = s.responses[0];
      assert.ok(out !== undefined);
      await within(10_000, () => out.writableNeedDrain, 'the socket pushes back');
      // Let the query run on for a while: without flow control it would push the whole result into `out`.
      let maxBuffered = 0;
      let maxReserved = 0;
      const until = performance.now() + 500;
      while (performance.now() < until) {
        maxBuffered = Math.max(maxBuffered, out.writableLength);
        maxReserved = Math.max(maxReserved, nonCacheHeldBytes(s.h.pool));
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.equal(s.h.gate.inFlight(), 1, 'the query waits for the reader, it has not run ahead');
      // The socket's high-water mark, plus the batches in flight (each a little over BATCH: it closes after a row).
      assert.ok(maxBuffered <= 16_384 + 4 * (BATCH + 1100), `buffered ${maxBuffered} bytes`);
      assert.ok(maxReserved <= 4 << 20, `reserved ${maxReserved} bytes`);
      res.resume();
      const { parsed } = await lines(res);
      assert.equal(parsed.length, BIG_ROWS + 1, 'every record arrives once the client reads again');
      assert.deepEqual(Object.keys(parsed.at(-1) ?? {}), ['rows', 'stats']);
    } finally {
      await s.stop();
    }
  });

  test('a client that goes away mid-stream stops its query: permit and reservations released, next query served', async () => {
    const s = await served();
    try {
      const res = await post(s.port, 'big', `true | ${ALL_ROWS} | limit ${BIG_ROWS}`);
      res.pause();
      const out = s.responses[0];
      assert.ok(out !== undefined);
      await within(10_000, () => out.writableNeedDrain, 'the stream is under way and pushing back');
      assert.equal(s.h.gate.inFlight(), 1);
      res.destroy();
      await within(
        2000,
        () => s.h.gate.inFlight() === 0 && nonCacheHeldBytes(s.h.pool) === 0,
        'permit and pool released',
      );
      const next = await lines(await post(s.port, 'acme', `true | ${WINDOW} | limit 5`));
      assert.equal(next.parsed.length, 6);
      assert.deepEqual(s.h.deaths, [], 'stopped cooperatively: the worker was kept');
    } finally {
      await s.stop();
    }
  });
});
