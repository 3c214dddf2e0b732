/**
 * @module @sluice/limits
 * Query resource governance (docs/design/query-governance.md): the process-wide shared memory pool and per-query
 * reservations, the admission gate, pool sizing from the cgroup/meminfo limit, result byte budgets and the typed
 * rejections. The only package that counts query bytes.
 */
export type { GrowOutcome, GrowRefused, MemoryCeiling, MemoryRefusalKind } from './grow-outcome.js';
export { classifyRefusal } from './grow-outcome.js';
export type { PoolReservation, QueryGroup, QueryReservation } from './query-reservation.js';
export type {
  CreateQueryOptions,
  MemoryPool,
  MemoryPoolOptions,
  PoolConsumer,
  SharedMemoryPoolHandle,
} from './memory-pool.js';
export { createMemoryPool, attachMemoryPool, DEFAULT_QUERY_SLOTS } from './memory-pool.js';
export type { CgroupLimit, MemoryReading, MemorySource, MemorySourcePaths } from './memory-source.js';
export { createMemorySource, V1_UNLIMITED_THRESHOLD } from './memory-source.js';
export type {
  DerivePoolSizeOptions,
  EffectiveLimit,
  PoolRoles,
  PoolSizeError,
  PoolSizeSource,
  PoolSizing,
} from './derive-pool-size.js';
export {
  derivePoolSize,
  effectiveLimit,
  shareToPpm,
  MIN_POOL_BYTES,
  FALLBACK_POOL_BYTES,
  SHARED_PROCESS_SHARE,
  QUERIER_ONLY_SHARE,
  POOL_BYTES_KEY,
  POOL_FRACTION_KEY,
} from './derive-pool-size.js';
export type { DeriveSinkCeilingOptions, SinkCeilingSizing, SinkCeilingSource } from './derive-sink-ceiling.js';
export {
  deriveSinkCeiling,
  BASELINE_BYTES,
  FALLBACK_SINK_CEILING_BYTES,
  MAX_SINK_CEILING_BYTES,
  MIN_SINK_CEILING_BYTES,
  SINK_CEILING_KEY,
  SINK_SHARE_WITH_QUERIER,
  SINK_SHARE_WITHOUT_QUERIER,
} from './derive-sink-ceiling.js';
export type { MemoryFigure, MemoryFitError, MemoryPlan, PlanMemoryOptions } from './memory-plan.js';
export { planMemory } from './memory-plan.js';
export type {
  AdmissionGate,
  AdmissionGateOptions,
  AdmitOutcome,
  AdmitRejected,
  AdmitRejectionKind,
  GateTimers,
  Permit,
} from './admission-gate.js';
export { createAdmissionGate } from './admission-gate.js';
export type { BudgetOutcome, ResultBudget, ResultBudgetOptions } from './result-budget.js';
export type { CeilingCrossed, CeilingEnforcement, ResultCeiling } from './ceiling-observation.js';
export { resultCeilingKey } from './ceiling-observation.js';
export { createResultBudget } from './result-budget.js';
export type { FileLimitCap, LimitError, LimitErrorKind } from './limit-errors.js';
export {
  LIMIT_ERROR_KINDS,
  describeLimitError,
  isRetryableLimitError,
  limitErrorFromAdmission,
  limitErrorFromBudget,
  limitErrorFromRefusal,
  limitErrorStatus,
} from './limit-errors.js';
export type { LimitErrorDetails } from './limit-error-details.js';
export { limitErrorDetails } from './limit-error-details.js';
