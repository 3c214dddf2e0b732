/**
 * @module query-service
 * One query, surface-independent (HTTP and MCP share it, and so share one admission gate): admit (per-tenant
 * share, bounded queue, timeout, cancellation), run on a query worker under a deadline, and hand back the
 * serialized body together with a `done()` that releases the permit and the body's reservation once the
 * response has been sent.
 *
 * Time is governed like memory (docs/design/query-governance.md, "Deadlines and cancellation"): execution after
 * admission has a deadline (`querier.limits.query_timeout_ms`, or less when the request asks for less). At the
 * deadline, or when the client goes away, the job is stopped — cooperatively, else by terminating its worker —
 * and its permit and reservations are released. A deadline is classified like the memory rule: if no other query
 * executed at any moment while this one ran, the query itself is too slow (422 `query_time_limit`); otherwise it
 * may have been slowed by the others (503 `query_time_contended`). Unless the query was waiting on failing storage
 * when it was stopped (its worker's store retried during the query, or a call had been pending too long): then the
 * deadline is not the query's fault, and it is 503 `storage_unavailable` (see storage-watch.ts).
 *
 * Two lanes (docs/design/query-governance.md, "Fair shares"): a query whose last run was light (fast, small, not
 * refused; see query-costs.ts) is admitted through the light lane's own permits and queue, which heavy queries
 * cannot take; every other query goes through the general lane, whose reservations leave the light lane's share
 * of the pool free. So a storm of over-wide queries is refused typed while dashboards keep being served.
 */
import type { Logger } from '@sluice/telemetry';
import {
  describeLimitError,
  limitErrorDetails,
  limitErrorFromAdmission,
  resultCeilingKey,
  type AdmissionGate,
  type CeilingCrossed,
  type ResultCeiling,
  type GateTimers,
  type LimitError,
  type MemoryPool,
} from '@sluice/limits';
import type { CorruptObjectLog } from './corrupt-object-log.js';
import type { QueryError } from './query-error.js';
import {
  queryFingerprint,
  statementFingerprint,
  type QueryCosts,
  type QueryLane,
  type RunCost,
} from './query-costs.js';
import { storageStalledError } from './storage-failure-text.js';
import { storageStall } from './storage-watch.js';
import type { JobResult, WorkerPool } from './worker-pool.js';
import type { QueryJobKind } from './worker-protocol.js';

/** Which surface metric kind a job counts as (`sluice.query.kind`). */
export type QueryMetricKind = 'logs' | 'drift' | 'templates';

/** Outcome of one query. */
export type ServiceOutcome =
  | {
      readonly status: 'ok';
      readonly body: Uint8Array;
      readonly rows: number;
      /** Releases the admission permit and the body's pool reservation. Call once the body has been sent. */
      done(): void;
    }
  | { readonly status: 'error'; readonly error: QueryError }
  | { readonly status: 'cancelled' };

/** Observations for metrics. */
export interface QueryObserver {
  finished(
    kind: QueryMetricKind,
    seconds: number,
    errorKind: string | null,
    rowGroups: { scanned: number; pruned: number } | null,
  ): void;
  /** A query answered with a result of `bytes` (the body, or every NDJSON line sent): `sluice.query.response.size`. */
  answered?(kind: QueryMetricKind, bytes: number): void;
  /** Observe mode served a query past `limit`: `sluice.query.budget_exceeded`. */
  ceilingCrossed?(limit: ResultCeiling): void;
}

/** Options for {@link createQueryService}. */
export interface QueryServiceOptions {
  readonly gate: AdmissionGate;
  readonly workers: WorkerPool;
  readonly pool: MemoryPool;
  readonly log: Logger;
  readonly observer?: QueryObserver;
  /** Where the corrupt objects queries meet are logged and counted. */
  readonly corruptObjects?: CorruptObjectLog;
  /** `querier.limits.query_timeout_ms`: the execution deadline after admission; 0 = none. Default 0. */
  readonly queryTimeoutMs?: number;
  /** `querier.default_window_secs`, for the fingerprint of log lines (default 3600). */
  readonly defaultWindowSecs?: number;
  /** Wall clock in ns (injectable for tests). */
  readonly nowNs?: () => bigint;
  /** Millisecond clock for elapsed time (injectable for tests). Default `performance.now`. */
  readonly now?: () => number;
  /** Deadline timers (injectable so tests run on paused time). */
  readonly timers?: GateTimers;
  /** The light lane; absent = one lane (every query through `gate`). */
  readonly light?: {
    readonly gate: AdmissionGate;
    /** The light lane's own query workers. */
    readonly workers: WorkerPool;
    /** `light_query_permits`. */
    readonly permits: number;
    /** A light-lane run still executing after this many ms (`light_query_ms`) is moved to the general lane. */
    readonly laneMs: number;
    readonly costs: QueryCosts;
    /** Pool bytes a general-lane query must leave free for the light lane. */
    readonly leaveFreeBytes: number;
    /** The querier's default window, for fingerprints (`querier.default_window_secs`). */
    readonly defaultWindowSecs: number;
  };
}

