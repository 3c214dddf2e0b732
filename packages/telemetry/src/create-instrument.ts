/**
 * @module create-instrument
 * The one place that turns a registry entry into an OpenTelemetry instrument. Name, kind, unit, description and
 * histogram bucket advice all come from the generated {@link METRICS} table, and the instrument's attribute type
 * is the registry's attribute set for that metric, so a wrong key or enum value fails compilation.
 */
import type { Counter, Gauge, Histogram, Meter, MetricOptions, UpDownCounter } from '@opentelemetry/api';
import { METRICS } from './semconv.js';
import type { InstrumentKind, MetricAttributesByName, MetricDefinition, MetricName } from './semconv.js';

/** The OpenTelemetry instrument type for an instrument kind, typed by its attributes. */
export type InstrumentOfKind<
  K extends InstrumentKind,
  A extends MetricAttributesByName[MetricName],
> = K extends 'counter'
  ? Counter<A>
  : K extends 'histogram'
    ? Histogram<A>
    : K extends 'updowncounter'
      ? UpDownCounter<A>
      : Gauge<A>;

/** The instrument {@link createInstrument} returns for a registry metric. */
export type InstrumentFor<N extends MetricName> = InstrumentOfKind<
  (typeof METRICS)[N]['instrument'],
  MetricAttributesByName[N]
>;

/**
 * Creates the instrument a registry metric declares.
 * @param meter - the meter to create it on (usually `telemetry.meter`).
 * @param name - a generated `METRIC_*` constant.
 * @example
 * const records = createInstrument(meter, METRIC_SLUICE_INGEST_RECORDS); // Counter<SluiceIngestRecordsAttributes>
 * records.add(12, { [ATTR_SLUICE_INGEST_PROTOCOL]: SLUICE_INGEST_PROTOCOL_VALUE_GRPC });
 */
export function createInstrument<N extends MetricName>(meter: Meter, name: N): InstrumentFor<N> {
  const def: MetricDefinition = METRICS[name];
  const options: MetricOptions = { unit: def.unit, description: def.description };
  if (def.buckets !== undefined) options.advice = { explicitBucketBoundaries: [...def.buckets] };
  // The casts restate what the conditional type already says; `def.instrument` is the discriminant.
  switch (def.instrument) {
    case 'counter':
      return meter.createCounter(def.name, options) as InstrumentFor<N>;
    case 'histogram':
      return meter.createHistogram(def.name, options) as InstrumentFor<N>;
    case 'updowncounter':
      return meter.createUpDownCounter(def.name, options) as InstrumentFor<N>;
    case 'gauge':
      return meter.createGauge(def.name, options) as InstrumentFor<N>;
  }
}
