/**
 * The governance scenarios (docs/design/query-governance.md), end to end against the real `sluice serve` (both roles in one process, local store):
 * RFC0058.1 (a count by over a high-cardinality param(0) outgrows a 32 MiB pool: 422 query_memory_limit with
 * Sluice's own message, the server keeps serving queries and acknowledging exports, the pool reads 0),
 * RFC0058.3 (spilling is off: $TMPDIR of the server stays empty) and RFC0058.4's startup log leg (size, source and
 * share are logged once, for an explicit and for a derived pool); and RFC0058.6's S3 leg: the engine's listing,
 * file and manifest caps over a real S3-protocol server (s3rver), counted per S3 request through SDK middleware.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LogRecord } from '@sluice/core';
import { executeQuery } from '@sluice/engine';
import { createMemoryPool } from '@sluice/limits';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { parseQuery } from '@sluice/query';
import {
  createS3ObjectStore,
  dataFileKey,
  dataPartitionPrefix,
  encodeLogsParquet,
  uuidv7,
  type S3ObjectStore,
} from '@sluice/storage';
import { post } from '../helpers/http-client.js';
import { queryHeldPoolBytes } from '../helpers/metrics.js';
import { big, field, postQuery } from '../helpers/query-client.js';
import { CORPUS_BASE_NS, corpusRecords, exportRecords } from '../helpers/query-corpus.js';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const POOL_BYTES = 33_554_432; // 32 MiB, the minimum
const RANGE = 'range(2026-03-01T10:00:00Z, 2026-03-01T11:00:00Z)';
/** Distinct 250-digit param values: each group entry of `count by param(0)` costs ~1.2 KB, so 36 000 need ~43 MB. */
const RECORDS = 36_000;

function highCardinalityRecords(): LogRecord[] {
  const [template] = corpusRecords(0, 1);
  if (template === undefined) throw new Error('no corpus record');
  return Array.from({ length: RECORDS }, (_, i) => ({
    ...template,
    timeUnixNano: CORPUS_BASE_NS + BigInt(i) * 1_000_000n,
    observedTimeUnixNano: CORPUS_BASE_NS + BigInt(i) * 1_000_000n,
    body: { kind: 'string' as const, value: `request ${String(i).padStart(250, '0')} done` },
  }));
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' });
}

/** The parsed `query memory pool sized` startup lines. */
function poolSizedLines(
  server: SluiceProcess,
): { bytes: number; source: string; share: number | null; detail: string }[] {
  const out: { bytes: number; source: string; share: number | null; detail: string }[] = [];
  for (const line of server.logs) {
    try {
      const entry = JSON.parse(line) as {
        msg?: string;
        fields?: { bytes: number; source: string; share: number | null; detail: string };
      };
      if (entry.msg === 'query memory pool sized' && entry.fields) out.push(entry.fields);
    } catch {
      // not a JSON line
    }
  }
  return out;
}

