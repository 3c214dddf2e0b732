/**
 * @module to-sluice-config
 * Maps the schema's snake_case output to the camelCase {@link SluiceConfig}, field by field (the compiler
 * checks that no field is forgotten), and freezes the result.
 */
import type { RawConfig } from './config-schema.js';
import type { SluiceConfig } from './sluice-config.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** Converts validated schema output into the frozen camelCase configuration. */
export function toSluiceConfig(raw: RawConfig): SluiceConfig {
  const { server, storage, receiver, querier, compaction, tenancy, auth, telemetry } = raw;
  const config: SluiceConfig = {
    version: raw.version,
    server: { shutdownTimeoutSecs: server.shutdown_timeout_secs },
    storage: {
      backend: storage.backend,
      local: { root: storage.local.root, requestTimeoutMs: storage.local.request_timeout_ms },
      s3: {
        bucket: storage.s3.bucket,
        endpoint: storage.s3.endpoint,
        region: storage.s3.region,
        prefix: storage.s3.prefix,
        accessKeyId: storage.s3.access_key_id,
        secretAccessKey: storage.s3.secret_access_key,
        forcePathStyle: storage.s3.force_path_style,
        connectTimeoutMs: storage.s3.connect_timeout_ms,
        requestTimeoutMs: storage.s3.request_timeout_ms,
        maxAttempts: storage.s3.max_attempts,
        retryBaseMs: storage.s3.retry_base_ms,
        retryMaxMs: storage.s3.retry_max_ms,
      },
    },
    receiver: {
      enabled: receiver.enabled,
      grpcAddr: receiver.grpc_addr,
      httpAddr: receiver.http_addr,
      maxHttpConnections: receiver.max_http_connections,
      maxGrpcConnections: receiver.max_grpc_connections,
      walDir: receiver.wal_dir,
      wal: {
        groupCommitMs: receiver.wal.group_commit_ms,
        segmentBytes: receiver.wal.segment_bytes,
        maxBacklogBytes: receiver.wal.max_backlog_bytes,
        fenceRetryMs: receiver.wal.fence_retry_ms,
      },
      sink: {
        flushAgeSecs: receiver.sink.flush_age_secs,
        flushIntervalMs: receiver.sink.flush_interval_ms,
        flushBytes: receiver.sink.flush_bytes,
        ceilingBytes: receiver.sink.ceiling_bytes,
      },
      limits: {
        maxRequestBytes: receiver.limits.max_request_bytes,
        maxDecompressedBytes: receiver.limits.max_decompressed_bytes,
        maxInflightBytes: receiver.limits.max_inflight_bytes,
        minFreeDiskPercent: receiver.limits.min_free_disk_percent,
      },
      miner: {
        similarityThreshold: receiver.miner.similarity_threshold,
        prefixDepth: receiver.miner.prefix_depth,
        maxNodeChildren: receiver.miner.max_node_children,
        paramByteLimit: receiver.miner.param_byte_limit,
        maxTemplatesPerTenant: receiver.miner.max_templates_per_tenant,
        maxLineTokens: receiver.miner.max_line_tokens,
      },
    },
    querier: {
      enabled: querier.enabled,
      httpAddr: querier.http_addr,
      maxConnections: querier.max_connections,
      defaultWindowSecs: querier.default_window_secs,
      onCorruptObject: querier.on_corrupt_object,
      mcp: { enabled: querier.mcp.enabled },
      ui: { enabled: querier.ui.enabled },
      loki: {
        enabled: querier.loki.enabled,
        tenantHeader: querier.loki.tenant_header,
        sampleRows: querier.loki.sample_rows,
      },
      limits: {
        memoryPoolBytes: querier.limits.memory_pool_bytes,
        memoryPoolFraction: querier.limits.memory_pool_fraction,
        maxConcurrentQueries: querier.limits.max_concurrent_queries,
        maxQueuedQueries: querier.limits.max_queued_queries,
        queueTimeoutMs: querier.limits.queue_timeout_ms,
        queryTimeoutMs: querier.limits.query_timeout_ms,
        maxConcurrentQueriesPerTenant: querier.limits.max_concurrent_queries_per_tenant,
        maxQueryMemoryBytes: querier.limits.max_query_memory_bytes,
        queryParallelism: querier.limits.query_parallelism,
        lightQueryPermits: querier.limits.light_query_permits,
        lightQueryMs: querier.limits.light_query_ms,
        lightQueryMemoryBytes: querier.limits.light_query_memory_bytes,
        maxLiveTails: querier.limits.max_live_tails,
        maxTailSecs: querier.limits.max_tail_secs,
        maxTailBufferBytes: querier.limits.max_tail_buffer_bytes,
        tailPollMs: querier.limits.tail_poll_ms,
        maxListedObjects: querier.limits.max_listed_objects,
        maxFiles: querier.limits.max_files,
        defaultRows: querier.limits.default_rows,
        maxRows: querier.limits.max_rows,
        maxResultBytes: querier.limits.max_result_bytes,
        footerCacheBytes: querier.limits.footer_cache_bytes,
        maxOpenFiles: querier.limits.max_open_files,
        enforcement: querier.limits.enforcement,
      },
    },
    compaction: {
      enabled: compaction.enabled,
      intervalSecs: compaction.interval_secs,
      graceSecs: compaction.grace_secs,
      openHourMinFileAgeSecs: compaction.open_hour_min_file_age_secs,
      memoryBudgetBytes: compaction.memory_budget_bytes,
    },
    tenancy: { header: tenancy.header, defaultTenant: tenancy.default_tenant },
    auth: {
      enabled: auth.enabled,
      tokensFile: auth.tokens_file,
      tokens: auth.tokens,
      protectMetrics: auth.protect_metrics,
    },
    telemetry: {
      otlpEndpoint: telemetry.otlp_endpoint,
      prometheus: telemetry.prometheus,
      serviceName: telemetry.service_name,
    },
  };
  return deepFreeze(config);
}
