/**
 * @module otlp-push.test
 * OTLP push against a real HTTP listener on 127.0.0.1: the exporter POSTs to `<endpoint>/v1/metrics`.
 */
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { createTelemetry } from './create-telemetry.js';
import { createIngestMetrics } from './ingest-metrics.js';
import { createLogger } from './logger.js';
import {
  ATTR_SLUICE_INGEST_PROTOCOL,
  METRIC_SLUICE_INGEST_RECORDS,
  SLUICE_INGEST_PROTOCOL_VALUE_GRPC,
} from './semconv.js';

interface Captured {
  readonly method: string;
  readonly url: string;
  readonly contentType: string;
  readonly body: string;
}

interface OtlpJsonMetrics {
  resourceMetrics?: { scopeMetrics?: { scope?: { name?: string }; metrics?: { name?: string; unit?: string }[] }[] }[];
}

void test('with otlpEndpoint set, recorded metrics are POSTed as OTLP to <endpoint>/v1/metrics', async () => {
  const captured: Captured[] = [];
  let notify: () => void = () => undefined;
  const arrived = new Promise<void>((resolve) => (notify = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      captured.push({
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      notify();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  const telemetry = createTelemetry({
    serviceName: 'sluice-test',
    prometheus: false,
    otlpEndpoint: `http://127.0.0.1:${port}`,
    otlpIntervalMs: 100,
  });
  try {
    createIngestMetrics(telemetry.meter).records.add(3, {
      [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_GRPC,
    });
    const timeout = new Promise<never>((_, reject) => {
      setTimeout(() => reject(new Error('no OTLP export arrived within 5 s')), 5000).unref();
    });
    await Promise.race([arrived, timeout]); // the periodic reader, not forceFlush, must deliver it

    const first = captured[0];
    if (first === undefined) return assert.fail('no request captured');
    assert.equal(first.method, 'POST');
    assert.equal(first.url, '/v1/metrics');
    assert.match(first.contentType, /^application\/json/);
    const payload = JSON.parse(first.body) as OtlpJsonMetrics;
    const metrics = (payload.resourceMetrics ?? [])
      .flatMap((r) => r.scopeMetrics ?? [])
      .flatMap((s) => s.metrics ?? []);
    const records = metrics.find((m) => m.name === METRIC_SLUICE_INGEST_RECORDS);
    if (records === undefined) return assert.fail(`not exported; got: ${metrics.map((m) => m.name).join(', ')}`);
    assert.equal(records.unit, '{record}');
  } finally {
    await telemetry.shutdown();
    server.close();
    await once(server, 'close');
  }
});

void test('a refused OTLP push is reported as an error line through the given logger', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'text/plain' }).end('bad'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  const lines: string[] = [];
  let notify: () => void = () => undefined;
  const logged = new Promise<void>((resolve) => (notify = resolve));
  const logger = createLogger('telemetry', {
    write: (line) => {
      lines.push(line);
      notify();
    },
  });
  const telemetry = createTelemetry({
    serviceName: 'sluice-test',
    prometheus: false,
    otlpEndpoint: `http://127.0.0.1:${port}`,
    otlpIntervalMs: 100,
    logger,
  });
  try {
    createIngestMetrics(telemetry.meter).batches.add(1, {
      [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_GRPC,
    });
    const timeout = new Promise<never>((_, reject) => {
      setTimeout(() => reject(new Error('no log line within 5 s')), 5000).unref();
    });
    await Promise.race([logged, timeout]);
    const first = JSON.parse(lines[0] ?? '{}') as {
      level?: string;
      logger?: string;
      msg?: string;
      fields?: { error?: unknown };
    };
    assert.equal(first.level, 'error');
    assert.equal(first.logger, 'telemetry');
    assert.match(first.msg ?? '', /^opentelemetry: PeriodicExportingMetricReader: metrics export failed .*Bad Request/);
    assert.ok(first.fields?.error, 'the SDK error is kept as a field');
  } finally {
    await telemetry.shutdown(); // the refused final export is logged, not thrown
    server.close();
    await once(server, 'close');
  }
});