describe('RFC0058.1 / .3: a query that outgrows the pool is rejected, and the server keeps serving', () => {
  const dir = tempDir('rfc0058-1');
  const spillDir = join(dir, 'tmpdir');
  mkdirSync(spillDir);
  let server: SluiceProcess;
  let url = '';
  let templateId = 0n;

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({
        walDir: join(dir, 'wal'),
        dataDir: join(dir, 'data'),
        flushAgeSecs: 1,
        querier: true,
        // The scenario is the pool rule: one lane, and one query may use the whole pool (the ceiling is the pool).
        querierLimits: { memory_pool_bytes: POOL_BYTES, max_query_memory_bytes: POOL_BYTES, light_query_permits: 0 },
      }),
      { dir, env: { TMPDIR: spillDir, TMP: spillDir, TEMP: spillDir } },
    );
    await server.waitReady();
    url = server.queryUrl!;
    await exportRecords(server.otlpHttpUrl, 'acme', highCardinalityRecords(), 3000);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await postQuery(url, 'acme', `true | ${RANGE} | count`);
      if (r.status === 200 && big(field(r.json, 'rows')) === BigInt(RECORDS)) break;
      if (Date.now() > deadline) assert.fail(`records not queryable in time: ${r.text.slice(0, 200)}`);
      await new Promise((res) => setTimeout(res, 300));
    }
    const byTemplate = await postQuery(url, 'acme', `true | ${RANGE} | count by template_id`);
    assert.equal(byTemplate.status, 200, byTemplate.text.slice(0, 300));
    const groups = field(byTemplate.json, 'aggregate') as { key: string[]; count: number }[];
    const top = [...groups].sort((a, b) => Number(b.count) - Number(a.count))[0];
    assert.equal(Number(top?.count), RECORDS, 'every record mined into one template');
    templateId = BigInt(top?.key[0] ?? '0');
  });

  after(async () => {
    if (server.child.exitCode === null) {
      const exit = await server.stop();
      assert.equal(exit.code, 0);
    }
  });

  test('RFC0058.1: count by param(0) needing more than the 32 MiB pool is 422 query_memory_limit naming needed bytes and pool size; a small query, the pool gauge and an OTLP export all succeed after', async () => {
    const started = Date.now();
    const rejected = await postQuery(url, 'acme', `template_id == ${templateId} | ${RANGE} | count by param(0)`);
    assert.equal(rejected.status, 422, rejected.text.slice(0, 300));
    const error = field(rejected.json, 'error');
    assert.equal(field(error, 'kind'), 'query_memory_limit');
    const message = String(field(error, 'message'));
    const needed = Number(/needs at least (\d+) bytes/.exec(message)?.[1] ?? NaN);
    assert.ok(needed > POOL_BYTES, `the message names the bytes needed (${needed}), more than the pool: ${message}`);
    assert.match(message, new RegExp(`whole pool of ${POOL_BYTES} bytes`), 'the message names the pool size');
    assert.doesNotMatch(
      message,
      /Aggregat|Stream|hyparquet|parquet|Error|stack|node:|\.js|\.ts|at \S+ \(/,
      'no engine text',
    );
    assert.equal(await queryHeldPoolBytes(url), 0, 'the pool reads 0 after the rejection');

    const small = await postQuery(url, 'acme', `template_id == ${templateId} | ${RANGE} | count`);
    assert.equal(small.status, 200, small.text.slice(0, 300));
    assert.equal(big(field(small.json, 'rows')), BigInt(RECORDS));

    const ack = await post(`${server.otlpHttpUrl}/v1/logs`, encodeLogsProtobuf(corpusRecords(3, 50)), {
      'content-type': 'application/x-protobuf',
      'x-sluice-tenant': 'acme',
    });
    assert.equal(ack.status, 200, 'an OTLP export after the rejection is acknowledged');
    assert.equal(await queryHeldPoolBytes(url), 0);
    assert.equal(server.child.exitCode, null, 'the process is still running');
    console.log(`RFC0058.1 leg took ${Date.now() - started} ms; needed ${needed} bytes`);
  });

  test('RFC0058.3: with $TMPDIR pointed at an empty directory, the RFC0058.1 query is rejected the same way and the directory stays empty', async () => {
    assert.deepEqual(filesUnder(spillDir), [], 'empty before the query');
    const rejected = await postQuery(url, 'acme', `template_id == ${templateId} | ${RANGE} | count by param(0)`);
    assert.equal(rejected.status, 422);
    assert.equal(field(field(rejected.json, 'error'), 'kind'), 'query_memory_limit');
    assert.deepEqual(filesUnder(spillDir), [], 'nothing was spilled to $TMPDIR');
    assert.equal(await queryHeldPoolBytes(url), 0);
  });

  test('RFC0058.4: startup logs the pool size, its source and the share once (explicit size)', () => {
    const lines = poolSizedLines(server);
    assert.equal(lines.length, 1, 'logged once');
    assert.equal(lines[0]?.bytes, POOL_BYTES);
    assert.equal(lines[0]?.source, 'explicit');
    assert.equal(lines[0]?.share, null, 'an explicit size applies no share');
  });
});

describe('RFC0058.4: the derived default pool is logged with its source and share', () => {
  test('RFC0058.4: a querier-only process without memory_pool_bytes logs a derived size, its source and the 0.75 share', async () => {
    const dir = tempDir('rfc0058-4');
    const yaml = `${testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), querier: true, receiver: false })}compaction:\n  enabled: false\n`;
    const server = await spawnSluice(yaml, { dir });
    try {
      await server.waitReady();
      const lines = poolSizedLines(server);
      assert.equal(lines.length, 1, 'logged once');
      const line = lines[0]!;
      assert.ok(['cgroup_v2', 'cgroup_v1', 'meminfo', 'fallback'].includes(line.source), line.source);
      if (line.source === 'fallback') {
        assert.equal(line.share, null);
      } else {
        assert.equal(line.share, 0.75, 'the querier alone gets the 0.75 share');
      }
      assert.ok(Number.isSafeInteger(line.bytes) && line.bytes >= POOL_BYTES, String(line.bytes));
      assert.match(line.detail, new RegExp(String(line.bytes)), 'the detail names the size');
    } finally {
      const exit = await server.stop();
      assert.equal(exit.code, 0);
    }
  });
});

