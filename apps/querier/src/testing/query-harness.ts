/**
 * @module testing/query-harness
 * Test-only: an in-process querier (the hono app over a real query service, admission gate and pool) with either
 * real query workers over a temp local store or a test worker pool whose jobs block until finished or stopped,
 * plus the fixtures and the observable-state waits the querier tests share. No leg waits for a duration: every
 * wait is for an observable state, and deadlines fire on paused time unless a test runs real workers.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Meter } from '@opentelemetry/api';
import type { LogRecord } from '@sluice/core';
import type { CorruptObject, CorruptObjectPolicy } from '@sluice/engine';
import { createAccessGate } from '@sluice/edge';
import { createAdmissionGate, createMemoryPool, type AdmissionGate, type MemoryPool } from '@sluice/limits';
import type { ManualTimers } from '@sluice/limits/testing';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type StoredLogRow } from '@sluice/storage';
import { createLogger, type Logger } from '@sluice/telemetry';
import { createCorruptObjectLog } from '../corrupt-object-log.js';
import { createLiveTails, type LiveTails } from '../live-tails.js';
import { createQueryApp, type TailRouteOptions } from '../query-app.js';
import { createQueryCosts } from '../query-costs.js';
import type { QueryError } from '../query-error.js';
import { createQueryService, type QueryObserver } from '../query-service.js';
import type { StorageWaitReport } from '../storage-watch.js';
import { createWorkerPool, type JobResult, type RunControl, type WorkerPool } from '../worker-pool.js';
import type { QueryWorkerData } from '../worker-protocol.js';
import { footerCacheBytesPerWorker } from '../worker-footer-cache.js';

/** 2026-06-01T00:00:00Z in ns. */
export const T0 = 1_780_272_000_000_000_000n;
export const H = 3_600_000_000_000n;
export const NOW = T0 + 2n * H;
export const WINDOW = 'range(2026-06-01T00:00:00Z, 2026-06-01T01:00:00Z)';
export const COUNT = `true | ${WINDOW} | count`;
const silent = createLogger('test', { write: () => {} });

