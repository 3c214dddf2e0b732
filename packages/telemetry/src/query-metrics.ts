/**
 * @module query-metrics
 * Instruments of the querier: query latency (rejections carry `error.type`), row-group pruning, the memory pool,
 * the admission queue, the live tails, the size of every answer, and the result ceilings an observe-mode querier let pass.
 */
import type { Meter } from '@opentelemetry/api';
import { createInstrument } from './create-instrument.js';
import type { InstrumentFor } from './create-instrument.js';
import {
  ATTR_SLUICE_QUERY_LIMIT,
  ATTR_SLUICE_QUERY_ROW_GROUP_STATE,
  METRIC_SLUICE_QUERY_BUDGET_EXCEEDED,
  METRIC_SLUICE_QUERY_DURATION,
  METRIC_SLUICE_QUERY_IN_FLIGHT,
  METRIC_SLUICE_QUERY_POOL_LENT,
  METRIC_SLUICE_QUERY_POOL_FOOTER_CACHE,
  METRIC_SLUICE_QUERY_POOL_LIMIT,
  METRIC_SLUICE_QUERY_POOL_RESERVED,
  METRIC_SLUICE_QUERY_QUEUE_DEPTH,
  METRIC_SLUICE_QUERY_RESPONSE_SIZE,
  METRIC_SLUICE_QUERY_ROW_GROUPS,
  METRIC_SLUICE_QUERY_TAILS_OPEN,
  SLUICE_QUERY_LIMIT_VALUE_MAX_QUERY_MEMORY_BYTES,
  SLUICE_QUERY_LIMIT_VALUE_MAX_RESULT_BYTES,
  SLUICE_QUERY_LIMIT_VALUE_MAX_ROWS,
  SLUICE_QUERY_ROW_GROUP_STATE_VALUE_PRUNED,
  SLUICE_QUERY_ROW_GROUP_STATE_VALUE_SCANNED,
} from './semconv.js';

/** The querier's instruments. */
export interface QueryMetrics {
  /** `sluice.query.duration` histogram, `s`; requires `sluice.query.kind`, a rejection adds `error.type`. */
  readonly duration: InstrumentFor<typeof METRIC_SLUICE_QUERY_DURATION>;
  /** `sluice.query.row_groups` counter, `{row_group}`; both states are pre-seeded with 0. */
  readonly rowGroups: InstrumentFor<typeof METRIC_SLUICE_QUERY_ROW_GROUPS>;
  /** `sluice.query.pool.reserved` gauge, `By`. */
  readonly poolReserved: InstrumentFor<typeof METRIC_SLUICE_QUERY_POOL_RESERVED>;
  /** `sluice.query.pool.lent` gauge, `By`: the part of the reserved bytes lent to compaction. */
  readonly poolLent: InstrumentFor<typeof METRIC_SLUICE_QUERY_POOL_LENT>;
  /** `sluice.query.pool.footer_cache` gauge, `By`: the part of the reserved bytes the query workers' footer caches hold. */
  readonly poolFooterCache: InstrumentFor<typeof METRIC_SLUICE_QUERY_POOL_FOOTER_CACHE>;
  /** `sluice.query.pool.limit` gauge, `By`. */
  readonly poolLimit: InstrumentFor<typeof METRIC_SLUICE_QUERY_POOL_LIMIT>;
  /** `sluice.query.queue.depth` gauge, `{query}` waiting for a permit. */
  readonly queueDepth: InstrumentFor<typeof METRIC_SLUICE_QUERY_QUEUE_DEPTH>;
  /** `sluice.query.in_flight` gauge, `{query}` holding an admission permit. */
  readonly inFlight: InstrumentFor<typeof METRIC_SLUICE_QUERY_IN_FLIGHT>;
  /** `sluice.query.tails.open` gauge, `{tail}`: live tails open now. */
  readonly tailsOpen: InstrumentFor<typeof METRIC_SLUICE_QUERY_TAILS_OPEN>;
  /** `sluice.query.response.size` histogram, `By`: every answer's result bytes; requires `sluice.query.kind`. */
  readonly responseSize: InstrumentFor<typeof METRIC_SLUICE_QUERY_RESPONSE_SIZE>;
  /** `sluice.query.budget_exceeded` counter, `{query}`, by `sluice.query.limit`; every limit pre-seeded with 0. */
  readonly budgetExceeded: InstrumentFor<typeof METRIC_SLUICE_QUERY_BUDGET_EXCEEDED>;
}

/**
 * Creates the querier instruments on `meter`. Both `sluice.query.row_group.state` series of
 * `sluice.query.row_groups` start at 0, so a pruned fraction can be computed before the first pruned row group.
 */
export function createQueryMetrics(meter: Meter): QueryMetrics {
  const rowGroups = createInstrument(meter, METRIC_SLUICE_QUERY_ROW_GROUPS);
  rowGroups.add(0, { [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: SLUICE_QUERY_ROW_GROUP_STATE_VALUE_SCANNED });
  rowGroups.add(0, { [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: SLUICE_QUERY_ROW_GROUP_STATE_VALUE_PRUNED });
  // Seeded so an operator watching an observe-mode rollout reads 0, not "no data", until a ceiling is crossed.
  const budgetExceeded = createInstrument(meter, METRIC_SLUICE_QUERY_BUDGET_EXCEEDED);
  for (const limit of [
    SLUICE_QUERY_LIMIT_VALUE_MAX_RESULT_BYTES,
    SLUICE_QUERY_LIMIT_VALUE_MAX_ROWS,
    SLUICE_QUERY_LIMIT_VALUE_MAX_QUERY_MEMORY_BYTES,
  ] as const)
    budgetExceeded.add(0, { [ATTR_SLUICE_QUERY_LIMIT]: limit });
  return {
    duration: createInstrument(meter, METRIC_SLUICE_QUERY_DURATION),
    rowGroups,
    poolReserved: createInstrument(meter, METRIC_SLUICE_QUERY_POOL_RESERVED),
    poolLent: createInstrument(meter, METRIC_SLUICE_QUERY_POOL_LENT),
    poolFooterCache: createInstrument(meter, METRIC_SLUICE_QUERY_POOL_FOOTER_CACHE),
    poolLimit: createInstrument(meter, METRIC_SLUICE_QUERY_POOL_LIMIT),
    queueDepth: createInstrument(meter, METRIC_SLUICE_QUERY_QUEUE_DEPTH),
    inFlight: createInstrument(meter, METRIC_SLUICE_QUERY_IN_FLIGHT),
    tailsOpen: createInstrument(meter, METRIC_SLUICE_QUERY_TAILS_OPEN),
    responseSize: createInstrument(meter, METRIC_SLUICE_QUERY_RESPONSE_SIZE),
    budgetExceeded,
  };
}
