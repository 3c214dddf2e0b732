/**
 * @module start-querier
 * The querier role: size the shared memory pool (explicit, or a share of the cgroup / MemTotal limit), start one
 * query worker per admission permit, and serve `/v1/query`, `/mcp` and the probes on `querier.http_addr`.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Meter } from '@opentelemetry/api';
import { trackRequests, type RequestDrain } from './request-drain.js';
import { serve, type ServerType } from '@hono/node-server';
import { splitHostPort, type QueryLimitsConfig, type SluiceConfig } from '@sluice/config';
import { HTTP_KEEP_ALIVE_TIMEOUT_MS, type Probes } from '@sluice/core';
import type { AccessGate, ConnectionCap } from '@sluice/edge';
import {
  createAdmissionGate,
  createMemoryPool,
  createMemorySource,
  derivePoolSize,
  type MemoryPool,
  type MemorySource,
  type PoolSizing,
} from '@sluice/limits';
import { storageSettingsFrom } from '@sluice/storage';
import type { Logger } from '@sluice/telemetry';
import { createCorruptObjectLog } from './corrupt-object-log.js';
import { loadConsoleAssets } from '@sluice/console';
import { createLiveTails } from './live-tails.js';
import { createQueryApp } from './query-app.js';
import { createLokiTailUpgrade } from './loki/loki-tail.js';
import { createQueryCosts } from './query-costs.js';
import { createQueryService, type QueryObserver, type QueryServiceOptions } from './query-service.js';
import { createWorkerHeapStart } from './worker-heap-start.js';
import { createWorkerPool, type WorkerPool } from './worker-pool.js';
import type { QueryWorkerData } from './worker-protocol.js';
import { footerCacheBytesPerWorker, footerCacheHeldBytes } from './worker-footer-cache.js';

/** What the querier needs from its composition root. */
export interface QuerierDeps {
  readonly probes: Probes;
  /** The process's access gate (tokens, tenant rule), shared with every other surface. */
  readonly access: AccessGate;
  /** The query listener's connection cap (`querier.max_connections`). */
  readonly connectionCap: ConnectionCap;
  readonly log: Logger;
  readonly observer?: QueryObserver;
  /**
   * The process's meter, for the querier's own instruments (`sluice.storage.corrupt_objects`); absent = those are
   * not recorded.
   */
  readonly meter?: Meter;
  readonly version: string;
  /** Where the memory limit is read from (tests inject cgroup fixtures). */
  readonly memorySource?: MemorySource;
  /**
   * The pool size already resolved by the process's memory plan (`planMemory`, which also logged it); absent, the
   * querier sizes its pool itself from `memorySource`.
   */
  readonly poolSizing?: PoolSizing;
}

/** A running querier. */
export interface Querier {
  readonly address: AddressInfo;
  readonly pool: MemoryPool;
  /** Queries waiting for a permit now. */
  queueDepth(): number;
  /** Admission permits held now. */
  inFlight(): number;
  /** Live tails open now. */
  tailsOpen(): number;
  stop(): Promise<void>;
}

/** Heap headroom per worker beyond the pool: V8's own structures and GC slack (measured, see README). */
const WORKER_HEAP_BASE_MB = 96;
/**
 * Garbage a worker may carry beyond its query's pool bytes before it forces a full GC (inside the base above: an
 * idle worker's heap is ~31 MiB, ~12 MiB of it live). Measured under the 1.5 GiB soak: see heap-reclaimer.ts.
 */
const WORKER_HEAP_SLACK_BYTES = 64 * 1_048_576;
/**
 * Query workers start with V8's first old-generation limit at that slack (see worker-heap-start.ts), unless the
 * operator set `--initial-old-space-size` for the process: then every isolate keeps the operator's value.
 */
const heapStart = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) =>
  a.includes('--initial-old-space-size'),
)
  ? undefined
  : createWorkerHeapStart({ initialOldSpaceMb: WORKER_HEAP_SLACK_BYTES / 1_048_576 });

/** Default `light_query_memory_bytes`: the pool divided by this. */
export const DEFAULT_LIGHT_QUERY_POOL_DIVISOR = 16;

/** Default per-query ceiling as a share of the pool (`querier.limits.max_query_memory_bytes` unset). */
export const DEFAULT_QUERY_MEMORY_SHARE = 0.5;

