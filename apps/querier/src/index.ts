/**
 * @module @sluice/querier
 * The querier role: `/v1/query` and MCP over the stored logs, executed in query workers under one shared memory
 * pool and one admission gate.
 */
export { startQuerier } from './start-querier.js';
export type { Querier, QuerierDeps } from './start-querier.js';
export type { QueryObserver, QueryMetricKind } from './query-service.js';
export type { QueryError, QueryErrorKind } from './query-error.js';
export { httpStatusFor, mcpErrorCodeFor } from './query-error.js';
export { FOOTER_CACHE_CONSUMER_PREFIX, footerCacheHeldBytes, nonCacheHeldBytes } from './worker-footer-cache.js';
