/**
 * @module start-server
 * Composes the enabled roles in one process: telemetry first, then the receiver (WAL recovery before its
 * listeners open). Logs one startup line per role with its bound addresses, and stops in reverse order. Every
 * listener shares one access gate and gets its connection cap from one file-handle budget.
 */
import { startCompactor, type Compactor } from '@sluice/compactor';
import type { SluiceConfig } from '@sluice/config';
import type { Probes } from '@sluice/core';
import { readOpenFileLimit, type AccessGate, type ConnectionCap } from '@sluice/edge';
import { createMemorySource, type MemorySource } from '@sluice/limits';
import { planProcessMemory } from './memory-setup.js';
import { createListenerCaps, planListenerCaps } from './access-setup.js';
import { footerCacheHeldBytes, startQuerier, type Querier } from '@sluice/querier';
import { createPoolLender, lentBytes, type PoolLender } from './pool-lender.js';
import { startReceiver, type Receiver } from '@sluice/receiver';
import { createLogger, createTelemetry, type Logger } from '@sluice/telemetry';
import {
  createConnectionObserver,
  createDiskGuardObserver,
  createIngestObserver,
  createQueryObserver,
  createSinkObserver,
  createWalObserver,
  readBudgets,
  sampleBudgetGauges,
  samplePoolGauges,
  type BudgetSources,
} from './observers.js';

/** A running gateway. */
/** The steps of a graceful stop, in order. */
export type StopStage = 'compactor' | 'querier' | 'receiver' | 'telemetry';

export interface RunningServer {
  readonly log: Logger;
  readonly receiver: Receiver | null;
  readonly querier: Querier | null;
  readonly compactor: Compactor | null;
  /** Stops the roles in reverse order; `onStage` hears each step as it begins (a bounded stop names where it was cut). */
  stop(onStage?: (stage: StopStage) => void): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** The access gate built from `auth.*` and `tenancy.*` (see `loadAccessGate`). */
  readonly access: AccessGate;
  /** The soft open-file limit; default: read from /proc/self/limits. */
  readonly openFileLimit?: number | null;
  /** Where the memory limit is read from; default: the real `/proc` and `/sys/fs/cgroup` (tests inject fixtures). */
  readonly memorySource?: MemorySource;
}

/**
 * Starts every enabled role of `config`.
 * @throws Error before anything is opened when the memory plan does not fit the detected limit (naming each
 * figure), or when the pool configuration is invalid.
 */
