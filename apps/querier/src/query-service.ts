/**
 * @module query-service
 * One query, surface-independent (HTTP and MCP share it, and so share one admission gate): admit (bounded
 * queue, timeout, cancellation), run on a query worker, and hand back the serialized body together with a
 * `done()` that releases the permit and the body's reservation once the response has been sent.
 */
import type { Logger } from '@sluice/telemetry';
import { describeLimitError, limitErrorFromAdmission, type AdmissionGate, type MemoryPool } from '@sluice/limits';
import type { QueryError } from './query-error.js';
import type { WorkerPool } from './worker-pool.js';
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
}

/** Options for {@link createQueryService}. */
export interface QueryServiceOptions {
  readonly gate: AdmissionGate;
  readonly workers: WorkerPool;
  readonly pool: MemoryPool;
  readonly log: Logger;
  readonly observer?: QueryObserver;
  /** Wall clock in ns (injectable for tests). */
  readonly nowNs?: () => bigint;
}

/** The query service. */
export interface QueryService {
  run(tenant: string, job: QueryJobKind, signal?: AbortSignal): Promise<ServiceOutcome>;
}

function metricKind(job: QueryJobKind): QueryMetricKind {
  if (job.kind === 'list_templates') return 'templates';
  return job.query.kind === 'drift' ? 'drift' : 'logs';
}

/** Creates the query service. */
export function createQueryService(options: QueryServiceOptions): QueryService {
  const { gate, workers, pool, log, observer } = options;
  const nowNs = options.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  let sequence = 0;
  return {
    async run(tenant, job, signal) {
      const started = performance.now();
      const kind = metricKind(job);
      const finish = (errorKind: string | null, rowGroups: { scanned: number; pruned: number } | null): void =>
        observer?.finished(kind, (performance.now() - started) / 1000, errorKind, rowGroups);
      const admitted = await gate.acquire(signal);
      if (admitted.status !== 'admitted') {
        const limit = limitErrorFromAdmission(admitted);
        if (limit === undefined) return { status: 'cancelled' };
        finish(limit.kind, null);
        return { status: 'error', error: { kind: limit.kind, message: describeLimitError(limit) } };
      }
      const permit = admitted.permit;
      const id = `q${process.pid}-${++sequence}`;
      let result;
      try {
        result = await workers.run(id, tenant, nowNs(), job, signal);
      } catch {
        pool.releaseQuery(id);
        permit.release();
        finish('internal', null);
        return { status: 'error', error: { kind: 'internal', message: 'the query could not be run' } };
      }
      if (result.status !== 'ok') {
        pool.releaseQuery(id);
        permit.release();
        if (result.status === 'cancelled') return result;
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
          error: result.error.kind,
          peak_bytes: result.peakBytes ?? 0,
          ms: Math.round(performance.now() - started),
        });
        return { status: 'error', error: result.error };
      }
      finish(null, { scanned: result.rowGroupsScanned, pruned: result.rowGroupsPruned });
      log.info('query finished', {
        query: id,
        tenant,
        kind,
        rows: result.rows,
        row_groups_scanned: result.rowGroupsScanned,
        row_groups_pruned: result.rowGroupsPruned,
        peak_bytes: result.peakBytes,
        body_bytes: result.body.byteLength,
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
    },
  };
}