/**
 * `querier.limits.query_parallelism` as resolved: the configured value, else 1 — no scan helpers. On the 2-core
 * machine we measure on, a helper made no query faster (one scan already keeps more than one core busy: its GC
 * threads, the file reads, the main thread), so helpers are an operator's choice on larger machines
 * (docs/design/query-governance.md, "Parallel scans").
 */
export function queryParallelism(configured: number | null): number {
  return configured ?? 1;
}

/** Starts the querier role; a bad pool configuration is a startup error (thrown with the key and value). */
export async function startQuerier(config: SluiceConfig, deps: QuerierDeps): Promise<Querier> {
  const limits = config.querier.limits;
  const sizing = deps.poolSizing
    ? { ok: true as const, value: deps.poolSizing }
    : derivePoolSize({
        explicitBytes: limits.memoryPoolBytes,
        fraction: limits.memoryPoolFraction,
        roles: { receiver: config.receiver.enabled, compaction: config.compaction.enabled, querier: true },
        source: deps.memorySource ?? createMemorySource(),
      });
  if (!sizing.ok) throw new Error(sizing.error.message);
  if (!deps.poolSizing) {
    deps.log.info('query memory pool sized', {
      bytes: sizing.value.sizeBytes,
      source: sizing.value.source,
      share: sizing.value.share,
      detail: sizing.value.description,
    });
    for (const warning of sizing.value.warnings) deps.log.warn(warning);
  }
  // Measured on Node 20: a process-wide --max-old-space-size also caps every worker's heap, overriding the
  // per-worker resourceLimits below, so queries the pool admits could die mid-run.
  const heapFlag = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) =>
    a.includes('--max-old-space-size'),
  );
  if (heapFlag)
    deps.log.warn(
      '--max-old-space-size is set for the process; on Node 20 it also caps query workers below their resourceLimits',
    );

  // Scan helpers (docs/design/query-governance.md, "Parallel scans"): each holds a share's slot and a footer cache.
  const helperCount = queryParallelism(limits.queryParallelism) - 1;
  const pool = createMemoryPool({
    sizeBytes: sizing.value.sizeBytes,
    // Per worker: its running query, a finished query's body still being sent, and its footer cache; and each
    // live tail holds a slot for its buffer reservation besides the queries' own.
    maxQueries: Math.max(64, limits.maxConcurrentQueries * 3) + limits.maxLiveTails + 2 * helperCount,
  });
  // The light lane's permits come out of max_concurrent_queries (one worker per permit either way, so the
  // workers' memory envelope is the same with or without the lane); the general lane keeps at least one.
  const lightPermits = Math.min(limits.lightQueryPermits, limits.maxConcurrentQueries - 1);
  if (lightPermits < limits.lightQueryPermits)
    deps.log.info('light query lane smaller than configured: the general lane keeps at least one permit', {
      light_query_permits: limits.lightQueryPermits,
      max_concurrent_queries: limits.maxConcurrentQueries,
      effective: lightPermits,
    });
  const generalPermits = limits.maxConcurrentQueries - lightPermits;
  const maxPerTenant =
    limits.maxConcurrentQueriesPerTenant ??
    Math.max(1, Math.ceil((limits.maxConcurrentQueries + limits.maxQueuedQueries) / 2));
  const gate = createAdmissionGate({
    maxConcurrent: generalPermits,
    maxQueued: limits.maxQueuedQueries,
    queueTimeoutMs: limits.queueTimeoutMs,
    maxPerTenant,
  });
  // The pool bounds what queries retain; the heap limits bound garbage. A query may hold much of the pool, but
  // N workers may not each grow to the pool: each worker gets 1.25 × its fair share of the pool plus a base, so
  // the sum of worker heaps stays near 1.25 × pool. A query that outgrows its worker's heap is failed as a
  // memory limit (the backstop), never the process.
  const poolMb = sizing.value.sizeBytes / 1_048_576;
  const fairShareBytes = Math.floor((1.25 * sizing.value.sizeBytes) / limits.maxConcurrentQueries);
  const maxOldGenerationSizeMb = Math.ceil((1.25 * poolMb) / limits.maxConcurrentQueries) + WORKER_HEAP_BASE_MB;
  // One query may not hold the whole pool, so it cannot turn every concurrent query into query_memory_contended;
  // and by default not more than its worker's heap can carry, so it is refused typed by the pool (422) before
  // the heap backstop has to stop its worker.
  const maxQueryBytes = Math.min(
    sizing.value.sizeBytes,
    limits.maxQueryMemoryBytes ??
      Math.min(Math.floor(sizing.value.sizeBytes * DEFAULT_QUERY_MEMORY_SHARE), fairShareBytes),
  );
  if (limits.maxQueryMemoryBytes !== null && limits.maxQueryMemoryBytes > sizing.value.sizeBytes)
    deps.log.warn('querier.limits.max_query_memory_bytes is larger than the pool; the pool is the ceiling', {
      max_query_memory_bytes: limits.maxQueryMemoryBytes,
      pool_bytes: sizing.value.sizeBytes,
    });
  deps.log.info('query limits', {
    query_timeout_ms: limits.queryTimeoutMs,
    max_query_memory_bytes: maxQueryBytes,
    enforcement: limits.enforcement,
    max_concurrent_queries_per_tenant: maxPerTenant,
    on_corrupt_object: config.querier.onCorruptObject,
  });
  deps.log.info('query worker heap limit', {
    workers: generalPermits,
    scan_helpers: helperCount,
    max_old_generation_mb: maxOldGenerationSizeMb,
  });
  // A general-lane query leaves the light lane's share free, so its ceiling is at most the rest of the pool: a
  // query that needs more than that is told to ask for less, not to retry.
  const lightSizing = lightLaneSizing(limits, lightPermits, sizing.value.sizeBytes, maxQueryBytes);
  const generalCeiling = Math.min(maxQueryBytes, sizing.value.sizeBytes - lightSizing.leaveFreeBytes);
  // Observe mode (docs/design/query-governance.md, "Observe, then enforce"): a general-lane query may hold what the
  // pool leaves the lane, and a peak past the resolved ceiling is reported instead of refused. The light lane's
  // ceiling is a lane choice, not a result ceiling: it is enforced either way (its run moves to this lane).
  const observe = limits.enforcement === 'observe';
  const workerData = {
    pool: pool.shared,
    storage: storageSettingsFrom(config.storage),
    defaultWindowSecs: config.querier.defaultWindowSecs,
    maxQueryBytes: observe ? sizing.value.sizeBytes - lightSizing.leaveFreeBytes : generalCeiling,
    ...(observe ? { observedQueryBytes: generalCeiling } : {}),
    heapSlackBytes: WORKER_HEAP_SLACK_BYTES,
    footerCacheBytes: footerCacheBytesPerWorker(
      limits.footerCacheBytes,
      sizing.value.sizeBytes,
      limits.maxConcurrentQueries,
    ),
    maxOpenFiles: limits.maxOpenFiles,
    onCorruptObject: config.querier.onCorruptObject,
    limits: {
      defaultRows: limits.defaultRows,
      maxRows: limits.maxRows,
      maxListedObjects: limits.maxListedObjects,
      maxFiles: limits.maxFiles,
      maxResultBytes: limits.maxResultBytes,
      enforcement: limits.enforcement,
    },
  };
  const onWorkerDeath = (info: { threadId: number; queryId: string | null; reason: string }): void =>
    info.reason === 'recycled'
      ? deps.log.info('query worker recycled', info)
      : info.reason === 'stopped'
        ? deps.log.info('query worker stopped (did not yield to a deadline or cancellation); replaced', info)
        : deps.log.warn('query worker died; replaced', info);
  const onTotalRepaired = (bytes: number): void =>
    deps.log.warn('query pool total repaired after a query worker died inside a pool update', { bytes });
  const onRepairAbandoned = (): void =>
    deps.log.warn(
      'query pool total not repaired: a reservation stayed busy; the total may read high until the next repair',
    );
  const workers = createWorkerPool({
    size: generalPermits,
    onTotalRepaired,
    onRepairAbandoned,
    pool,
    maxOldGenerationSizeMb,
    ...(heapStart !== undefined ? { heapStart } : {}),
    // Half the heap cap: an idle worker still holding more than that after a GC is replaced.
    data: { ...workerData, recycleBytes: Math.floor((maxOldGenerationSizeMb * 1_048_576) / 2) },
    onWorkerDeath,
    helpers: helperCount,
    // Lent only to a query running alone: no other query executing (either lane) and none queued.
    mayLend: () => inFlight() <= 1 && queueDepth() === 0,
  });
  const light = startLightLane(limits, lightSizing, maxPerTenant, {
    pool,
    workerData,
    onWorkerDeath,
    onTotalRepaired,
    onRepairAbandoned,
    log: deps.log,
    defaultWindowSecs: config.querier.defaultWindowSecs,
  });
  const service = createQueryService({
    gate,
    workers,
    pool,
    log: deps.log,
    queryTimeoutMs: limits.queryTimeoutMs,
    defaultWindowSecs: config.querier.defaultWindowSecs,
    ...(light ? { light: light.lane } : {}),
    ...(deps.observer ? { observer: deps.observer } : {}),
    corruptObjects: createCorruptObjectLog({
      log: deps.log,
      policy: config.querier.onCorruptObject,
      ...(deps.meter ? { meter: deps.meter } : {}),
    }),
  });
  const tails = createLiveTails({
    pool,
    log: deps.log,
    maxLiveTails: limits.maxLiveTails,
    maxTailBufferBytes: limits.maxTailBufferBytes,
  });
  const queueDepth = (): number => gate.queueDepth() + (light?.lane.gate.queueDepth() ?? 0);
  const inFlight = (): number => gate.inFlight() + (light?.lane.gate.inFlight() ?? 0);
  const app = createQueryApp({
    service,
    probes: deps.probes,
    access: deps.access,
    connectionCap: deps.connectionCap,
    mcpEnabled: config.querier.mcp.enabled,
    maxRows: limits.maxRows,
    ...(config.querier.loki.enabled
      ? {
          loki: {
            tenantHeader: config.querier.loki.tenantHeader,
            sampleRows: Math.min(config.querier.loki.sampleRows, limits.maxRows),
          },
        }
      : {}),
    version: deps.version,
    tails: {
      registry: tails,
      log: deps.log,
      maxTailMs: limits.maxTailSecs * 1000,
      maxTailBufferBytes: limits.maxTailBufferBytes,
      pollMs: limits.tailPollMs,
    },
    status: {
      access: deps.access,
      version: deps.version,
      features: { mcp: config.querier.mcp.enabled, tail: true },
      defaultTenantSet: config.tenancy.defaultTenant !== null,
      figures: () => ({
        poolReservedBytes: pool.reserved(),
        poolFooterCacheBytes: footerCacheHeldBytes(pool),
        poolLimitBytes: pool.size,
        queueDepth: queueDepth(),
        inFlight: inFlight(),
        tailsOpen: tails.openCount(),
      }),
    },
    ...(config.querier.ui.enabled ? { consoleAssets: loadConsoleAssets() } : {}),
  });
  const at = splitHostPort(config.querier.httpAddr);
  if (!at.ok) throw new Error(`invalid querier.http_addr: ${at.error}`);
  let requests: RequestDrain | undefined;
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve(
      {
        fetch: app.fetch,
        port: at.value.port,
        hostname: at.value.host,
        serverOptions: { keepAliveTimeout: HTTP_KEEP_ALIVE_TIMEOUT_MS },
      },
      () => resolve(s),
    );
    // Attached before the first connection is accepted (listen completes asynchronously).
    deps.connectionCap.attach(s as HttpServer);
    requests = trackRequests(s as HttpServer);
    if (config.querier.loki.enabled) {
      (s as HttpServer).on(
        'upgrade',
        createLokiTailUpgrade({
          service,
          access: deps.access,
          tenantHeader: config.querier.loki.tenantHeader,
          registry: tails,
          log: deps.log,
          maxTailMs: limits.maxTailSecs * 1000,
          maxTailBufferBytes: limits.maxTailBufferBytes,
          pollMs: limits.tailPollMs,
        }),
      );
    }
    s.once('error', reject);
  });
  return {
    address: server.address() as AddressInfo,
    pool,
    queueDepth,
    inFlight,
    tailsOpen: () => tails.openCount(),
    async stop() {
      // Open tails would otherwise hold their connections (and this stop) until max_tail_secs.
      tails.stopAll();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const http = server as HttpServer;
      http.closeIdleConnections();
      // Once every answer has gone out, what is left carries no request (a kept-alive or a never-used connection
      // the client holds open): close it, or it holds this stop until the headers timeout.
      await requests?.drained();
      http.closeAllConnections();
      await closed;
      await Promise.all([workers.close(), light?.workers.close()]);
    },
  };
}