export async function startServer(
  config: SluiceConfig,
  version: string,
  options: StartServerOptions,
): Promise<RunningServer> {
  const log = createLogger('sluice');
  // Before anything opens: the pool and the sink ceiling from one reading of the memory limit, checked to fit.
  const memory = planProcessMemory(config, options.memorySource ?? createMemorySource(), log);
  const telemetry = createTelemetry({
    serviceName: config.telemetry.serviceName,
    otlpEndpoint: config.telemetry.otlpEndpoint,
    prometheus: config.telemetry.prometheus,
  });
  let receiver: Receiver | null = null;
  // Assigned once the querier starts; read by the /metrics handler.
  let gauges: { sample(): void; stop(): void } | null = null;
  // Assigned once every role has started; read by the /metrics handler.
  let budgetGauges: { sample(): void; stop(): void } | null = null;
  const probes: Probes = {
    notReadyReason: () => {
      if (receiver !== null) return receiver.notReadyReason();
      return config.receiver.enabled ? 'receiver starting' : null;
    },
    metricsText: async () => {
      if (!config.telemetry.prometheus) return null;
      gauges?.sample();
      budgetGauges?.sample();
      return telemetry.metricsText();
    },
  };

  const plan = planListenerCaps(
    config,
    options.openFileLimit !== undefined ? options.openFileLimit : readOpenFileLimit(),
  );
  log.info('connection caps', {
    open_file_limit: plan.openFileLimit,
    reserved_handles: plan.reservedHandles,
    ...Object.fromEntries(plan.caps.map((c) => [c.key, `${c.maxConnections} (${c.source})`])),
  });
  for (const warning of plan.warnings) log.warn(warning);
  const caps = createListenerCaps(plan, createConnectionObserver(telemetry.meter, log));
  const capOf = (listener: string): ConnectionCap => {
    const cap = caps.get(listener);
    if (cap === undefined) throw new Error(`no connection cap planned for ${listener}`);
    return cap;
  };
  log.info('access', {
    auth: options.access.authEnabled,
    tenant_header: options.access.tenantHeader,
    default_tenant: config.tenancy.defaultTenant,
  });

  if (config.receiver.enabled) {
    if (memory.sinkCeiling === null) throw new Error('no sink ceiling was planned for the receiver (a bug)');
    receiver = await startReceiver(config, {
      probes,
      access: options.access,
      connectionCaps: { http: capOf('otlp_http'), grpc: capOf('otlp_grpc') },
      sinkCeilingBytes: memory.sinkCeiling.sizeBytes,
      ingestObserver: createIngestObserver(telemetry.meter),
      sinkObserver: createSinkObserver(telemetry.meter, log),
      walObserver: createWalObserver(log),
      diskGuardObserver: createDiskGuardObserver(log),
    });
    const http = `${receiver.httpAddress.address}:${receiver.httpAddress.port}`;
    const grpcHost = config.receiver.grpcAddr.slice(0, config.receiver.grpcAddr.lastIndexOf(':'));
    log.info('receiver started', {
      http,
      grpc: `${grpcHost}:${receiver.grpcPort}`,
      wal_dir: config.receiver.walDir,
      storage: config.storage.backend,
    });
    const started = Date.now();
    void receiver.whenReplayed().then(() => log.info('WAL replay finished', { ms: Date.now() - started }));
  }
  let querier: Querier | null = null;
  if (config.querier.enabled) {
    querier = await startQuerier(config, {
      probes,
      log,
      observer: createQueryObserver(telemetry.meter),
      meter: telemetry.meter,
      version,
      access: options.access,
      connectionCap: capOf('query_http'),
      ...(memory.pool !== null ? { poolSizing: memory.pool } : {}),
    });
    const q = querier;
    gauges = samplePoolGauges(telemetry.meter, () => ({
      reserved: q.pool.reserved(),
      lent: lentBytes(q.pool),
      footerCache: footerCacheHeldBytes(q.pool),
      limit: q.pool.size,
      queueDepth: q.queueDepth(),
      inFlight: q.inFlight(),
      tailsOpen: q.tailsOpen(),
    }));
    log.info('querier started', {
      http: `${q.address.address}:${q.address.port}`,
      mcp: config.querier.mcp.enabled,
      pool_bytes: q.pool.size,
    });
  }

  let compactor: Compactor | null = null;
  let lender: PoolLender | null = null;
  if (config.compaction.enabled) {
    // Sharing a process with the querier, a merge borrows its memory from the query pool (one bound for both).
    lender = querier !== null ? createPoolLender(querier.pool) : null;
    compactor = startCompactor(config, {
      log: createLogger('compactor'),
      meter: telemetry.meter,
      ...(lender !== null ? { memoryLender: lender } : {}),
    });
    log.info('compactor started', {
      interval_secs: config.compaction.intervalSecs,
      grace_secs: config.compaction.graceSecs,
    });
  }

  const r = receiver;
  const l = lender;
  const budgets: BudgetSources = {
    receiver: r !== null ? () => r.budgets() : null,
    pool: querier?.pool ?? null,
    loan: l !== null ? () => l.figures() : null,
  };
  budgetGauges = sampleBudgetGauges(telemetry.meter, () => readBudgets(budgets));

  return {
    log,
    receiver,
    querier,
    compactor,
    async stop(onStage) {
      if (compactor !== null) {
        onStage?.('compactor');
        await compactor.stop();
        log.info('compactor stopped');
      }
      gauges?.stop();
      budgetGauges?.stop();
      if (querier !== null) {
        onStage?.('querier');
        await querier.stop();
        log.info('querier stopped');
      }
      if (receiver !== null) {
        onStage?.('receiver');
        await receiver.stop();
        log.info('receiver stopped');
      }
      onStage?.('telemetry');
      await telemetry.shutdown();
    },
  };
}