/** Per-request options of {@link QueryService.run}. */
export interface RunOptions {
  /** Aborts when the client goes away: a queued query leaves the queue, a running one is stopped. */
  readonly signal?: AbortSignal;
  /**
   * The deadline the request asked for, ms (≥ 1). It may shorten `query_timeout_ms`, never lengthen it: a larger
   * value is the configured one.
   */
  readonly timeoutMs?: number | null;
  /**
   * Stream the result (NDJSON, docs/design/query-governance.md "Streamed results"): every batch of lines is passed
   * to `write` as the worker sends it; the next batches wait until `write` resolves (written and drained). The ok
   * outcome's `body` is then the trailer line. A streamed query runs on the general lane only: the light lane moves
   * a run that outgrows it by running it again, which a stream that has sent lines cannot do.
   */
  readonly stream?: { write(batch: Uint8Array): Promise<void> };
}

/** The query service. */
export interface QueryService {
  run(tenant: string, job: QueryJobKind, options?: RunOptions): Promise<ServiceOutcome>;
}

function metricKind(job: QueryJobKind): QueryMetricKind {
  if (job.kind === 'list_templates') return 'templates';
  // A live tail's poll is a log query over the files it has not read yet.
  if (job.kind === 'tail_poll') return 'logs';
  return job.query.kind === 'drift' ? 'drift' : 'logs';
}

/** A limit rejection as this surface's error: the message and the details come from `@sluice/limits`. */
export function queryErrorFromLimit(limit: LimitError): QueryError {
  return { kind: limit.kind, message: describeLimitError(limit), details: limitErrorDetails(limit) };
}

/** The deadline that applies: the configured one, shortened (never lengthened) by the request's. */
export function effectiveTimeout(
  configuredMs: number,
  requestedMs: number | null | undefined,
): { readonly ms: number; readonly clientShortened: boolean } | null {
  const asked = requestedMs ?? null;
  if (configuredMs === 0) return asked === null ? null : { ms: asked, clientShortened: true };
  if (asked !== null && asked < configuredMs) return { ms: asked, clientShortened: true };
  return { ms: configuredMs, clientShortened: false };
}

