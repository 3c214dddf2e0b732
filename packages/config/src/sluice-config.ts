/**
 * @module sluice-config
 * The validated configuration as the rest of Sluice sees it: camelCase, fully defaulted, deeply readonly (and
 * frozen at run time). Each field mirrors one snake_case key of the file (docs/configuration.md); units are in the names.
 * `null` means "unset" where a key has no default value.
 */

/** Object-store backend. */
export type StorageBackend = 'local' | 's3';

/** What a query does with a corrupt or foreign object: answer `storage_corrupt`, or serve the rest. */
export type CorruptObjectPolicy = 'fail' | 'skip';

/**
 * What the per-query result ceilings do (`querier.limits.enforcement`): `enforce` refuses (or, for `max_rows`,
 * clamps); `observe` serves the query, logs a warning and counts `sluice.query.budget_exceeded`.
 */
export type CeilingEnforcement = 'enforce' | 'observe';

/** `server`: the process as a whole. */
export interface ServerConfig {
  /** `shutdown_timeout_secs`: longest graceful stop; storage work still running then is abandoned. */
  readonly shutdownTimeoutSecs: number;
}

/** `storage.local`. */
export interface LocalStorageConfig {
  /** `root`: directory of the local object store. */
  readonly root: string;
  /** `request_timeout_ms`: longest one local-store call may take; 0 = no bound. */
  readonly requestTimeoutMs: number;
}

/** `storage.s3`. Credentials are best given as `${env:…}` references; `null` = the AWS SDK default chain. */
export interface S3StorageConfig {
  /** `bucket`: never `null` when `backend` is `s3` (validated). */
  readonly bucket: string | null;
  /** `endpoint`: URL of an S3-compatible server; `null` = AWS for `region`. */
  readonly endpoint: string | null;
  readonly region: string;
  /** `prefix`: key prefix inside the bucket; `''` = the bucket root. */
  readonly prefix: string;
  readonly accessKeyId: string | null;
  readonly secretAccessKey: string | null;
  readonly forcePathStyle: boolean;
  /** `connect_timeout_ms`: longest wait for a connection. */
  readonly connectTimeoutMs: number;
  /** `request_timeout_ms`: longest one request attempt may take, send to last byte. */
  readonly requestTimeoutMs: number;
  /** `max_attempts`: attempts of one call on a transient failure before `storage_unavailable`. */
  readonly maxAttempts: number;
  /** `retry_base_ms`: back-off before the second attempt (doubling, full jitter). */
  readonly retryBaseMs: number;
  /** `retry_max_ms`: longest back-off between attempts. */
  readonly retryMaxMs: number;
}

/** `storage`. */
export interface StorageConfig {
  readonly backend: StorageBackend;
  readonly local: LocalStorageConfig;
  readonly s3: S3StorageConfig;
}

/** `receiver.wal`. */
export interface WalConfig {
  /** `group_commit_ms`: longest wait before appended exports are fsync'd (sooner when a segment fills). */
  readonly groupCommitMs: number;
  /** `segment_bytes`: segment size before rotation. */
  readonly segmentBytes: number;
  /** `max_backlog_bytes`: WAL bytes not yet in object storage above which ingest answers 503. */
  readonly maxBacklogBytes: number;
  /** `fence_retry_ms`: least time a fenced WAL refuses exports, and the retry interval of its cut (docs/design/wal.md). */
  readonly fenceRetryMs: number;
}

/** `receiver.sink`: Parquet flush triggers. */
export interface SinkConfig {
  readonly flushAgeSecs: number;
  /** `flush_interval_ms`: the freshness cadence (flush once the oldest buffered record waited this long); 0 = off. */
  readonly flushIntervalMs: number;
  readonly flushBytes: number;
  /**
   * `ceiling_bytes`: the total sink buffer that forces flushes; `null` = derived from the memory limit
   * (docs/deployment.md, "Sizing the sink ceiling").
   */
  readonly ceilingBytes: number | null;
}

