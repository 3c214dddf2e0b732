/**
 * @module observers
 * Turns receiver and sink events into self-metrics (names only from semconv) and log lines.
 */
import type { Meter } from '@opentelemetry/api';
import type { ListenerCap, RefusalKind } from '@sluice/edge';
import type { LoanFigures } from './pool-lender.js';
import type { QueryObserver } from '@sluice/querier';
import type { MemoryPool } from '@sluice/limits';
import type {
  DiskGuardObserver,
  DiskSample,
  FromSinkWorker,
  IngestObserver,
  ReceiverBudgets,
  SinkObserver,
  WalObserver,
} from '@sluice/receiver';
import {
  ATTR_ERROR_TYPE,
  ATTR_SLUICE_CONNECTION_REFUSAL,
  ATTR_SLUICE_LISTENER,
  createConnectionMetrics,
  ATTR_SLUICE_QUERY_KIND,
  ATTR_SLUICE_QUERY_LIMIT,
  ATTR_SLUICE_QUERY_ROW_GROUP_STATE,
  SLUICE_QUERY_ROW_GROUP_STATE_VALUE_PRUNED,
  SLUICE_QUERY_ROW_GROUP_STATE_VALUE_SCANNED,
  createQueryMetrics,
  ATTR_SLUICE_INGEST_PROTOCOL,
  ATTR_SLUICE_MINER_PARSE_FAILURE_REASON,
  ATTR_SLUICE_SINK_FLUSH_TRIGGER,
  createIngestMetrics,
  createMinerMetrics,
  createSinkMetrics,
  createBudgetMetrics,
  SLUICE_BUDGET_POOL_VALUE_COMPACTOR_LOAN,
  SLUICE_BUDGET_POOL_VALUE_INFLIGHT_BODIES,
  SLUICE_BUDGET_POOL_VALUE_QUERY_POOL,
  SLUICE_BUDGET_POOL_VALUE_SINK_BUFFERS,
  SLUICE_BUDGET_POOL_VALUE_WAL_BACKLOG,
  type BudgetReading,
  type Logger,
  type SluiceListenerValue,
} from '@sluice/telemetry';

/** Ingest metrics: records, batches, request size, WAL append duration; refusals carry `error.type`. */
export function createIngestObserver(meter: Meter): IngestObserver {
  const m = createIngestMetrics(meter);
  return {
    accepted(protocol, _tenant, records, bytes, walSeconds) {
      const attrs = { [ATTR_SLUICE_INGEST_PROTOCOL]: protocol };
      m.records.add(records, attrs);
      m.batches.add(1, attrs);
      m.requestSize.record(bytes, attrs);
      m.walAppendDuration.record(walSeconds);
    },
    refused(protocol, outcome) {
      const attrs = { [ATTR_SLUICE_INGEST_PROTOCOL]: protocol, [ATTR_ERROR_TYPE]: outcome.status };
      m.batches.add(1, attrs);
    },
  };
}

/**
 * One line when the WAL fences (errno, the operation and file it failed on, where it was cut back to) and one when it
 * resumes (docs/design/wal.md, "Fence and resume"). The file and errno are for the operator; clients never see them.
 */
export function createWalObserver(log: Logger): WalObserver {
  return {
    fenced(event) {
      log.error('WAL fenced after an I/O error; exports are refused (503) until it resumes', {
        errno: event.error.errno ?? null,
        error: event.error.message,
        file: event.error.file ?? null,
        durable_position: `${event.durable.segment}:${event.durable.offset}`,
        cut: event.cut,
        ...(event.cutError !== null ? { cut_error: event.cutError.message } : {}),
      });
    },
    resumed(event) {
      log.info('WAL resumed; exports are accepted again', {
        errno: event.error.errno ?? null,
        fenced_ms: event.fencedMs,
        durable_position: `${event.durable.segment}:${event.durable.offset}`,
      });
    },
  };
}

/**
 * Sink metrics and logs: flushes, failures, buffer usage, miner state. A run of failing flushes (an outage, a full
 * store volume) is logged once when it starts, again only when its error code changes, and once when a flush
 * succeeds again; every failed attempt is still counted on `sluice.sink.flush.errors`.
 */