/** What the light lane needs from the querier. */
interface LightLaneDeps {
  readonly pool: MemoryPool;
  readonly workerData: Omit<QueryWorkerData, 'recycleBytes'>;
  readonly onWorkerDeath: (info: { threadId: number; queryId: string | null; reason: string }) => void;
  readonly onTotalRepaired: (bytes: number) => void;
  readonly onRepairAbandoned: () => void;
  readonly log: Logger;
  readonly defaultWindowSecs: number;
}

/**
 * The light lane (docs/design/query-governance.md, "Fair shares"): `permits` of max_concurrent_queries, with their
 * own queue and query workers, for queries whose last run was light. Its workers' heap cap is sized for light
 * queries (a query that outgrows it is refused as a memory limit and is not light next time); the general
 * lane leaves `light_query_permits × light_query_memory_bytes` of the pool free for it, at most half the pool.
 * `null` when `permits` is 0.
 */
/** The light lane's memory: what a light query may hold, and what the general lane leaves free for the lane. */
interface LightSizing {
  readonly permits: number;
  readonly lightBytes: number;
  readonly leaveFreeBytes: number;
}

/** Sizes the light lane from the limits (`permits` 0: no lane, nothing left free). */
function lightLaneSizing(
  limits: QueryLimitsConfig,
  permits: number,
  poolBytes: number,
  maxQueryBytes: number,
): LightSizing {
  const lightBytes = Math.min(
    maxQueryBytes,
    limits.lightQueryMemoryBytes ?? Math.floor(poolBytes / DEFAULT_LIGHT_QUERY_POOL_DIVISOR),
  );
  const leaveFreeBytes = permits === 0 ? 0 : Math.min(permits * lightBytes, Math.floor(poolBytes / 2));
  return { permits, lightBytes, leaveFreeBytes };
}

