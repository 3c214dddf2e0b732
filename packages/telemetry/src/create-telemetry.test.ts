/**
 * @module create-telemetry.test
 * Prometheus text rendering and option validation of createTelemetry.
 */
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { createTelemetry } from './create-telemetry.js';
import { createIngestMetrics } from './ingest-metrics.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_SLUICE_INGEST_PROTOCOL,
  ERROR_TYPE_VALUE_OTHER,
  SLUICE_INGEST_PROTOCOL_VALUE_GRPC,
  SLUICE_INGEST_PROTOCOL_VALUE_HTTP_JSON,
} from './semconv.js';

void test('metricsText renders a recorded counter as sluice_ingest_records_total with its attributes as labels', async () => {
  const telemetry = createTelemetry({ serviceName: 'sluice-test', prometheus: true });
  try {
    const m = createIngestMetrics(telemetry.meter);
    m.records.add(7, { [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_GRPC });
    m.records.add(2, {
      [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_HTTP_JSON,
      [ATTR_ERROR_TYPE]: ERROR_TYPE_VALUE_OTHER,
    });
    const text = await telemetry.metricsText();
    assert.match(text, /^# TYPE sluice_ingest_records_total counter$/m);
    assert.match(text, /^# UNIT sluice_ingest_records_total \{record\}$/m);
    assert.match(text, /^sluice_ingest_records_total\{sluice_ingest_protocol="grpc",otel_scope_name="sluice"\} 7$/m);
    assert.match(
      text,
      /^sluice_ingest_records_total\{sluice_ingest_protocol="http_json",error_type="_OTHER",otel_scope_name="sluice"\} 2$/m,
    );
    assert.match(text, /^target_info\{.*service_name="sluice-test".*\} 1$/m);
  } finally {
    await telemetry.shutdown();
  }
});

void test('metricsText renders a seconds histogram with the registry bucket boundaries, not the SDK millisecond defaults', async () => {
  const telemetry = createTelemetry({ serviceName: 'sluice-test', prometheus: true });
  try {
    const m = createIngestMetrics(telemetry.meter);
    m.walSyncDuration.record(0.0003);
    const text = await telemetry.metricsText();
    assert.match(text, /^# TYPE sluice_wal_sync_duration histogram$/m);
    assert.match(text, /^sluice_wal_sync_duration_bucket\{otel_scope_name="sluice",le="0.00025"\} 0$/m);
    assert.match(text, /^sluice_wal_sync_duration_bucket\{otel_scope_name="sluice",le="0.0005"\} 1$/m);
    assert.match(text, /^sluice_wal_sync_duration_count\{otel_scope_name="sluice"\} 1$/m);
    assert.doesNotMatch(text, /sluice_wal_sync_duration_bucket\{[^}]*le="7500"/);
  } finally {
    await telemetry.shutdown();
  }
});

void test('metricsText renders gauges as Prometheus gauges with the last recorded value', async () => {
  const telemetry = createTelemetry({ serviceName: 'sluice-test', prometheus: true });
  try {
    const m = createIngestMetrics(telemetry.meter);
    m.walBacklog.record(4096);
    m.walBacklog.record(1024);
    const text = await telemetry.metricsText();
    assert.match(text, /^# TYPE sluice_wal_backlog gauge$/m);
    assert.match(text, /^sluice_wal_backlog\{otel_scope_name="sluice"\} 1024$/m);
  } finally {
    await telemetry.shutdown();
  }
});

void test('metricsText rejects when Prometheus is disabled and after shutdown', async () => {
  const off = createTelemetry({ serviceName: 'sluice-test', prometheus: false });
  assert.equal(off.prometheusEnabled, false);
  await assert.rejects(off.metricsText(), /disabled/);
  await off.shutdown();

  const on = createTelemetry({ serviceName: 'sluice-test', prometheus: true });
  assert.equal(on.prometheusEnabled, true);
  const first = on.shutdown();
  assert.equal(on.shutdown(), first, 'shutdown is idempotent');
  await first;
  await assert.rejects(on.metricsText(), /shut down/);
});

void test('otlpEndpoint becomes <endpoint>/v1/metrics and invalid push options are refused', async () => {
  const t = createTelemetry({
    serviceName: 'sluice-test',
    prometheus: false,
    otlpEndpoint: 'http://127.0.0.1:9/otlp/',
  });
  assert.equal(t.otlpMetricsUrl, 'http://127.0.0.1:9/otlp/v1/metrics');
  await t.shutdown().catch(() => undefined); // the final export to port 9 fails; that is not under test here

  const none = createTelemetry({ serviceName: 'sluice-test', prometheus: false, otlpEndpoint: null });
  assert.equal(none.otlpMetricsUrl, null);
  await none.shutdown();

  assert.throws(
    () => createTelemetry({ serviceName: 's', prometheus: false, otlpEndpoint: 'collector:4318' }),
    TypeError,
  );
  assert.throws(() => createTelemetry({ serviceName: 's', prometheus: false, otlpEndpoint: 'not a url' }), TypeError);
  assert.throws(
    () =>
      createTelemetry({ serviceName: 's', prometheus: false, otlpEndpoint: 'http://127.0.0.1:9', otlpIntervalMs: 0 }),
    RangeError,
  );
});