export function createSinkObserver(
  meter: Meter,
  log: Logger,
  now: () => number = () => performance.now(),
): SinkObserver {
  const sink = createSinkMetrics(meter);
  const miner = createMinerMetrics(meter);
  let failing: { readonly since: number; attempts: number; code: string | null } | null = null;
  return {
    message(message: FromSinkWorker) {
      switch (message.type) {
        case 'flushed': {
          const attrs = { [ATTR_SLUICE_SINK_FLUSH_TRIGGER]: message.trigger };
          sink.flushDuration.record(message.seconds, attrs);
          sink.flushRecords.add(message.records, attrs);
          sink.visibilityLag.record(message.visibilityLagSecs);
          sink.bufferUsage.record(0);
          miner.templateCount.record(message.templates);
          if (failing !== null) {
            log.info('sink flush succeeded again after failing', {
              failed_attempts: failing.attempts,
              failing_secs: Number(((now() - failing.since) / 1000).toFixed(1)),
            });
            failing = null;
          }
          log.info('sink flushed', {
            trigger: message.trigger,
            records: message.records,
            files: message.files,
            bytes: message.bytes,
            seconds: Number(message.seconds.toFixed(3)),
          });
          break;
        }
        case 'flush_failed': {
          sink.flushErrors.add(1, { [ATTR_SLUICE_SINK_FLUSH_TRIGGER]: message.trigger, [ATTR_ERROR_TYPE]: 'storage' });
          const first = failing === null || failing.code !== message.code;
          if (failing === null) failing = { since: now(), attempts: 0, code: message.code };
          failing.attempts++;
          failing.code = message.code;
          if (!first) break;
          log.error(
            message.code === 'ENOSPC'
              ? 'sink flush failed: no space left on the store volume; retrying with back-off (data stays in the WAL, ingest answers 503 once the backlog reaches receiver.wal.max_backlog_bytes)'
              : 'sink flush failed; retrying with back-off (data stays in the WAL)',
            { trigger: message.trigger, code: message.code ?? 'none', error: message.message },
          );
          break;
        }
        case 'buffer':
          sink.bufferUsage.record(message.bytes);
          break;
        case 'parse_failures':
          if (
            message.reason === 'below_floor' ||
            message.reason === 'line_too_long' ||
            message.reason === 'template_ceiling' ||
            message.reason === 'degenerate_widening'
          ) {
            miner.parseFailures.add(message.count, { [ATTR_SLUICE_MINER_PARSE_FAILURE_REASON]: message.reason });
          } else {
            log.error('sink skipped an undecodable WAL record', { reason: message.reason });
          }
          break;
        case 'replayed':
          log.info('sink replayed the WAL', { exports: message.exports });
          break;
        case 'fatal':
          log.error('sink worker failed; restarting it from the last checkpoint', { error: message.message });
          break;
        case 'stopped':
          break;
      }
    },
    workerExited(code) {
      if (code !== 0) log.warn('sink worker exited', { code });
    },
  };
}

/** The log fields of a disk-guard sample: where, how much is free, and the threshold. */
function diskFields(sample: DiskSample): Record<string, string | number> {
  return {
    path: sample.path,
    free_bytes: sample.freeBytes,
    total_bytes: sample.totalBytes,
    free_percent: Number(sample.freePercent.toFixed(2)),
    min_free_disk_percent: sample.thresholdPercent,
  };
}

/**
 * The disk guard's log lines: one warning when it trips (exports refused `disk_low`, `/readyz` 503), one info
 * line when it clears, one error when `statfs` starts failing. Refusals are counted on `sluice.ingest.batches`
 * with `error.type` = `disk_low` by the ingest observer.
 */
export function createDiskGuardObserver(log: Logger): DiskGuardObserver {
  return {
    tripped(sample) {
      log.warn(
        'WAL volume below receiver.limits.min_free_disk_percent; refusing exports (disk_low) and not ready',
        diskFields(sample),
      );
    },
    cleared(sample) {
      log.info('WAL volume free space recovered; accepting exports again', diskFields(sample));
    },
    checkFailed(path, message) {
      log.error('disk guard cannot read the WAL volume free space; keeping the last verdict', {
        path,
        error: message,
      });
    },
  };
}

/**
 * Query metrics: one `sluice.query.duration` point per query (rejections carry `error.type`), row groups by state,
 * one `sluice.query.response.size` point per answer, and `sluice.query.budget_exceeded` per ceiling observe mode let
 * pass.
 */
