/**
 * @module connection-metrics
 * Instruments of the listeners' connection caps: connections refused because a listener was full.
 */
import type { Meter } from '@opentelemetry/api';
import { createInstrument } from './create-instrument.js';
import type { InstrumentFor } from './create-instrument.js';
import { METRIC_SLUICE_CONNECTION_REFUSED } from './semconv.js';

/** The connection-cap instruments. */
export interface ConnectionMetrics {
  /** `sluice.connection.refused` counter, `{connection}`; requires `sluice.listener` and `sluice.connection.refusal`. */
  readonly refused: InstrumentFor<typeof METRIC_SLUICE_CONNECTION_REFUSED>;
}

/** Creates the connection-cap instruments on `meter`. */
export function createConnectionMetrics(meter: Meter): ConnectionMetrics {
  return { refused: createInstrument(meter, METRIC_SLUICE_CONNECTION_REFUSED) };
}