export function row(tenant: string, t: bigint, body: string): StoredLogRow {
  const record: LogRecord = {
    timeUnixNano: t,
    observedTimeUnixNano: t,
    severityNumber: 9,
    severityText: 'INFO',
    body: { kind: 'string', value: body },
    attributes: [],
    droppedAttributesCount: 0,
    flags: 0,
    traceId: new Uint8Array(0),
    spanId: new Uint8Array(0),
    eventName: '',
    resource: { attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
    scope: { name: 'test', version: '1', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
  };
  return {
    tenantId: tenant,
    record,
    mined: { templateId: 1n, templateVersion: 1, params: [], confidence: 1, lossy: false },
  };
}

/**
 * A temp local store with `rows` rows for each of `tenants` in the first hour of {@link T0} (row groups of 100).
 * @returns the directory and a remover
 */
export async function createStoreFixture(
  tenants: readonly string[],
  rows = 300,
  body: (i: number, tenant: string) => string = (i) => `line ${i}`,
): Promise<{ readonly dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'querier-harness-'));
  const store = createLocalObjectStore({ root: dir });
  for (const tenant of tenants) {
    const list = Array.from({ length: rows }, (_, i) => row(tenant, T0 + BigInt(i) * 1_000_000_000n, body(i, tenant)));
    await store.put(dataFileKey(tenant, T0, uuidv7()), await encodeLogsParquet(list, { rowGroupRows: 100 }));
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** A worker pool whose jobs block until the test finishes them or the service stops them. */
export class BlockingWorkers implements WorkerPool {
  readonly calls: {
    tenant: string;
    /** Answers ok; `peakBytes` is what the job is reported to have held (default 0). */
    finish(peakBytes?: number): void;
    fail(error: QueryError): void;
    stopped: boolean;
    leaveFreeBytes: number;
    /** What the job reports about its storage calls when it is stopped (as a real worker's `stopping` does). */
    storage?: StorageWaitReport;
    /** The corrupt objects the job reports having met (with whatever it answers). */
    corrupt?: readonly CorruptObject[];
  }[] = [];
  /** When set, a job ignores its stop request (as a worker that was already serializing its answer does). */
  ignoreStops = false;
  run(_id: string, tenant: string, _nowNs: bigint, _job: unknown, control: RunControl = {}): Promise<JobResult> {
    const { signal } = control;
    control.onDispatch?.();
    return new Promise<JobResult>((resolve) => {
      const call: BlockingWorkers['calls'][number] = {
        tenant,
        stopped: false,
        leaveFreeBytes: control.leaveFreeBytes ?? 0,
        finish: (peakBytes = 0) =>
          resolve({
            status: 'ok',
            body: new TextEncoder().encode(`{"tenant":"${tenant}"}`),
            rows: 0,
            rowGroupsScanned: 0,
            rowGroupsPruned: 0,
            peakBytes,
            ...(call.corrupt ? { corrupt: call.corrupt } : {}),
          }),
        fail: (error: QueryError) =>
          resolve({ status: 'error', error, peakBytes: 0, ...(call.corrupt ? { corrupt: call.corrupt } : {}) }),
      };
      signal?.addEventListener(
        'abort',
        () => {
          call.stopped = true;
          if (!this.ignoreStops) resolve({ status: 'cancelled', ...(call.storage ? { storage: call.storage } : {}) });
        },
        { once: true },
      );
      this.calls.push(call);
    });
  }
  async close(): Promise<void> {}
}

export interface Harness {
  readonly app: ReturnType<typeof createQueryApp>;
  /** The live tails, when {@link HarnessOptions.tails} is set. */
  readonly tails: LiveTails | null;
  readonly gate: AdmissionGate;
  /** The light lane's gate, when the harness has one. */
  readonly lightGate: AdmissionGate | null;
  readonly pool: MemoryPool;
  readonly deaths: string[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The local store root (see {@link createStoreFixture}). */
  readonly dir: string;
  readonly maxConcurrent: number;
  readonly queryTimeoutMs: number;
  /** `max_concurrent_queries_per_tenant` (default: none). */
  readonly maxPerTenant?: number;
  /** `max_queued_queries` (default 4). */
  readonly maxQueued?: number;
  /** The pool's size (default 64 MiB). */
  readonly poolBytes?: number;
  /** `max_query_memory_bytes` as resolved (default 32 MiB). */
  readonly maxQueryBytes?: number;
  /** A light lane with its own gate (one permit, queue 4) and test workers. */
  readonly light?: {
    readonly workers: WorkerPool;
    readonly lightMs: number;
    readonly laneMs: number;
    readonly leaveFreeBytes: number;
  };
  /** A test worker pool; default real workers running `workerScript`. */
  readonly workers?: WorkerPool;
  readonly workerScript?: string;
  readonly timers?: ManualTimers;
  /** `querier.on_corrupt_object` (default `fail`). */
  readonly onCorruptObject?: CorruptObjectPolicy;
  /** The service's logger (default: silent). */
  readonly log?: Logger;
  /** The meter of the querier's instruments (`sluice.storage.corrupt_objects`). */
  readonly meter?: Meter;
  readonly observer?: QueryObserver;
  /** The corrupt-object log's clock (default `performance.now`). */
  readonly corruptLogNow?: () => number;
  /** Result limits of the real workers (default rows 1000, max rows 10000, max result bytes 16 MiB, enforce). */
  readonly limits?: Partial<QueryWorkerData['limits']>;
  /** Observe mode's `max_query_memory_bytes` (the real workers' `observedQueryBytes`). */
  readonly observedQueryBytes?: number;
  /** The real workers' NDJSON batch size (default the engine's). */
  readonly streamBatchBytes?: number;
  /** Each real worker's footer cache (default production's: 32 MiB capped at pool / (8 x maxConcurrent)). */
  readonly footerCacheBytes?: number;
  /** Serve `POST /v1/tail` with these settings (the registry is created here, on the harness's pool). */
  readonly tails?: Omit<TailRouteOptions, 'registry' | 'log'> & { readonly maxLiveTails: number };
}

export function harness(o: HarnessOptions): Harness {
  const gate = createAdmissionGate({
    maxConcurrent: o.maxConcurrent,
    maxQueued: o.maxQueued ?? 4,
    queueTimeoutMs: 10_000,
    ...(o.maxPerTenant !== undefined ? { maxPerTenant: o.maxPerTenant } : {}),
    ...(o.timers ? { timers: o.timers, now: o.timers.now } : {}),
  });
  const pool = createMemoryPool({ sizeBytes: o.poolBytes ?? 64 << 20 });
  const deaths: string[] = [];
  const workers =
    o.workers ??
    createWorkerPool({
      size: o.maxConcurrent,
      pool,
      maxOldGenerationSizeMb: 256,
      ...(o.workerScript ? { workerUrl: new URL(o.workerScript, new URL('../', import.meta.url)) } : {}),
      onWorkerDeath: (info) => deaths.push(info.reason),
      data: {
        pool: pool.shared,
        storage: { backend: 'local', root: o.dir, requestTimeoutMs: 0 },
        defaultWindowSecs: 3600,
        recycleBytes: 1 << 30,
        heapSlackBytes: 64 << 20,
        footerCacheBytes:
          o.footerCacheBytes ?? footerCacheBytesPerWorker(32 << 20, o.poolBytes ?? 64 << 20, o.maxConcurrent),
        maxOpenFiles: 256,
        onCorruptObject: o.onCorruptObject ?? 'fail',
        maxQueryBytes: o.maxQueryBytes ?? 32 << 20,
        ...(o.observedQueryBytes !== undefined ? { observedQueryBytes: o.observedQueryBytes } : {}),
        ...(o.streamBatchBytes !== undefined ? { streamBatchBytes: o.streamBatchBytes } : {}),
        limits: {
          defaultRows: 1000,
          maxRows: 10_000,
          maxListedObjects: 1000,
          maxFiles: 1000,
          maxResultBytes: 1 << 24,
          ...o.limits,
        },
      },
    });
  const lightGate = o.light
    ? createAdmissionGate({
        maxConcurrent: 1,
        maxQueued: 4,
        queueTimeoutMs: 10_000,
        ...(o.timers ? { timers: o.timers, now: o.timers.now } : {}),
      })
    : null;
  const log = o.log ?? silent;
  const service = createQueryService({
    gate,
    workers,
    pool,
    log,
    corruptObjects: createCorruptObjectLog({
      log,
      policy: o.onCorruptObject ?? 'fail',
      ...(o.meter ? { meter: o.meter } : {}),
      ...(o.corruptLogNow ? { now: o.corruptLogNow } : {}),
    }),
    ...(o.observer ? { observer: o.observer } : {}),
    ...(o.light && lightGate
      ? {
          light: {
            gate: lightGate,
            workers: o.light.workers,
            permits: 1,
            laneMs: o.light.laneMs,
            costs: createQueryCosts({ lightMs: o.light.lightMs, lightBytes: 1 << 20 }),
            leaveFreeBytes: o.light.leaveFreeBytes,
            defaultWindowSecs: 3600,
          },
        }
      : {}),
    nowNs: () => NOW,
    queryTimeoutMs: o.queryTimeoutMs,
    ...(o.timers ? { timers: o.timers, now: o.timers.now } : {}),
  });
  const tails = o.tails
    ? createLiveTails({ pool, log, maxLiveTails: o.tails.maxLiveTails, maxTailBufferBytes: o.tails.maxTailBufferBytes })
    : null;
  const app = createQueryApp({
    service,
    ...(o.tails && tails ? { tails: { ...o.tails, registry: tails, log } } : {}),
    probes: { notReadyReason: () => null, metricsText: () => Promise.resolve(null) },
    access: createAccessGate({
      tokens: null,
      tenancy: { header: 'X-Sluice-Tenant', defaultTenant: null },
      protectMetrics: true,
    }),
    mcpEnabled: true,
    maxRows: 10_000,
    version: 'test',
  });
  return { app, tails, gate, lightGate, pool, deaths, close: () => workers.close() };
}

export interface Answer {
  readonly status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any;
}

export async function query(
  h: Harness,
  tenant: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await h.app.request('/v1/query', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': tenant, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? null : JSON.parse(text) };
}

/** Yields to the event loop until `cond` holds (waits for an observable state, never for a duration). */
export async function until(cond: () => boolean, what: string, maxTurns = 200_000): Promise<void> {
  for (let i = 0; i < maxTurns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never observed: ${what}`);
}

/** Polls `cond` on real time (for real worker threads), failing after `ms`. */
export async function within(ms: number, cond: () => boolean, what: string): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (cond()) return performance.now() - start;
    if (performance.now() - start > ms) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export function tracked<T>(p: Promise<T>): { readonly promise: Promise<T>; readonly done: boolean } {
  const state = { done: false, promise: p };
  void p.then(() => (state.done = true));
  return state;
}

/** One JSON-RPC message to `/mcp` (stateless, JSON response). */
export async function rpc(h: Harness, tenant: string, message: Record<string, unknown>): Promise<Response> {
  return h.app.request('/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'X-Sluice-Tenant': tenant,
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
  });
}
