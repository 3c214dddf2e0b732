/**
 * @module observers.test
 * RFC0058.9 for the real query observer: a rejection is exactly one `sluice.query.duration` point carrying its
 * `error.type` (and the query kind), and no other metric records anything for it. The querier-level test
 * (apps/querier/src/admission-release-and-backstop.test.ts) proves the service reports each of the six rejections once, over HTTP and MCP,
 * with the kind token; this file proves what this observer turns that report into.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { ATTR_ERROR_TYPE, ATTR_SLUICE_QUERY_KIND, METRIC_SLUICE_QUERY_DURATION } from '@sluice/telemetry';
import { createQueryObserver } from './observers.js';

class ManualReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const REJECTIONS = [
  'query_memory_limit',
  'query_memory_contended',
  'query_queue_full',
  'query_queue_timeout',
  'query_file_limit',
  'query_result_limit',
];

void test('RFC0058.9: createQueryObserver records each rejection as one sluice.query.duration point with its error.type, and nothing else', async () => {
  const reader = new ManualReader();
  const provider = new MeterProvider({ readers: [reader] });
  try {
    const observer = createQueryObserver(provider.getMeter('sluice'));
    const collect = async (): Promise<MetricData[]> =>
      (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    for (const [i, kind] of REJECTIONS.entries()) {
      observer.finished(i % 2 === 0 ? 'logs' : 'templates', 0.25, kind, null);
    }
    const metrics = await collect();
    const duration = metrics.find((m) => m.descriptor.name === METRIC_SLUICE_QUERY_DURATION);
    if (duration === undefined) return assert.fail('no duration metric');
    const points = (duration.dataPoints as DataPoint<Histogram>[]).map((p) => ({
      attributes: p.attributes,
      count: p.value.count,
    }));
    assert.deepEqual(
      points.sort((a, b) => String(a.attributes[ATTR_ERROR_TYPE]).localeCompare(String(b.attributes[ATTR_ERROR_TYPE]))),
      REJECTIONS.map((kind, i) => ({ kind, i }))
        .sort((a, b) => a.kind.localeCompare(b.kind))
        .map(({ kind, i }) => ({
          attributes: { [ATTR_SLUICE_QUERY_KIND]: i % 2 === 0 ? 'logs' : 'templates', [ATTR_ERROR_TYPE]: kind },
          count: 1,
        })),
    );
    for (const m of metrics) {
      if (m.descriptor.name === METRIC_SLUICE_QUERY_DURATION) continue;
      for (const p of m.dataPoints) assert.equal(p.value, 0, `${m.descriptor.name} recorded nothing for a rejection`);
    }
  } finally {
    await provider.shutdown();
  }
});
