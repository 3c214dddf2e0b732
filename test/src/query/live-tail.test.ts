/**
 * @module live-tail.test
 * The live tail in the gateway process (`sluice serve`, receiver and querier, local store): a tail opened on
 * `POST /v1/tail` receives the records an official OTLP exporter sends after it started — each once, in the order
 * they were exported — and not the ones already visible before it started; the `max_live_tails + 1`-th tail is refused 503
 * `query_tail_limit`; `/metrics` reports the open tails on `sluice.query.tails.open`, back to 0 once they close; a
 * SIGTERM ends an open tail with its last line instead of waiting on it.
 */
import { connect } from 'node:net';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { scrapeMetrics, sampleSum } from '../helpers/metrics-text.js';
import { postQuery } from '../helpers/query-client.js';
import { buildSdkRecords, createExporter, exportBatch, type TestLog } from '../helpers/otel-sdk.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const TENANT = 'tailer';
const BATCHES = 5;
const PER_BATCH = 4;

interface OpenTail {
  readonly res: IncomingMessage;
  readonly req: ClientRequest;
  readonly lines: Record<string, unknown>[];
  text(): string;
  /** Resolves when the response has ended (set up before any of its events can fire). */
  readonly ended: Promise<void>;
}

function openTail(queryUrl: string, dsl: string): Promise<OpenTail> {
  const url = new URL('/v1/tail', queryUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: url.pathname,
        headers: { 'X-Sluice-Tenant': TENANT },
      },
      (res) => {
        const lines: Record<string, unknown>[] = [];
        let partial = '';
        let all = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          all += chunk;
          if (res.statusCode !== 200) return;
          partial += chunk;
          const parts = partial.split('\n');
          partial = parts.pop() ?? '';
          for (const p of parts) lines.push(JSON.parse(p) as Record<string, unknown>);
        });
        const ended = new Promise<void>((done) => {
          res.once('end', () => done());
          res.once('close', () => done());
          res.once('error', () => done());
        });
        resolve({ res, req, lines, text: () => all, ended });
      },
    );
    req.on('error', reject);
    req.end(dsl);
  });
}

async function waitFor(
  ms: number,
  cond: () => boolean | Promise<boolean>,
  what: string | (() => string),
): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) assert.fail(`not within ${ms} ms: ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function logs(batch: number): TestLog[] {
  return Array.from({ length: PER_BATCH }, (_, k) => {
    const ns = BigInt(Date.now()) * 1_000_000n + BigInt(k) * 1000n;
    return {
      body: `tail marker ${batch}.${k}`,
      severityNumber: 17,
      severityText: 'ERROR',
      attributes: { batch },
      timeNs: ns,
      observedNs: ns,
      traceId: null,
      spanId: null,
    };
  });
}

async function exportLogs(server: SluiceProcess, batch: number): Promise<void> {
  const records = await buildSdkRecords(
    { resource: { 'service.name': 'tail-e2e' }, scopeName: 'tail', scopeVersion: '1' },
    logs(batch),
  );
  const exporter = createExporter(
    'http-proto',
    { httpUrl: server.otlpHttpUrl, grpcAddress: server.otlpGrpcAddress },
    { tenant: TENANT, gzip: false },
  );
  try {
    await exportBatch(exporter, records);
  } finally {
    await exporter.shutdown();
  }
}

const markers = (t: OpenTail): string[] =>
  t.lines.filter((l) => 'body' in l).map((l) => (l['body'] as { line: string }).line);

describe('live tail in the gateway process', () => {
  const dir = tempDir('live-tail');
  let server: SluiceProcess;

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        querier: true,
        flushAgeSecs: 1,
        querierLimits: { max_live_tails: 2, tail_poll_ms: 200, light_query_permits: 0 },
      }),
      { dir },
    );
    await server.waitReady();
  });
  after(async () => {
    await server.stop(); // already stopped by the last test, unless it failed first
    rmSync(dir, { recursive: true, force: true });
  });

  test('a tail receives the records exported after it started, each once, in export order; the third tail is refused', async () => {
    // Exported and visible before the tail starts: not sent (a tail sends what becomes visible after it started).
    await exportLogs(server, 0);
    await waitFor(
      30_000,
      async () =>
        Number((await postQuery(server.queryUrl!, TENANT, 'true | limit 10')).json?.['rows' as never]) === PER_BATCH,
      'the first batch visible to /v1/query',
    );
    const tail = await openTail(server.queryUrl!, 'severity >= error');
    assert.equal(tail.res.statusCode, 200);
    assert.equal(tail.res.headers['content-type'], 'application/x-ndjson');
    const second = await openTail(server.queryUrl!, 'attr.batch == 99');
    await waitFor(
      10_000,
      async () => sampleSum(await scrapeMetrics(server.queryUrl!), 'sluice_query_tails_open') === 2,
      'two tails open on /metrics',
    );
    const third = await openTail(server.queryUrl!, 'true');
    await third.ended;
    assert.equal(third.res.statusCode, 503);
    assert.equal((JSON.parse(third.text()) as { error: { kind: string } }).error.kind, 'query_tail_limit');

    const expected: string[] = [];
    for (let b = 1; b <= BATCHES; b++) {
      await exportLogs(server, b);
      for (let k = 0; k < PER_BATCH; k++) expected.push(`tail marker ${b}.${k}`);
    }
    // A last batch, once it has arrived, proves every poll that met the earlier files has answered.
    await exportLogs(server, BATCHES + 1);
    const sentinel = `tail marker ${BATCHES + 1}.${PER_BATCH - 1}`;
    await waitFor(
      30_000,
      () => markers(tail).includes(sentinel),
      () => `the last batch on the tail (got ${JSON.stringify(markers(tail))})`,
    );
    for (let k = 0; k < PER_BATCH; k++) expected.push(`tail marker ${BATCHES + 1}.${k}`);
    assert.deepEqual(markers(tail), expected, 'each record once, in export order, none from before the tail');
    assert.deepEqual(markers(second), [], 'a tail sends only what matches its predicate');

    tail.req.destroy();
    second.req.destroy();
    await waitFor(
      10_000,
      async () => sampleSum(await scrapeMetrics(server.queryUrl!), 'sluice_query_tails_open') === 0,
      'no tail open on /metrics',
    );
  });

  test('SIGTERM with a tail open and a connection held without a request: the tail ends with {"end":"shutdown"} and the process exits cleanly, not at the shutdown timeout', async () => {
    const tail = await openTail(server.queryUrl!, 'true');
    assert.equal(tail.res.statusCode, 200);
    // A client may hold a connection it never sends a request on (Node's fetch opens a spare one after an aborted
    // tail); Node counts it as active, so only an explicit close after the last answer lets the stop finish.
    const { hostname, port } = new URL(server.queryUrl!);
    const held = connect(Number(port), hostname);
    await once(held, 'connect');
    held.on('error', () => {});
    try {
      const exit = await server.stop();
      await tail.ended;
      assert.equal(tail.lines.at(-1)?.['end'], 'shutdown');
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.ok(!server.logs.some((l) => l.includes('shutdown timed out')), 'the stop did not wait out its timeout');
    } finally {
      held.destroy();
    }
  });
});
