/**
 * @module sink-observer.test
 * A run of failing flushes (a full store volume, an outage) is logged once with its reason, again only when the
 * reason changes, and once when a flush succeeds again; every failed attempt is still counted on
 * `sluice.sink.flush.errors`. Each flush records its visibility lag. The disk guard's trip and clear are one line each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';
import { METRIC_SLUICE_INGEST_VISIBILITY_LAG, METRIC_SLUICE_SINK_FLUSH_ERRORS, type Logger } from '@sluice/telemetry';
import type { FromSinkWorker } from '@sluice/receiver';
import { createDiskGuardObserver, createSinkObserver } from './observers.js';

class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

function recordingLog(): Logger & { lines: { level: string; msg: string; fields: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      lines.push({ level, msg, fields: { ...fields } });
    };
  return { name: 'test', lines, info: at('info'), warn: at('warn'), error: at('error') };
}

const failed = (code: string | null): FromSinkWorker => ({
  type: 'flush_failed',
  trigger: 'age',
  message: `${code ?? 'boom'}: injected`,
  code,
});

const flushed: FromSinkWorker = {
  type: 'flushed',
  trigger: 'age',
  records: 10,
  files: 1,
  bytes: 100,
  seconds: 0.1,
  checkpoint: { segment: 1, offset: 100 },
  templates: 1,
  visibilityLagSecs: 0.75,
};

void test('a run of failing flushes is logged once with its reason (again when the reason changes) and once when it ends; every attempt is counted', async () => {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  const log = recordingLog();
  let now = 0;
  try {
    const observer = createSinkObserver(provider.getMeter('sluice'), log, () => now);
    for (let i = 0; i < 5; i++) {
      observer.message(failed('ENOSPC'));
      now += 1000;
    }
    observer.message(failed('EIO'));
    observer.message(failed('EIO'));
    now += 500;
    observer.message(flushed);
    observer.message(flushed);
    observer.message(failed(null));

    const errors = log.lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 3, JSON.stringify(log.lines));
    assert.match(errors[0]!.msg, /no space left on the store volume/);
    assert.equal(errors[0]!.fields['code'], 'ENOSPC');
    assert.equal(errors[1]!.fields['code'], 'EIO');
    assert.equal(errors[2]!.fields['code'], 'none');
    const recovered = log.lines.filter((l) => l.msg.startsWith('sink flush succeeded again'));
    assert.equal(recovered.length, 1);
    assert.deepEqual(recovered[0]!.fields, { failed_attempts: 7, failing_secs: 5.5 });
    assert.equal(log.lines.filter((l) => l.msg === 'sink flushed').length, 2);

    const metrics = (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const errorsMetric = metrics.find((m) => m.descriptor.name === METRIC_SLUICE_SINK_FLUSH_ERRORS);
    const total = (errorsMetric?.dataPoints as DataPoint<number>[] | undefined)?.reduce((n, p) => n + p.value, 0);
    assert.equal(total, 8, 'every failed attempt counted');
  } finally {
    await provider.shutdown();
  }
});

void test('each flush records its visibility lag (ack to stored file) on sluice.ingest.visibility_lag', async () => {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  try {
    const observer = createSinkObserver(provider.getMeter('sluice'), recordingLog());
    observer.message(flushed);
    observer.message({ ...flushed, visibilityLagSecs: 1.25 });
    const metrics = (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    const lag = metrics.find((m) => m.descriptor.name === METRIC_SLUICE_INGEST_VISIBILITY_LAG);
    const point = (lag?.dataPoints as DataPoint<{ count: number; sum: number }>[] | undefined)?.[0];
    assert.equal(point?.value.count, 2);
    assert.equal(point?.value.sum, 2);
  } finally {
    await provider.shutdown();
  }
});

void test('the disk guard logs one warning when it trips and one line when it clears, with path, free bytes and percent, and the threshold', () => {
  const log = recordingLog();
  const observer = createDiskGuardObserver(log);
  const sample = { path: '/wal', totalBytes: 1000, freeBytes: 50, freePercent: 5, thresholdPercent: 10 };
  observer.tripped(sample);
  observer.cleared({ ...sample, freeBytes: 500, freePercent: 50 });
  assert.deepEqual(log.lines, [
    {
      level: 'warn',
      msg: 'WAL volume below receiver.limits.min_free_disk_percent; refusing exports (disk_low) and not ready',
      fields: { path: '/wal', free_bytes: 50, total_bytes: 1000, free_percent: 5, min_free_disk_percent: 10 },
    },
    {
      level: 'info',
      msg: 'WAL volume free space recovered; accepting exports again',
      fields: { path: '/wal', free_bytes: 500, total_bytes: 1000, free_percent: 50, min_free_disk_percent: 10 },
    },
  ]);
});