const defaultTimers: GateTimers = {
  setTimeout: (cb, ms) => setTimeout(cb, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** What every attempt of one request shares. */
interface AttemptContext {
  readonly tenant: string;
  readonly job: QueryJobKind;
  readonly runOptions: RunOptions;
  readonly started: number;
  readonly kind: QueryMetricKind;
  readonly finish: (errorKind: string | null, rowGroups: { scanned: number; pruned: number } | null) => void;
  readonly fingerprint: string | null;
  /** Wall clock at the request, for the log fingerprint. */
  readonly nowNs: bigint;
  /** Execution time already spent on an earlier attempt (a probe moved off the light lane); part of the cost. */
  spentMs: number;
  /** Admitted to the light lane as a light query (not a probe): it may outstay light_query_ms there. */
  knownLight: boolean;
  /** The cost of a light-lane run that was moved, until the request's general run records its own. */
  movedCost: RunCost | null;
  /** Another query executed beside an earlier attempt (the deadline's 422/503 rule looks at the whole request). */
  overlapped: boolean;
}

/** One executing query, for the deadline's 422/503 rule. */
interface Execution {
  /** Another query executed at some moment while this one did. */
  overlapped: boolean;
}

/** Creates the query service. */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const { gate, workers, pool, log, observer } = options;
  const nowNs = options.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  const now = options.now ?? (() => performance.now());
  const timers = options.timers ?? defaultTimers;
  const configuredTimeoutMs = options.queryTimeoutMs ?? 0;
  const executing = new Set<Execution>();
  /** Fingerprints with a probe running on the light lane now. */
  const probing = new Set<string>();
  let sequence = 0;

  const begin = (): Execution => {
    const self: Execution = { overlapped: executing.size > 0 };
    for (const other of executing) other.overlapped = true;
    executing.add(self);
    return self;
  };

  return {
    async run(tenant, job, runOptions = {}) {
      const started = performance.now();
      const kind = metricKind(job);
      const finish = (errorKind: string | null, rowGroups: { scanned: number; pruned: number } | null): void =>
        observer?.finished(kind, (performance.now() - started) / 1000, errorKind, rowGroups);
      const light = options.light;
      const requestNs = nowNs();
      const fingerprint =
        light === undefined ? null : queryFingerprint(tenant, job, requestNs, light.defaultWindowSecs);
      const context: AttemptContext = {
        nowNs: requestNs,
        tenant,
        job,
        runOptions,
        started,
        kind,
        finish,
        fingerprint,
        spentMs: 0,
        movedCost: null,
        knownLight: false,
        overlapped: false,
      };
      if (light !== undefined && fingerprint !== null && runOptions.stream === undefined) {
        // Light: the light lane (it may queue there). Unknown, or slow and never light: a probe run on the light
        // lane, only when a light permit is free right now, so it can prove itself light without waiting there
        // (queueing would let a storm's slow queries hold light permits one after another). A light-lane run
        // that outgrows the lane (light_query_ms) is moved to the general lane — unless it is a light query and
        // the general lane could not take it at once: then it finishes here. One probe per fingerprint at a
        // time: twelve copies of an unknown heavy query arriving together would otherwise take every light
        // permit for light_query_ms each.
        const choice = light.costs.laneOf(fingerprint);
        const free = light.gate.admitsAtOnce(tenant);
        const probe = choice === 'probe' && free && !probing.has(fingerprint);
        if (choice === 'light' || probe) {
          if (probe) probing.add(fingerprint);
          let outcome: ServiceOutcome | 'moved';
          context.knownLight = choice === 'light';
          try {
            outcome = await attempt(context, 'light');
          } finally {
            if (probe) probing.delete(fingerprint);
          }
          if (outcome !== 'moved') return outcome;
        }
      }
      const outcome = await attempt(context, 'general');
      if (context.movedCost !== null && light !== undefined && fingerprint !== null)
        light.costs.record(fingerprint, context.movedCost);
      return outcome === 'moved'
        ? { status: 'error', error: { kind: 'internal', message: 'internal error' } }
        : outcome;
    },
  };

  /**
   * Observe mode (docs/design/query-governance.md, "Observe, then enforce"): one warning per ceiling a served query
   * went past, naming the query's fingerprint, the limit's key, the figure and the limit's value, and one count
   * each on `sluice.query.budget_exceeded` — what enforce mode would have refused (or, for max_rows, clamped).
   */
  function reportCrossed(
    crossed: readonly CeilingCrossed[],
    at: { id: string; tenant: string; kind: QueryMetricKind; lane: QueryLane; nowNs: bigint; job: QueryJobKind },
  ): void {
    const fingerprint = statementFingerprint(at.job, at.nowNs, options.defaultWindowSecs ?? 3600);
    for (const c of crossed) {
      observer?.ceilingCrossed?.(c.limit);
      log.warn('query past a result ceiling served (querier.limits.enforcement: observe)', {
        query: at.id,
        fingerprint,
        tenant: at.tenant,
        kind: at.kind,
        lane: at.lane,
        limit: resultCeilingKey(c.limit),
        value: c.value,
        ceiling: c.ceiling,
      });
    }
  }

  /** One admission and execution on `lane`; `moved` when a light-lane run outgrew the lane. */
  async function attempt(context: AttemptContext, lane: QueryLane): Promise<ServiceOutcome | 'moved'> {
    const { tenant, job, runOptions, started, kind, finish, fingerprint } = context;
    const { signal } = runOptions;
    const light = options.light;
    const onLight = lane === 'light' && light !== undefined;
    const admitted = await (onLight ? light.gate : gate).acquire(signal, tenant);
    if (admitted.status !== 'admitted') {
      const limit = limitErrorFromAdmission(admitted);
      if (limit === undefined) return { status: 'cancelled' };
      finish(limit.kind, null);
      return { status: 'error', error: queryErrorFromLimit(limit) };
    }
    const permit = admitted.permit;
    const id = `q${process.pid}-${++sequence}`;
    // A run moved off the light lane keeps what is left of its deadline, not a fresh one.
    const full = effectiveTimeout(configuredTimeoutMs, runOptions.timeoutMs);
    const deadline = full === null ? null : { ...full, ms: Math.max(1, Math.round(full.ms - context.spentMs)) };
    // One controller stops the job for any reason; `stoppedBy` remembers which came first.
    const stop = new AbortController();
    let stoppedBy: 'deadline' | 'client' | 'lane' | null = null;
    const onClientAbort = (): void => {
      stoppedBy ??= 'client';
      stop.abort();
    };
    signal?.addEventListener('abort', onClientAbort, { once: true });
    if (signal?.aborted) onClientAbort();
    // The deadline and the overlap rule start when the job reaches a worker: a wait for a replacement worker to
    // start (after a termination) is not the query's own time.
    let execution: Execution | null = null;
    let executionStarted = 0;
    const armed: unknown[] = [];
    const onDispatch = (): void => {
      execution = begin();
      executionStarted = now();
      if (deadline !== null) {
        armed.push(
          timers.setTimeout(() => {
            stoppedBy ??= 'deadline';
            stop.abort();
          }, deadline.ms),
        );
      }
      if (onLight && (deadline === null || light.laneMs < deadline.ms)) {
        armed.push(
          timers.setTimeout(() => {
            // Moving a run throws its work away, and under a storm the general lane would refuse it at once
            // (its tenant at its share, every permit held): a query known to be light then finishes here,
            // bounded by its deadline. A probe is always moved: it has not shown it belongs here.
            if (context.knownLight && !gate.admitsAtOnce(tenant)) return;
            stoppedBy ??= 'lane';
            stop.abort();
          }, light.laneMs),
        );
      }
    };
    let result: JobResult | null;
    /** Bytes of the NDJSON batches handed to the client so far. */
    let streamed = 0;
    const stream = runOptions.stream;
    try {
      result = await (onLight ? light.workers : workers).run(id, tenant, nowNs(), job, {
        signal: stop.signal,
        onDispatch,
        leaveFreeBytes: lane === 'general' && light ? light.leaveFreeBytes : 0,
        ...(stream
          ? {
              stream: {
                onBatch: (batch: Uint8Array) => {
                  streamed += batch.byteLength;
                  return stream.write(batch);
                },
              },
            }
          : {}),
      });
    } catch {
      result = null;
    } finally {
      if (execution !== null) executing.delete(execution);
      for (const t of armed) timers.clearTimeout(t);
      signal?.removeEventListener('abort', onClientAbort);
    }
    // A run the client abandoned says nothing about its cost; every other outcome does.
    const abandoned = result?.status === 'cancelled' && stoppedBy === 'client';
    if (light !== undefined && fingerprint !== null && execution !== null && !abandoned) {
      const cost: RunCost = {
        ms: context.spentMs + now() - executionStarted,
        peakBytes: result !== null && result.status !== 'cancelled' ? (result.peakBytes ?? 0) : 0,
        // Stopped at its deadline counts as refused; stopped for outgrowing the light lane is only slow.
        refused:
          result === null || result.status === 'error' || (result.status === 'cancelled' && stoppedBy === 'deadline'),
        contended: context.overlapped || (execution as Execution | null)?.overlapped === true,
      };
      const movedOff =
        onLight &&
        result !== null &&
        ((result.status === 'cancelled' && stoppedBy === 'lane') ||
          (result.status === 'error' && result.error.kind === 'query_memory_limit'));
      // One request is one run for the lane memory: a run moved off the light lane is recorded by its general
      // run (which counts both), or by run() when that never executes.
      if (movedOff) context.movedCost = cost;
      else {
        light.costs.record(fingerprint, cost);
        context.movedCost = null;
      }
    }
    if (result === null) {
      pool.releaseQuery(id);
      permit.release();
      finish('internal', null);
      return { status: 'error', error: { kind: 'internal', message: 'the query could not be run' } };
    }
    // A light-lane run that outgrew the lane in time (stopped at light_query_ms) or in memory (refused by the light
    // lane's own ceiling, light_query_memory_bytes, or by its smaller worker heap) is run again on the general lane.
    const outgrew =
      onLight &&
      ((result.status === 'cancelled' && stoppedBy === 'lane') ||
        (result.status === 'error' && result.error.kind === 'query_memory_limit'));
    if (outgrew) {
      context.spentMs += now() - executionStarted;
      context.overlapped ||= (execution as Execution | null)?.overlapped === true;
      pool.releaseQuery(id);
      permit.release();
      log.info('query moved from the light lane to the general lane', {
        query: id,
        tenant,
        kind,
        light_lane_ms: light?.laneMs,
        outgrew: result.status === 'error' ? 'memory' : 'time',
        terminated: result.status === 'cancelled' && result.terminated === true,
      });
      return 'moved';
    }
    // Counted once per request: a run moved off the light lane meets the same objects again on the general lane.
    if (result.corrupt !== undefined && result.corrupt.length > 0)
      options.corruptObjects?.met(result.corrupt, { query: id, tenant });
    if (result.status === 'cancelled' && stoppedBy === 'deadline' && deadline !== null) {
      pool.releaseQuery(id);
      permit.release();
      // Storage that stopped answering is the operator's problem, not a reason to tell the client to ask for less.
      const stall = storageStall(result.storage, deadline.ms);
      if (stall !== null) {
        const error = storageStalledError(full?.ms ?? deadline.ms, stall);
        finish(error.kind, null);
        log.warn('query stopped at its deadline waiting on object storage', {
          query: id,
          tenant,
          kind,
          error: error.kind,
          lane,
          timeout_ms: deadline.ms,
          operation: stall.operation,
          key: stall.key,
          attempts: stall.attempts,
          retries: result.storage?.retries ?? 0,
          terminated: result.terminated === true,
          ms: Math.round(performance.now() - started),
        });
        return { status: 'error', error };
      }
      const elapsedMs = Math.round(now() - executionStarted);
      const limit: LimitError = {
        kind:
          context.overlapped || (execution as Execution | null)?.overlapped === true
            ? 'query_time_contended'
            : 'query_time_limit',
        timeoutMs: full?.ms ?? deadline.ms,
        elapsedMs: Math.round(elapsedMs + context.spentMs),
        clientShortened: deadline.clientShortened,
      };
      finish(limit.kind, null);
      log.info('query stopped at its deadline', {
        query: id,
        tenant,
        kind,
        error: limit.kind,
        lane,
        timeout_ms: deadline.ms,
        terminated: result.terminated === true,
        ms: Math.round(performance.now() - started),
      });
      return { status: 'error', error: queryErrorFromLimit(limit) };
    }
    if (result.status === 'ok' && stoppedBy === 'client') {
      // The answer raced the client's disconnect: nobody will send it, so nothing may stay held for it.
      pool.releaseQuery(id);
      permit.release();
      return { status: 'cancelled' };
    }
    if (result.status !== 'ok') {
      pool.releaseQuery(id);
      permit.release();
      // A stream that ends in an error line (or a disconnect) was still an answer of this many bytes.
      if (streamed > 0) observer?.answered?.(kind, streamed);
      if (result.status === 'cancelled') {
        log.info('query cancelled by its client', {
          query: id,
          tenant,
          kind,
          terminated: result.terminated === true,
          ms: Math.round(performance.now() - started),
        });
        return { status: 'cancelled' };
      }
      if (result.error.kind === 'query_memory_limit' || result.error.kind === 'query_memory_contended') {
        // Who holds the pool goes to the server log, never to the response (docs/design/query-governance.md).
        log.warn('query refused for memory', {
          query: id,
          kind: result.error.kind,
          top_consumers: pool.topConsumers(5),
        });
      }
      finish(result.error.kind, null);
      log.info('query finished', {
        query: id,
        tenant,
        kind,
        lane,
        error: result.error.kind,
        peak_bytes: result.peakBytes ?? 0,
        ms: Math.round(performance.now() - started),
      });
      return { status: 'error', error: result.error };
    }
    finish(null, { scanned: result.rowGroupsScanned, pruned: result.rowGroupsPruned });
    const answerBytes = result.body.byteLength + streamed;
    observer?.answered?.(kind, answerBytes);
    if (result.crossed !== undefined && result.crossed.length > 0)
      reportCrossed(result.crossed, { id, tenant, kind, lane, nowNs: context.nowNs, job });
    // A live tail polls every tail_poll_ms: a poll that found nothing new is not worth a line each time.
    if (job.kind !== 'tail_poll' || result.rows > 0)
      log.info('query finished', {
        query: id,
        tenant,
        kind,
        lane,
        rows: result.rows,
        row_groups_scanned: result.rowGroupsScanned,
        row_groups_pruned: result.rowGroupsPruned,
        peak_bytes: result.peakBytes,
        body_bytes: answerBytes,
        ...(stream ? { streamed: true } : {}),
        ms: Math.round(performance.now() - started),
      });
    let released = false;
    return {
      status: 'ok',
      body: result.body,
      rows: result.rows,
      done() {
        if (released) return;
        released = true;
        pool.releaseQuery(id);
        permit.release();
      },
    };
  }
}
