/**
 * @module governance-load
 * The isolation load: an OTel SDK exporter streams logs into a gateway running both roles while `clients`
 * query clients send a mix of over-budget and normal queries. Every export must be acknowledged and every
 * rejection typed. Used by the end-to-end isolation test and by the cgroup soak script.
 */
import { buildSdkRecords, createExporter, exportBatch, type TestLog } from './otel-sdk.js';
import { field, postQuery } from './query-client.js';

/** What the load observed. */
export interface LoadReport {
  readonly exportsAcked: number;
  readonly exportsFailed: number;
  readonly exportErrors: string[];
  /** Query requests that failed at the transport (before any HTTP status) and were sent again once. */
  readonly queryTransportRetries: number;
  /** The first few transport errors of query requests (retried or not). */
  readonly queryTransportErrors: string[];
  readonly queries: number;
  readonly ok: number;
  /** Rejections by `error.kind` (and `untyped:<status>` for a response without the envelope). */
  readonly rejections: Record<string, number>;
}

/** Options for {@link runGovernanceLoad}. */
export interface LoadOptions {
  readonly otlpHttpUrl: string;
  readonly otlpGrpcAddress: string;
  readonly queryUrl: string;
  readonly tenant: string;
  readonly durationMs: number;
  readonly clients: number;
  /** Queries that must be refused (over the pool, over the result ceiling…). */
  readonly heavyQueries: readonly string[];
  /** Queries that should normally succeed. */
  readonly lightQueries: readonly string[];
}

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

/** Runs the load for `durationMs` and reports. */
export async function runGovernanceLoad(options: LoadOptions): Promise<LoadReport> {
  const deadline = Date.now() + options.durationMs;
  const exporter = createExporter(
    'http-proto',
    { httpUrl: options.otlpHttpUrl, grpcAddress: options.otlpGrpcAddress },
    { tenant: options.tenant, gzip: true },
  );
  const report = {
    exportsAcked: 0,
    exportsFailed: 0,
    exportErrors: [] as string[],
    queryTransportRetries: 0,
    queryTransportErrors: [] as string[],
    queries: 0,
    ok: 0,
    rejections: {} as Record<string, number>,
  };
  const exporting = (async () => {
    for (let batch = 0; Date.now() < deadline; batch++) {
      const records = await buildSdkRecords(
        { resource: { 'service.name': 'load' }, scopeName: 'load', scopeVersion: '1' },
        logs(batch, 200),
      );
      try {
        await exportBatch(exporter, records);
        report.exportsAcked++;
      } catch (error) {
        report.exportsFailed++;
        if (report.exportErrors.length < 5)
          report.exportErrors.push(error instanceof Error ? error.message : String(error));
      }
    }
    await exporter.shutdown();
  })();
  const querying = Array.from({ length: options.clients }, async (_, c) => {
    for (let i = 0; Date.now() < deadline; i++) {
      const heavy = (c + i) % 2 === 0;
      const list = heavy ? options.heavyQueries : options.lightQueries;
      const statement = list[(c * 7 + i) % list.length]!;
      let answer;
      try {
        answer = await postQuery(options.queryUrl, options.tenant, statement);
      } catch (first) {
        report.queryTransportRetries++;
        if (report.queryTransportErrors.length < 5)
          report.queryTransportErrors.push(`retried: ${String((first as { cause?: unknown }).cause ?? first)}`);
        // A reused keep-alive socket the server had just closed fails the request before it was sent; a real
        // client retries that once. A second failure means the querier is unreachable: count it, stop this client.
        try {
          answer = await postQuery(options.queryUrl, options.tenant, statement);
        } catch (error) {
          report.rejections['transport_error'] = (report.rejections['transport_error'] ?? 0) + 1;
          if (report.queryTransportErrors.length < 5)
            report.queryTransportErrors.push(String((error as { cause?: unknown }).cause ?? error));
          return;
        }
      }
      report.queries++;
      if (answer.status === 200) {
        report.ok++;
        continue;
      }
      const kind = field(field(answer.json, 'error'), 'kind');
      const key = typeof kind === 'string' ? kind : `untyped:${answer.status}`;
      report.rejections[key] = (report.rejections[key] ?? 0) + 1;
    }
  });
  await Promise.all([exporting, ...querying]);
  return report;
}
