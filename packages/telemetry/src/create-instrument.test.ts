/**
 * @module create-instrument.test
 * Every registry metric becomes an instrument of its declared kind, unit and description, and the area helpers
 * together cover the whole registry.
 */
import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import type { Meter } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, MeterProvider } from '@opentelemetry/sdk-metrics';
import type { MetricData } from '@opentelemetry/sdk-metrics';
import { createInstrument } from './create-instrument.js';
import { createIngestMetrics } from './ingest-metrics.js';
import { createMinerMetrics } from './miner-metrics.js';
import { PullMetricReader } from './pull-metric-reader.js';
import { createQueryMetrics } from './query-metrics.js';
import { createConnectionMetrics } from './connection-metrics.js';
import { createBudgetMetrics } from './budget-metrics.js';
import { createSinkMetrics } from './sink-metrics.js';
import {
  ATTR_SLUICE_INGEST_PROTOCOL,
  ATTR_SLUICE_QUERY_ROW_GROUP_STATE,
  METRIC_SLUICE_INGEST_RECORDS,
  METRIC_SLUICE_QUERY_ROW_GROUPS,
  METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS,
  METRICS,
  SLUICE_INGEST_PROTOCOL_VALUE_GRPC,
} from './semconv.js';
import type { MetricName } from './semconv.js';

async function collect(record: (meter: Meter) => void): Promise<MetricData[]> {
  const reader = new PullMetricReader();
  const provider = new MeterProvider({ readers: [reader] });
  try {
    record(provider.getMeter('test'));
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  } finally {
    await provider.shutdown();
  }
}

const EXPECTED_POINT: Record<string, { type: DataPointType; monotonic?: boolean }> = {
  counter: { type: DataPointType.SUM, monotonic: true },
  updowncounter: { type: DataPointType.SUM, monotonic: false },
  histogram: { type: DataPointType.HISTOGRAM },
  gauge: { type: DataPointType.GAUGE },
};

void test('createInstrument creates every registry metric with its declared kind, unit, description and buckets', async () => {
  const names = Object.keys(METRICS) as MetricName[];
  const data = await collect((meter) => {
    for (const name of names) {
      const instrument = createInstrument(meter, name);
      if ('add' in instrument) instrument.add(1);
      else instrument.record(1);
    }
  });
  assert.equal(data.length, names.length);
  for (const name of names) {
    const def = METRICS[name];
    const m = data.find((d) => d.descriptor.name === name);
    if (m === undefined) return assert.fail(`${name} was not collected`);
    assert.equal(m.descriptor.unit, def.unit, name);
    assert.equal(m.descriptor.description, def.description, name);
    const expected = EXPECTED_POINT[def.instrument];
    assert.equal(m.dataPointType, expected?.type, name);
    if (m.dataPointType === DataPointType.SUM) {
      assert.equal(m.isMonotonic, expected?.monotonic, name);
      assert.equal(m.aggregationTemporality, AggregationTemporality.CUMULATIVE);
    }
    if (m.dataPointType === DataPointType.HISTOGRAM && 'buckets' in def) {
      assert.deepEqual(m.dataPoints[0]?.value.buckets.boundaries, [...def.buckets], name);
    }
  }
});

void test('the ingest, sink, miner, query, connection and budget helpers together create exactly the registry metrics (compaction and corrupt-object ones come from their roles)', async () => {
  const data = await collect((meter) => {
    const all = [
      createIngestMetrics(meter),
      createSinkMetrics(meter),
      createMinerMetrics(meter),
      createQueryMetrics(meter),
      createConnectionMetrics(meter),
      createBudgetMetrics(meter),
    ];
    for (const group of all) {
      for (const instrument of Object.values(group) as { add?: (v: number) => void; record?: (v: number) => void }[]) {
        if (instrument.add) instrument.add(1);
        else instrument.record?.(1);
      }
    }
  });
  // The compactor creates its `sluice.compaction.*` instruments itself through createInstrument, and the querier
  // and the compactor each create `sluice.storage.corrupt_objects` (with their own `seen_by`).
  const expected = Object.keys(METRICS).filter(
    (name) => !name.startsWith('sluice.compaction.') && name !== METRIC_SLUICE_STORAGE_CORRUPT_OBJECTS,
  );
  assert.deepEqual(data.map((d) => d.descriptor.name).sort(), expected.sort());
});

void test('createQueryMetrics pre-seeds both row-group states at 0', async () => {
  const data = await collect((meter) => void createQueryMetrics(meter));
  const rowGroups = data.find((d) => d.descriptor.name === METRIC_SLUICE_QUERY_ROW_GROUPS);
  if (rowGroups === undefined) return assert.fail('row groups not collected');
  const states = rowGroups.dataPoints.map((p) => [p.attributes[ATTR_SLUICE_QUERY_ROW_GROUP_STATE], p.value]);
  assert.deepEqual(states.sort(), [
    ['pruned', 0],
    ['scanned', 0],
  ]);
});

// Compile-time contract: attribute keys and closed enum values are checked. Never called; `tsc -b` fails if the
// registry types stop rejecting these.
export function typeContract(meter: Meter): void {
  const records = createInstrument(meter, METRIC_SLUICE_INGEST_RECORDS);
  records.add(1, { [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_GRPC });
  // @ts-expect-error not a declared protocol value
  records.add(1, { [ATTR_SLUICE_INGEST_PROTOCOL]: 'udp' });
  // @ts-expect-error the required protocol attribute is missing
  records.add(1, { [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: 'scanned' });
  // @ts-expect-error a counter has no record()
  records.record(1);
}
