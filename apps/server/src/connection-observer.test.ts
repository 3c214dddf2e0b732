/**
 * @module connection-observer.test
 * Connection-cap refusals become `sluice.connection.refused` points per listener and kind, and at most one warning
 * per listener every 10 s carrying the count refused since the previous one (a flood does not flood the log).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';
import type { ListenerCap } from '@sluice/edge';
import {
  ATTR_SLUICE_CONNECTION_REFUSAL,
  ATTR_SLUICE_LISTENER,
  METRIC_SLUICE_CONNECTION_REFUSED,
  type Logger,
} from '@sluice/telemetry';
import { createConnectionObserver } from './observers.js';

class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const cap = (listener: string, key: string): ListenerCap => ({
  listener,
  key,
  maxConnections: 10,
  refusalSlots: 2,
  source: 'derived',
});

void test('refusals are counted per listener and kind, and logged at most every 10 s per listener with the count', async () => {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  const warnings: { msg: string; fields: Record<string, unknown> }[] = [];
  const log: Logger = {
    name: 'test',
    info: () => undefined,
    error: () => undefined,
    warn: (msg, fields) => warnings.push({ msg, fields: { ...fields } }),
  };
  let now = 0;
  try {
    const observe = createConnectionObserver(provider.getMeter('sluice'), log, () => now);
    const query = cap('query_http', 'querier.max_connections');
    const http = cap('otlp_http', 'receiver.max_http_connections');
    for (let i = 0; i < 5; i++) observe(query, 'answered');
    observe(query, 'dropped');
    observe(http, 'answered');
    now = 9_999;
    observe(query, 'answered');
    now = 10_000;
    observe(query, 'answered');
    assert.deepEqual(
      warnings.map((w) => [w.fields['listener'], w.fields['refused'], w.fields['key']]),
      [
        ['query_http', 1, 'querier.max_connections'],
        ['otlp_http', 1, 'receiver.max_http_connections'],
        ['query_http', 7, 'querier.max_connections'],
      ],
    );
    assert.ok(warnings.every((w) => w.msg === 'connection cap reached; refusing new connections'));
    const metric = (await reader.collect()).resourceMetrics.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === METRIC_SLUICE_CONNECTION_REFUSED);
    const points = (metric?.dataPoints ?? []) as DataPoint<number>[];
    const byKey = Object.fromEntries(
      points.map((p) => [
        `${p.attributes[ATTR_SLUICE_LISTENER]}/${p.attributes[ATTR_SLUICE_CONNECTION_REFUSAL]}`,
        p.value,
      ]),
    );
    assert.deepEqual(byKey, { 'query_http/answered': 7, 'query_http/dropped': 1, 'otlp_http/answered': 1 });
  } finally {
    await provider.shutdown();
  }
});
