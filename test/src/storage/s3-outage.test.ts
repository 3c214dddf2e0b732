/**
 * @module s3-outage.test
 * Issue 18 end to end: the real gateway (the CLI, one process, every role) on s3rver behind a loopback proxy that
 * can blackhole it — an endpoint that accepts connections and never answers. Exports are acknowledged throughout
 * (the WAL holds them); a query answers typed within its deadline instead of hanging; when the endpoint comes
 * back every acknowledged record arrives exactly once; SIGTERM under a blackholed endpoint exits within
 * `server.shutdown_timeout_secs`, saying what it abandoned, and the next start stores what was abandoned.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startBlackholeProxy, type BlackholeProxy } from '../helpers/blackhole-proxy.js';
import { buildSdkRecords, createExporter, exportBatch, type TestLog } from '../helpers/otel-sdk.js';
import { field, postQuery } from '../helpers/query-client.js';
import { readStoredRows, type StoreLocation } from '../helpers/read-store.js';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const QUERY_TIMEOUT_MS = 8000;
const SHUTDOWN_TIMEOUT_SECS = 4;
/** Tight bounds so an outage is noticed in about two seconds: 2 attempts of 1 s (plus ≤ 200 ms back-off). */
const S3_BOUNDS = {
  connect_timeout_ms: 500,
  request_timeout_ms: 1000,
  max_attempts: 2,
  retry_base_ms: 50,
  retry_max_ms: 200,
};

function logs(label: string, count: number): TestLog[] {
  const now = BigInt(Date.now()) * 1_000_000n;
  return Array.from({ length: count }, (_, i) => ({
    body: `outage ${label} record ${i}`,
    severityNumber: 9,
    severityText: 'INFO',
    attributes: {},
    timeNs: now + BigInt(i),
    observedNs: now + BigInt(i),
    traceId: null,
    spanId: null,
  }));
}

const bodies = (label: string, count: number): string[] => logs(label, count).map((l) => String(l.body));

/** Stored bodies of the test's records, as a multiset (sorted list). */
async function storedBodies(location: StoreLocation): Promise<string[]> {
  const rows = await readStoredRows(location);
  return rows
    .map((r) => (r.record.body?.kind === 'string' ? r.record.body.value : ''))
    .filter((b) => b.startsWith('outage '))
    .sort();
}

/** Polls until the stored bodies are exactly `expected` (each once), or fails with what was stored. */
async function waitForExactly(location: StoreLocation, expected: string[], timeoutMs = 30_000): Promise<void> {
  const want = [...expected].sort();
  const deadline = Date.now() + timeoutMs;
  let got: string[] = [];
  while (Date.now() < deadline) {
    try {
      got = await storedBodies(location);
      if (got.length >= want.length) break;
    } catch {
      // s3rver may serve an object while its PUT is still in progress: read again
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  assert.deepEqual(got, want, 'every acknowledged record stored exactly once');
}

async function exportLogs(sluice: SluiceProcess, records: TestLog[]): Promise<void> {
  const exporter = createExporter(
    'http-proto',
    { httpUrl: sluice.otlpHttpUrl, grpcAddress: sluice.otlpGrpcAddress },
    { tenant: 'acme', gzip: false },
  );
  try {
    await exportBatch(
      exporter,
      await buildSdkRecords(
        { resource: { 'service.name': 'outage' }, scopeName: 'outage', scopeVersion: '1' },
        records,
      ),
    );
  } finally {
    await exporter.shutdown();
  }
}

describe('S3 blackholed behind a proxy (issue 18)', () => {
  let s3: TestS3Server;
  let proxy: BlackholeProxy;
  let location: StoreLocation;
  const walDir = join(tempDir('outage'), 'wal');
  let sluice: SluiceProcess | null = null;
  const config = (): string =>
    testConfigYaml({
      walDir,
      s3,
      s3Endpoint: proxy.endpoint,
      s3Bounds: S3_BOUNDS,
      shutdownTimeoutSecs: SHUTDOWN_TIMEOUT_SECS,
      querier: true,
      flushAgeSecs: 1,
      querierLimits: { query_timeout_ms: QUERY_TIMEOUT_MS },
    });

  before(async () => {
    s3 = await startS3Server();
    proxy = await startBlackholeProxy(s3.endpoint);
    location = { backend: 's3', s3 };
  });
  after(async () => {
    if (sluice !== null) await sluice.kill();
    await proxy.close();
    await s3.stop();
  });

  test('exports are acknowledged throughout; a query answers storage_unavailable within its deadline; after recovery every record arrives exactly once', async () => {
    sluice = await spawnSluice(config());
    await sluice.waitReady();
    await exportLogs(sluice, logs('a', 40));
    await waitForExactly(location, bodies('a', 40));

    proxy.set({ kind: 'blackhole' });
    // Acknowledged although storage is silent: the WAL holds it.
    await exportLogs(sluice, logs('b', 40));
    const started = performance.now();
    const answer = await postQuery(sluice.queryUrl!, 'acme', 'true | count');
    const ms = performance.now() - started;
    assert.equal(answer.status, 503, answer.text);
    assert.equal(field(field(answer.json, 'error'), 'kind'), 'storage_unavailable', answer.text);
    assert.equal(field(field(answer.json, 'error'), 'retryable'), true, answer.text);
    assert.ok(ms < QUERY_TIMEOUT_MS + 1000, `answered in ${Math.round(ms)} ms, within the deadline + 1 s`);
    assert.doesNotMatch(answer.text, /aws|smithy|ECONN|socket/i, 'no library text in the answer');
    // The sink fails its flushes meanwhile; let it try a few times against the blackhole.
    await new Promise((r) => setTimeout(r, 3000));

    proxy.set({ kind: 'open' });
    await waitForExactly(location, [...bodies('a', 40), ...bodies('b', 40)]);
    const after = await postQuery(sluice.queryUrl!, 'acme', 'true | count');
    assert.equal(after.status, 200, after.text);
  });

  test('SIGTERM under a blackholed endpoint exits within shutdown_timeout_secs, naming what it abandoned; the next start stores it exactly once', async () => {
    assert.ok(sluice !== null, 'runs after the first test');
    proxy.set({ kind: 'blackhole' });
    await exportLogs(sluice, logs('c', 30));
    // Let the age trigger start a flush into the blackhole.
    await new Promise((r) => setTimeout(r, 1500));
    const started = performance.now();
    const exit = await sluice.stop();
    const secs = (performance.now() - started) / 1000;
    assert.ok(secs < SHUTDOWN_TIMEOUT_SECS + 2, `exited after ${secs.toFixed(1)} s (bound ${SHUTDOWN_TIMEOUT_SECS} s)`);
    assert.equal(exit.code, 1, 'an abandoned stop is not a clean one');
    const line = sluice.logs.find((l) => l.includes('shutdown timed out'));
    assert.ok(line !== undefined, sluice.logs.join('\n'));
    assert.match(line, /wal_not_yet_stored/);
    sluice = null;

    proxy.set({ kind: 'open' });
    sluice = await spawnSluice(config());
    await sluice.waitReady();
    await waitForExactly(location, [...bodies('a', 40), ...bodies('b', 40), ...bodies('c', 30)]);
    const exitClean = await sluice.stop();
    sluice = null;
    assert.equal(exitClean.code, 0);
  });
});
