/**
 * @module budget-metrics
 * The budget tree as gauges (docs/deployment.md, "The budget tree"): `sluice.budget.used`, `sluice.budget.peak` and
 * `sluice.budget.limit`, one series each per managed budget (`sluice.budget.pool`), all in bytes.
 */
import type { Meter } from '@opentelemetry/api';
import { createInstrument } from './create-instrument.js';
import type { InstrumentFor } from './create-instrument.js';
import {
  ATTR_SLUICE_BUDGET_POOL,
  METRIC_SLUICE_BUDGET_LIMIT,
  METRIC_SLUICE_BUDGET_PEAK,
  METRIC_SLUICE_BUDGET_USED,
  type SluiceBudgetPoolValue,
} from './semconv.js';

/** One budget's figures at a scrape, in bytes. */
export interface BudgetReading {
  readonly pool: SluiceBudgetPoolValue;
  /** Held now. */
  readonly used: number;
  /** The most held at once since the process started. */
  readonly peak: number;
  /** Its configured or derived size. */
  readonly limit: number;
}

/** The budget instruments. */
export interface BudgetMetrics {
  /** `sluice.budget.used` gauge, `By`; requires `sluice.budget.pool`. */
  readonly used: InstrumentFor<typeof METRIC_SLUICE_BUDGET_USED>;
  /** `sluice.budget.peak` gauge, `By`; requires `sluice.budget.pool`. */
  readonly peak: InstrumentFor<typeof METRIC_SLUICE_BUDGET_PEAK>;
  /** `sluice.budget.limit` gauge, `By`; requires `sluice.budget.pool`. */
  readonly limit: InstrumentFor<typeof METRIC_SLUICE_BUDGET_LIMIT>;
  /** Records every reading on the three gauges. */
  record(readings: readonly BudgetReading[]): void;
}

/** Creates the budget instruments on `meter`. */
export function createBudgetMetrics(meter: Meter): BudgetMetrics {
  const used = createInstrument(meter, METRIC_SLUICE_BUDGET_USED);
  const peak = createInstrument(meter, METRIC_SLUICE_BUDGET_PEAK);
  const limit = createInstrument(meter, METRIC_SLUICE_BUDGET_LIMIT);
  return {
    used,
    peak,
    limit,
    record(readings) {
      for (const r of readings) {
        const attrs = { [ATTR_SLUICE_BUDGET_POOL]: r.pool };
        used.record(r.used, attrs);
        peak.record(r.peak, attrs);
        limit.record(r.limit, attrs);
      }
    },
  };
}
