/**
 * @module @sluice/engine
 * The query executor: partition walk with listing/file/manifest caps, row-group pruning, predicate evaluation,
 * records, aggregations, drift and the template registry, all reserved on the shared memory pool before anything
 * is held, and rendered through the result budget.
 */
export type {
  ExecuteHooks,
  ExecuteLimits,
  ExecuteOptions,
  ExecuteOutcome,
  QueryFailure,
  QueryStats,
  ResultFormat,
} from './execute.js';
export { ARROW_METADATA, ARROW_STREAM } from './arrow-log-result.js';
export { executeQuery } from './execute.js';
export type { CorruptObject, CorruptObjectPolicy } from './corrupt-objects.js';
export { MAX_SKIPPED_OBJECTS_LISTED } from './corrupt-objects.js';
export type { HeapReclaimer } from './tracker.js';
export type { LineSink } from './line-stream.js';
export { STREAM_BATCH_BYTES, STREAM_BATCHES_IN_FLIGHT } from './line-stream.js';
export type { ListTemplatesOptions } from './templates.js';
export { listTemplates } from './templates.js';
export type { LiveFile } from './listing.js';
export { MAX_REGEX_PATTERN_BYTES } from './predicate-eval.js';
export type { TailPollOptions, TailPollOutcome } from './tail-poll.js';
export { pollTail } from './tail-poll.js';
export { projectedKeys } from './records.js';
export type { LendResult, PartialScan, ScanHelpers, ShareOutcome } from './scan-share.js';
export { executeScanShare, mergesExactly } from './scan-share.js';