/** `receiver.limits`: request body caps. */
export interface ReceiverLimitsConfig {
  /** `max_request_bytes`: body as sent (compressed). */
  readonly maxRequestBytes: number;
  /** `max_decompressed_bytes`: body after decompression (gzip-bomb guard). */
  readonly maxDecompressedBytes: number;
  /** `max_inflight_bytes`: decompressed bodies awaiting their WAL fsync (bounds the append queue). */
  readonly maxInflightBytes: number;
  /**
   * `min_free_disk_percent`: free space on the WAL volume (percent of its size) below which ingest is refused
   * (`disk_low`) and the receiver is not ready; 0 disables the disk guard.
   */
  readonly minFreeDiskPercent: number;
}

/** `receiver.miner`: template-miner parameters (packages/miner/README.md). */
export interface MinerConfig {
  /** `similarity_threshold`, in (0, 1]. */
  readonly similarityThreshold: number;
  /** `prefix_depth`, 0..8. */
  readonly prefixDepth: number;
  readonly maxNodeChildren: number;
  /** `param_byte_limit`, 1..1024. */
  readonly paramByteLimit: number;
  readonly maxTemplatesPerTenant: number;
  readonly maxLineTokens: number;
}

/** `receiver`. */
export interface ReceiverConfig {
  readonly enabled: boolean;
  /** `grpc_addr`: `host:port`; see `splitHostPort`. */
  readonly grpcAddr: string;
  /** `http_addr`: `host:port`; see `splitHostPort`. */
  readonly httpAddr: string;
  /** `max_http_connections`: OTLP/HTTP connections at once; `null` = derived from the open-file limit. */
  readonly maxHttpConnections: number | null;
  /** `max_grpc_connections`: OTLP/gRPC connections at once; `null` = derived from the open-file limit. */
  readonly maxGrpcConnections: number | null;
  readonly walDir: string;
  readonly wal: WalConfig;
  readonly sink: SinkConfig;
  readonly limits: ReceiverLimitsConfig;
  readonly miner: MinerConfig;
}

/** `querier.loki` (docs/grafana.md). */
export interface LokiConfig {
  readonly enabled: boolean;
  readonly tenantHeader: string;
  readonly sampleRows: number;
}

/** `querier.mcp`. */
export interface McpConfig {
  readonly enabled: boolean;
}

/** `querier.ui` (docs/console.md). */
export interface ConsoleUiConfig {
  /** Serve the web console at `/` on the query listener. */
  readonly enabled: boolean;
}

/** `querier.limits` (docs/design/query-governance.md). */
export interface QueryLimitsConfig {
  /** `memory_pool_bytes`: explicit pool size, at least 32 MiB; `null` = derived from the memory limit (docs/deployment.md). */
  readonly memoryPoolBytes: number | null;
  /** `memory_pool_fraction`: in (0, 1]; `null` = 0.5 with another role in the process, else 0.75. */
  readonly memoryPoolFraction: number | null;
  readonly maxConcurrentQueries: number;
  /** `max_queued_queries`: 0 disables queueing. */
  readonly maxQueuedQueries: number;
  readonly queueTimeoutMs: number;
  /** `query_timeout_ms`: execution deadline after admission; 0 = none. */
  readonly queryTimeoutMs: number;
  /** `max_concurrent_queries_per_tenant`: running + queued per tenant; `null` = ceil((max_concurrent + max_queued) / 2). */
  readonly maxConcurrentQueriesPerTenant: number | null;
  /** `light_query_permits`: permits reserved for light queries; 0 = one lane. */
  readonly lightQueryPermits: number;
  /** `light_query_ms`: the execution time a light query's last run stayed within. */
  readonly lightQueryMs: number;
  /** `light_query_memory_bytes`: the pool bytes a light query's last run stayed within; `null` = pool / 16. */
  readonly lightQueryMemoryBytes: number | null;
  /** `query_parallelism`: workers one large aggregation may scan with on an idle querier; `null` = 1 (no helpers). */
  readonly queryParallelism: number | null;
  /** `max_query_memory_bytes`: per-query ceiling on the pool; `null` = half the pool. */
  readonly maxQueryMemoryBytes: number | null;
  /** `max_live_tails`: live tails open at once (all tenants); past it 503 `query_tail_limit`. */
  readonly maxLiveTails: number;
  /** `max_tail_secs`: longest life of one live tail. */
  readonly maxTailSecs: number;
  /** `max_tail_buffer_bytes`: NDJSON bytes one tail holds for a slow client (pool-reserved) before it drops. */
  readonly maxTailBufferBytes: number;
  /** `tail_poll_ms`: interval between a tail's polls of the store. */
  readonly tailPollMs: number;
  readonly maxListedObjects: number;
  readonly maxFiles: number;
  /** `default_rows`: never above `maxRows` (validated). */
  readonly defaultRows: number;
  readonly maxRows: number;
  readonly maxResultBytes: number;
  /** `footer_cache_bytes`: parsed footers per query worker (capped at pool / (8 x max_concurrent_queries)); 0 = off. */
  readonly footerCacheBytes: number;
  /** `max_open_files`: local data files each query worker keeps open; 0 = none kept. */
  readonly maxOpenFiles: number;
  /**
   * `enforcement`: `observe` serves a query past `max_result_bytes`, `max_rows` or `max_query_memory_bytes` (a warning
   * and a count instead of a refusal); the pool, the files, the time and the admission limits are enforced either way.
   */
  readonly enforcement: CeilingEnforcement;
}

