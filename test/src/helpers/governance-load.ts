/**
 * @module governance-load
 * The isolation load (the incident replay): an OTel SDK exporter streams logs into a gateway running both roles
 * while two lanes of query clients run. The dashboard lane polls normal queries at a panel-refresh cadence; the
 * storm lane sends over-budget queries back to back. Every export must be acknowledged and every refusal typed;
 * the report splits served and refused by lane. Used by the end-to-end isolation test and by the cgroup soak.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { LaneTally, emptyLane, type LaneReport } from './lane-report.js';
import { buildSdkRecords, createExporter, exportBatch, type TestLog } from './otel-sdk.js';
import { field, postQuery } from './query-client.js';
import { LIMIT_ERROR_KINDS } from '@sluice/limits';

/**
 * Refusal kinds the querier types (docs/design/query-governance.md): every limit kind of @sluice/limits; anything
 * else counts as untyped.
 */
export const TYPED_REFUSALS: ReadonlySet<string> = new Set(LIMIT_ERROR_KINDS);

/**
 * The two query lanes of the load. A type alias, not an interface, so it passes where a lane map
 * (`Record<string, LaneReport>`) is expected.
 */
export type LoadLanes = {
  /** Clients polling {@link LoadOptions.lightQueries} every {@link LoadOptions.dashboardIntervalMs}. */
  readonly dashboard: LaneReport;
  /** Clients sending {@link LoadOptions.heavyQueries} back to back. */
  readonly storm: LaneReport;
};

/** What the load observed. The top-level query fields are the totals over both lanes. */
export interface LoadReport {
  readonly exportsAcked: number;
  readonly exportsFailed: number;
  readonly exportErrors: string[];
  /** Query requests that failed at the transport (before any HTTP status) and were sent again once. */
  readonly queryTransportRetries: number;
  /** The first few transport errors of query requests (retried or not). */
  readonly queryTransportErrors: string[];
  /** Query requests that got an HTTP answer. */
  readonly queries: number;
  readonly ok: number;
  /** Rejections by `error.kind` (and `untyped:<status>` for a response without the envelope). */
  readonly rejections: Record<string, number>;
  readonly lanes: LoadLanes;
}

/** Options for {@link runGovernanceLoad}. */
export interface LoadOptions {
  readonly otlpHttpUrl: string;
  readonly otlpGrpcAddress: string;
  readonly queryUrl: string;
  readonly tenant: string;
  readonly durationMs: number;
  /** Dashboard-lane clients (default 4). */
  readonly dashboardClients?: number;
  /** A dashboard client's poll period (default 2000 ms), measured send to send; it never overlaps itself. */
  readonly dashboardIntervalMs?: number;
  /** Storm-lane clients (default 12). */
  readonly stormClients?: number;
  /** The storm lane's queries: ones that must be refused (over the pool, over the result ceiling…). */
  readonly heavyQueries: readonly string[];
  /** The dashboard lane's queries: ones that should normally succeed. */
  readonly lightQueries: readonly string[];
}

/** Defaults of the lane options. */
export const LOAD_DEFAULTS = { dashboardClients: 4, dashboardIntervalMs: 2000, stormClients: 12 } as const;

type Totals = { -readonly [K in Exclude<keyof LoadReport, 'lanes'>]: LoadReport[K] };

function logs(batch: number, size: number): TestLog[] {
  const out: TestLog[] = [];
  const now = BigInt(Date.now()) * 1_000_000n;
  for (let i = 0; i < size; i++) {
    const n = batch * size + i;
    out.push({
      body: `load ${n} request to /api/${n % 17} took ${n % 913} ms ${'p'.repeat(n % 200)}`,
      severityNumber: [9, 13, 17][n % 3]!,
      severityText: '',
      attributes: { n, 'http.route': `/api/${n % 17}` },
      timeNs: now + BigInt(i),
      observedNs: now + BigInt(i),
      traceId: null,
      spanId: null,
    });
  }
  return out;
}

function emptyTotals(): Totals {
  return {
    exportsAcked: 0,
    exportsFailed: 0,
    exportErrors: [],
    queryTransportRetries: 0,
    queryTransportErrors: [],
    queries: 0,
    ok: 0,
    rejections: {},
  };
}

/** The report of a load that never ran (the soak's stand-in when the load aborts). */
export function emptyLoadReport(dashboardClients: number, stormClients: number): LoadReport {
  return { ...emptyTotals(), lanes: { dashboard: emptyLane(dashboardClients), storm: emptyLane(stormClients) } };
}