describe('RFC0058.6: the listing and file caps on S3 (request-counting S3 client over s3rver)', () => {
  const HOUR_NS = 3_600_000_000_000n;
  const S3_RANGE = 'range(2026-03-01T10:00:00Z, 2026-03-01T13:00:00Z)';
  const PER_FILE = 100;
  let s3: TestS3Server;
  let store: S3ObjectStore;
  const commands: string[] = [];
  let fileCount = 0;

  before(async () => {
    s3 = await startS3Server();
    store = createS3ObjectStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: '',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      listPageSize: 2,
    });
    store.client.middlewareStack.add(
      (next, context) => async (args) => {
        commands.push(String(context.commandName));
        return next(args);
      },
      { step: 'initialize', name: 'rfc0058RequestCounter' },
    );
    // 3 hour partitions × 3 files.
    const records = corpusRecords(0, 9 * PER_FILE);
    for (let f = 0; f < 9; f++) {
      const part = records.slice(f * PER_FILE, (f + 1) * PER_FILE);
      const rows = part.map((record) => ({
        tenantId: 'acme',
        record,
        mined: { templateId: 1n, templateVersion: 1, params: [], confidence: 1, lossy: false },
      }));
      const hour = CORPUS_BASE_NS + BigInt(Math.floor(f / 3)) * HOUR_NS;
      await store.put(dataFileKey('acme', hour, uuidv7()), await encodeLogsParquet(rows, { rowGroupRows: PER_FILE }));
      fileCount++;
    }
  });

  after(async () => {
    store.close();
    await s3.stop();
  });

  async function runS3(limits: {
    maxListedObjects?: number;
    maxFiles?: number;
  }): Promise<{ outcome: Awaited<ReturnType<typeof executeQuery>>; commands: string[] }> {
    const parsed = parseQuery(`true | ${S3_RANGE} | count`);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const pool = createMemoryPool({ sizeBytes: 64 << 20 });
    const reservation = pool.createQuery('s3');
    commands.length = 0;
    const outcome = await executeQuery({
      store,
      tenant: 'acme',
      query: parsed.value,
      nowNs: CORPUS_BASE_NS + 3n * HOUR_NS,
      defaultWindowSecs: 3600,
      limits: {
        defaultRows: 1000,
        maxRows: 10_000,
        maxListedObjects: 100_000,
        maxFiles: 10_000,
        maxResultBytes: 64 << 20,
        ...limits,
      },
      reservation,
    });
    if (outcome.status === 'ok') outcome.budget.release();
    reservation.releaseAll();
    assert.equal(pool.reserved(), 0);
    return { outcome, commands: [...commands] };
  }

  test('RFC0058.6: S3 — over max_listed_objects the walk stops at cap + 1 keys: no list page after the one that crossed the cap, no read', async () => {
    const { outcome, commands: sent } = await runS3({ maxListedObjects: 5 });
    assert.deepEqual(outcome.status === 'error' && outcome.error, {
      kind: 'query_file_limit',
      cap: 'max_listed_objects',
      limit: 5,
    });
    // Pages of 2 keys: keys 1–2, 3–4, 5–6; the 6th crosses the cap, so exactly 3 list requests of the 5 the walk would need.
    assert.deepEqual(sent, ['ListObjectsV2Command', 'ListObjectsV2Command', 'ListObjectsV2Command']);
  });

  test('RFC0058.6: S3 — max_files below the live file count is query_file_limit before any footer is read', async () => {
    const { outcome, commands: sent } = await runS3({ maxFiles: fileCount - 1 });
    assert.deepEqual(outcome.status === 'error' && outcome.error, {
      kind: 'query_file_limit',
      cap: 'max_files',
      limit: fileCount - 1,
    });
    assert.ok(
      sent.length > 0 && sent.every((c) => c === 'ListObjectsV2Command'),
      `only listings, no GetObject: ${sent.join(',')}`,
    );
    const ok = await runS3({ maxFiles: fileCount });
    assert.equal(ok.outcome.status, 'ok');
    assert.ok(ok.commands.includes('GetObjectCommand'), 'the control run does read footers');
  });

  test('RFC0058.6: S3 — a manifest.json listed at more than 1 MiB is query_file_limit with no GET for it', async () => {
    const manifestKey = `${dataPartitionPrefix('acme', Number(CORPUS_BASE_NS / 1_000_000n))}manifest.json`;
    await store.put(manifestKey, new Uint8Array(1024 * 1024 + 1).fill(0x20));
    try {
      const { outcome, commands: sent } = await runS3({});
      assert.deepEqual(outcome.status === 'error' && outcome.error, {
        kind: 'query_file_limit',
        cap: 'manifest_bytes',
        limit: 1024 * 1024,
      });
      assert.ok(
        sent.every((c) => c === 'ListObjectsV2Command'),
        `no GetObject at all: ${sent.join(',')}`,
      );
    } finally {
      await store.delete(manifestKey);
    }
  });
});
