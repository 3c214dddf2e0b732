/**
 * @module miner-metrics
 * Instruments of the template miner: how many templates it holds and how many records it could not mine.
 */
import type { Meter } from '@opentelemetry/api';
import { createInstrument } from './create-instrument.js';
import type { InstrumentFor } from './create-instrument.js';
import { METRIC_SLUICE_MINER_PARSE_FAILURES, METRIC_SLUICE_MINER_TEMPLATE_COUNT } from './semconv.js';

/** The miner's instruments. */
export interface MinerMetrics {
  /** `sluice.miner.template.count` gauge, `{template}`. */
  readonly templateCount: InstrumentFor<typeof METRIC_SLUICE_MINER_TEMPLATE_COUNT>;
  /** `sluice.miner.parse_failures` counter, `{record}`; requires `sluice.miner.parse_failure.reason`. */
  readonly parseFailures: InstrumentFor<typeof METRIC_SLUICE_MINER_PARSE_FAILURES>;
}

/** Creates the miner instruments on `meter`. */
export function createMinerMetrics(meter: Meter): MinerMetrics {
  return {
    templateCount: createInstrument(meter, METRIC_SLUICE_MINER_TEMPLATE_COUNT),
    parseFailures: createInstrument(meter, METRIC_SLUICE_MINER_PARSE_FAILURES),
  };
}
