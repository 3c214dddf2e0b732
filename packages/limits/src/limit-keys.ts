/**
 * @module limit-keys
 * The configuration key behind each limit, named by the rejection messages and by `limitErrorDetails`, so both
 * always name the same key (docs/design/query-governance.md).
 */
export { POOL_BYTES_KEY } from './derive-pool-size.js';

/** The per-query memory ceiling. */
export const MAX_QUERY_MEMORY_KEY = 'querier.limits.max_query_memory_bytes';
/** Query permits. */
export const MAX_CONCURRENT_KEY = 'querier.limits.max_concurrent_queries';
/** Admission queue slots. */
export const MAX_QUEUED_KEY = 'querier.limits.max_queued_queries';
/** Longest wait in the admission queue. */
export const QUEUE_TIMEOUT_KEY = 'querier.limits.queue_timeout_ms';
/** Objects one query may list. */
export const MAX_LISTED_OBJECTS_KEY = 'querier.limits.max_listed_objects';
/** Files one query may read. */
export const MAX_FILES_KEY = 'querier.limits.max_files';
/** The manifest size cap is fixed, not configurable; this label says so where a key would go. */
export const MANIFEST_BYTES_LIMIT = 'manifest_bytes (fixed, not configurable)';
/** The largest row limit a query may ask for (a clamp in enforce mode, observed in observe mode). */
export const MAX_ROWS_KEY = 'querier.limits.max_rows';
/** Rendered result bytes. */
export const MAX_RESULT_BYTES_KEY = 'querier.limits.max_result_bytes';
/** Longest execution of an admitted query. */
export const QUERY_TIMEOUT_KEY = 'querier.limits.query_timeout_ms';
/** Where a request asks for a shorter execution deadline than {@link QUERY_TIMEOUT_KEY}. */
export const REQUEST_TIMEOUT_PARAMS = 'timeout_ms / X-Sluice-Query-Timeout-Ms';
/** One tenant's running plus queued queries. */
export const MAX_PER_TENANT_KEY = 'querier.limits.max_concurrent_queries_per_tenant';