export function createQueryObserver(meter: Meter): QueryObserver {
  const m = createQueryMetrics(meter);
  return {
    finished(kind, seconds, errorKind, rowGroups) {
      m.duration.record(
        seconds,
        errorKind === null
          ? { [ATTR_SLUICE_QUERY_KIND]: kind }
          : { [ATTR_SLUICE_QUERY_KIND]: kind, [ATTR_ERROR_TYPE]: errorKind },
      );
      if (rowGroups !== null) {
        m.rowGroups.add(rowGroups.scanned, {
          [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: SLUICE_QUERY_ROW_GROUP_STATE_VALUE_SCANNED,
        });
        m.rowGroups.add(rowGroups.pruned, {
          [ATTR_SLUICE_QUERY_ROW_GROUP_STATE]: SLUICE_QUERY_ROW_GROUP_STATE_VALUE_PRUNED,
        });
      }
    },
    answered(kind, bytes) {
      m.responseSize.record(bytes, { [ATTR_SLUICE_QUERY_KIND]: kind });
    },
    ceilingCrossed(limit) {
      m.budgetExceeded.add(1, { [ATTR_SLUICE_QUERY_LIMIT]: limit });
    },
  };
}

/**
 * Samples the pool, the admission queue, the permits held and the live tails open into their gauges every `intervalMs` and whenever `sample()` is called
 * (the `/metrics` handler calls it, so a scrape always sees the current figures).
 */
export function samplePoolGauges(
  meter: Meter,
  read: () => {
    reserved: number;
    lent: number;
    footerCache: number;
    limit: number;
    queueDepth: number;
    inFlight: number;
    tailsOpen: number;
  },
  intervalMs = 1000,
): { sample(): void; stop(): void } {
  const m = createQueryMetrics(meter);
  const sample = (): void => {
    const v = read();
    m.poolReserved.record(v.reserved);
    m.poolLent.record(v.lent);
    m.poolFooterCache.record(v.footerCache);
    m.poolLimit.record(v.limit);
    m.queueDepth.record(v.queueDepth);
    m.inFlight.record(v.inFlight);
    m.tailsOpen.record(v.tailsOpen);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return { sample, stop: () => clearInterval(timer) };
}

/** The managed budgets that exist in a process: a role that does not run contributes none. */
export interface BudgetSources {
  /** The receiver's budgets, when it runs. */
  readonly receiver: (() => ReceiverBudgets) | null;
  /** The query pool, when the querier runs. */
  readonly pool: MemoryPool | null;
  /** The compactor's loan from the pool, when the compactor shares the process with the querier. */
  readonly loan: (() => LoanFigures) | null;
}

/** Every budget's figures now, in the order of the budget tree (docs/deployment.md, "The budget tree"). */
export function readBudgets(sources: BudgetSources): BudgetReading[] {
  const out: BudgetReading[] = [];
  if (sources.pool !== null) {
    const pool = sources.pool;
    out.push({
      pool: SLUICE_BUDGET_POOL_VALUE_QUERY_POOL,
      used: pool.reserved(),
      peak: pool.peakReserved(),
      limit: pool.size,
    });
  }
  if (sources.loan !== null) out.push({ pool: SLUICE_BUDGET_POOL_VALUE_COMPACTOR_LOAN, ...sources.loan() });
  if (sources.receiver !== null) {
    const r = sources.receiver();
    out.push({ pool: SLUICE_BUDGET_POOL_VALUE_SINK_BUFFERS, ...r.sinkBuffers });
    out.push({ pool: SLUICE_BUDGET_POOL_VALUE_INFLIGHT_BODIES, ...r.inflightBodies });
    out.push({ pool: SLUICE_BUDGET_POOL_VALUE_WAL_BACKLOG, ...r.walBacklog });
  }
  return out;
}

/**
 * Records the budget gauges (`sluice.budget.used` / `peak` / `limit`) every `intervalMs` and whenever `sample()`
 * is called (the `/metrics` handler calls it, so a scrape reads the figures of that moment).
 */
export function sampleBudgetGauges(
  meter: Meter,
  read: () => readonly BudgetReading[],
  intervalMs = 1000,
): { sample(): void; stop(): void } {
  const m = createBudgetMetrics(meter);
  const sample = (): void => m.record(read());
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return { sample, stop: () => clearInterval(timer) };
}

/** Least time between two "connection cap reached" log lines of one listener. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/**
 * Connection-cap refusals: `sluice.connection.refused` per listener and kind, and a warning per listener at most
 * every 10 s (a flood must not flood the log too) with the count refused since the previous line.
 */
export function createConnectionObserver(
  meter: Meter,
  log: Logger,
  now: () => number = () => performance.now(),
): (cap: ListenerCap, how: RefusalKind) => void {
  const m = createConnectionMetrics(meter);
  const state = new Map<string, { lastLog: number; pending: number }>();
  return (cap, how) => {
    m.refused.add(1, {
      [ATTR_SLUICE_LISTENER]: cap.listener as SluiceListenerValue,
      [ATTR_SLUICE_CONNECTION_REFUSAL]: how,
    });
    const s = state.get(cap.listener) ?? { lastLog: -Infinity, pending: 0 };
    state.set(cap.listener, s);
    s.pending++;
    const t = now();
    if (t - s.lastLog < REFUSAL_LOG_INTERVAL_MS) return;
    log.warn('connection cap reached; refusing new connections', {
      listener: cap.listener,
      key: cap.key,
      max_connections: cap.maxConnections,
      refused: s.pending,
    });
    s.lastLog = t;
    s.pending = 0;
  };
}