/**
 * Sends one query and books the outcome in `totals` and `lane`. Returns false when the querier is unreachable
 * (the request failed twice at the transport): the client then stops.
 */
async function ask(options: LoadOptions, totals: Totals, lane: LaneTally, statement: string): Promise<boolean> {
  const t0 = performance.now();
  let answer;
  try {
    answer = await postQuery(options.queryUrl, options.tenant, statement);
  } catch (first) {
    totals.queryTransportRetries++;
    if (totals.queryTransportErrors.length < 5)
      totals.queryTransportErrors.push(`retried: ${String((first as { cause?: unknown }).cause ?? first)}`);
    // A reused keep-alive socket the server had just closed fails the request before it was sent; a real
    // client retries that once. A second failure means the querier is unreachable: count it, stop this client.
    try {
      answer = await postQuery(options.queryUrl, options.tenant, statement);
    } catch (error) {
      totals.rejections['transport_error'] = (totals.rejections['transport_error'] ?? 0) + 1;
      lane.refused('transport_error');
      if (totals.queryTransportErrors.length < 5)
        totals.queryTransportErrors.push(String((error as { cause?: unknown }).cause ?? error));
      return false;
    }
  }
  totals.queries++;
  if (answer.status === 200) {
    totals.ok++;
    lane.served(performance.now() - t0);
    return true;
  }
  const kind = field(field(answer.json, 'error'), 'kind');
  const key = typeof kind === 'string' ? kind : `untyped:${answer.status}`;
  totals.rejections[key] = (totals.rejections[key] ?? 0) + 1;
  lane.refused(key);
  return true;
}

/** Runs the load for `durationMs` and reports. */
export async function runGovernanceLoad(options: LoadOptions): Promise<LoadReport> {
  const dashboardClients = options.dashboardClients ?? LOAD_DEFAULTS.dashboardClients;
  const intervalMs = options.dashboardIntervalMs ?? LOAD_DEFAULTS.dashboardIntervalMs;
  const stormClients = options.stormClients ?? LOAD_DEFAULTS.stormClients;
  if (dashboardClients > 0 && options.lightQueries.length === 0) throw new Error('dashboard clients need lightQueries');
  if (stormClients > 0 && options.heavyQueries.length === 0) throw new Error('storm clients need heavyQueries');
  const start = Date.now();
  const deadline = start + options.durationMs;
  const exporter = createExporter(
    'http-proto',
    { httpUrl: options.otlpHttpUrl, grpcAddress: options.otlpGrpcAddress },
    { tenant: options.tenant, gzip: true },
  );
  const totals = emptyTotals();
  const dashboard = new LaneTally(dashboardClients);
  const storm = new LaneTally(stormClients);
  const until = (at: number): Promise<void> => sleep(Math.max(0, Math.min(at, deadline) - Date.now()));

  const exporting = (async () => {
    for (let batch = 0; Date.now() < deadline; batch++) {
      const records = await buildSdkRecords(
        { resource: { 'service.name': 'load' }, scopeName: 'load', scopeVersion: '1' },
        logs(batch, 200),
      );
      try {
        await exportBatch(exporter, records);
        totals.exportsAcked++;
      } catch (error) {
        totals.exportsFailed++;
        if (totals.exportErrors.length < 5)
          totals.exportErrors.push(error instanceof Error ? error.message : String(error));
      }
    }
    await exporter.shutdown();
  })();
  const polling = Array.from({ length: dashboardClients }, async (_, c) => {
    // Independent viewers refresh out of phase: spread the first polls over one interval instead of a burst.
    await until(start + (c * intervalMs) / dashboardClients);
    for (let i = 0; Date.now() < deadline; i++) {
      const sentAt = Date.now();
      if (!(await ask(options, totals, dashboard, options.lightQueries[(c + i) % options.lightQueries.length]!)))
        return;
      await until(sentAt + intervalMs);
    }
  });
  const storming = Array.from({ length: stormClients }, async (_, c) => {
    for (let i = 0; Date.now() < deadline; i++) {
      if (!(await ask(options, totals, storm, options.heavyQueries[(c * 7 + i) % options.heavyQueries.length]!)))
        return;
    }
  });
  await Promise.all([exporting, ...polling, ...storming]);
  return { ...totals, lanes: { dashboard: dashboard.report(), storm: storm.report() } };
}