function startLightLane(
  limits: QueryLimitsConfig,
  sizing: LightSizing,
  maxPerTenant: number,
  deps: LightLaneDeps,
): { readonly lane: NonNullable<QueryServiceOptions['light']>; readonly workers: WorkerPool } | null {
  const { permits, lightBytes, leaveFreeBytes } = sizing;
  if (permits === 0) return null;
  const heapMb = Math.ceil((1.25 * lightBytes) / 1_048_576) + WORKER_HEAP_BASE_MB;
  deps.log.info('light query lane', {
    permits,
    light_query_ms: limits.lightQueryMs,
    light_query_memory_bytes: lightBytes,
    pool_bytes_left_free: leaveFreeBytes,
    max_old_generation_mb: heapMb,
  });
  // The tenant share holds on this lane too: one tenant's dashboards cannot take every light permit.
  const gate = createAdmissionGate({
    maxConcurrent: permits,
    maxQueued: limits.maxQueuedQueries,
    queueTimeoutMs: limits.queueTimeoutMs,
    maxPerTenant,
  });
  // A light-lane query is refused typed at the lane's own ceiling (and then moved to the general lane) before
  // it can outgrow the light workers' smaller heap.
  const workers = createWorkerPool({
    size: permits,
    pool: deps.pool,
    maxOldGenerationSizeMb: heapMb,
    ...(heapStart !== undefined ? { heapStart } : {}),
    data: {
      ...withoutObservedCeiling(deps.workerData),
      maxQueryBytes: lightBytes,
      recycleBytes: Math.floor((heapMb * 1_048_576) / 2),
    },
    onWorkerDeath: deps.onWorkerDeath,
    onTotalRepaired: deps.onTotalRepaired,
    onRepairAbandoned: deps.onRepairAbandoned,
  });
  return {
    workers,
    lane: {
      gate,
      workers,
      permits,
      laneMs: limits.lightQueryMs,
      costs: createQueryCosts({ lightMs: limits.lightQueryMs, lightBytes }),
      leaveFreeBytes,
      defaultWindowSecs: deps.defaultWindowSecs,
    },
  };
}

/** The light lane's workers enforce their ceiling in either mode: no observed per-query ceiling. */
function withoutObservedCeiling(data: Omit<QueryWorkerData, 'recycleBytes'>): Omit<QueryWorkerData, 'recycleBytes'> {
  const { observedQueryBytes: _observed, ...rest } = data;
  return rest;
}