/** `querier`. */
export interface QuerierConfig {
  readonly enabled: boolean;
  /** `http_addr`: `host:port`; see `splitHostPort`. */
  readonly httpAddr: string;
  /** `max_connections`: query listener connections at once; `null` = derived from the open-file limit. */
  readonly maxConnections: number | null;
  readonly defaultWindowSecs: number;
  /** `on_corrupt_object`: `fail` answers `storage_corrupt`; `skip` serves the rest, counted in `objects_skipped`. */
  readonly onCorruptObject: CorruptObjectPolicy;
  readonly mcp: McpConfig;
  readonly ui: ConsoleUiConfig;
  readonly loki: LokiConfig;
  readonly limits: QueryLimitsConfig;
}

/** `compaction`. */
export interface CompactionConfig {
  readonly enabled: boolean;
  readonly intervalSecs: number;
  readonly graceSecs: number;
  /**
   * `open_hour_min_file_age_secs`: merge level-0 (sink) files of hours still open once they are this old; 0 = only
   * sealed hours are compacted.
   */
  readonly openHourMinFileAgeSecs: number;
  /** `memory_budget_bytes`: decoded bytes one partition merge may hold at once. */
  readonly memoryBudgetBytes: number;
}

/** `tenancy`. */
export interface TenancyConfig {
  /** `header`: HTTP header naming the tenant (gRPC: the same name lowercased). */
  readonly header: string;
  /** `default_tenant`: satisfies the tenant grammar; `null` = the header is required. */
  readonly defaultTenant: string | null;
}

/** `auth`: optional bearer-token authentication (docs/security.md). */
export interface AuthConfig {
  /** `enabled`: when true, exactly one of `tokensFile` / `tokens` is set (validated). */
  readonly enabled: boolean;
  /** `tokens_file`: path of the token document. */
  readonly tokensFile: string | null;
  /** `tokens`: the token document inline (env-only mode). */
  readonly tokens: string | null;
  /** `protect_metrics`: `/metrics` needs an `admin` token when auth is enabled. */
  readonly protectMetrics: boolean;
}

/** `telemetry`. */
export interface TelemetryConfig {
  /** `otlp_endpoint`: `null` = metrics are not pushed. */
  readonly otlpEndpoint: string | null;
  readonly prometheus: boolean;
  readonly serviceName: string;
}

/**
 * A complete, validated Sluice configuration. At least one of `receiver`, `querier`, `compaction` is enabled.
 */
export interface SluiceConfig {
  /** `version`: the configuration format major version (always 1 today). */
  readonly version: 1;
  readonly server: ServerConfig;
  readonly storage: StorageConfig;
  readonly receiver: ReceiverConfig;
  readonly querier: QuerierConfig;
  readonly compaction: CompactionConfig;
  readonly tenancy: TenancyConfig;
  readonly auth: AuthConfig;
  readonly telemetry: TelemetryConfig;
}
