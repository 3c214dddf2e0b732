/**
 * Issue 18 through the real CLI: `querier.on_corrupt_object` from the configuration file reaches the query
 * workers. Over a store holding a healthy file beside a truncated one, and a partition whose manifest is garbage,
 * `fail` answers 500 `storage_corrupt` naming the object (and logs it as a warn), `skip` answers 200 without the
 * damaged objects and lists them in `stats`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { LogRecord } from '@sluice/core';
import {
  createLocalObjectStore,
  dataFileKey,
  dataPartitionPrefix,
  encodeLogsParquet,
  manifestKey,
  uuidv7,
  type StoredLogRow,
} from '@sluice/storage';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

/** 2026-06-01T00:00:00Z in ns. */
const T0 = 1_780_272_000_000_000_000n;
const H = 3_600_000_000_000n;
const RANGE = 'range(2026-06-01T00:00:00Z, 2026-06-01T02:00:00Z)';
const COUNT = `true | ${RANGE} | count`;

function rows(count: number, startNs: bigint): StoredLogRow[] {
  return Array.from({ length: count }, (_, i) => {
    const t = startNs + BigInt(i) * 1_000_000_000n;
    const record: LogRecord = {
      timeUnixNano: t,
      observedTimeUnixNano: t,
      severityNumber: 9,
      severityText: 'INFO',
      body: { kind: 'string', value: `line ${i}` },
      attributes: [],
      droppedAttributesCount: 0,
      flags: 0,
      traceId: new Uint8Array(0),
      spanId: new Uint8Array(0),
      eventName: '',
      resource: { attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
      scope: { name: 'e2e', version: '1', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
    };
    return {
      tenantId: 'acme',
      record,
      mined: { templateId: 1n, templateVersion: 1, params: [], confidence: 1, lossy: false },
    };
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function postCount(url: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': 'acme' },
    body: JSON.stringify({ query: COUNT }),
  });
  return { status: res.status, json: await res.json() };
}

describe('querier.on_corrupt_object through sluice serve', () => {
  const dir = tempDir('corrupt-objects');
  const dataDir = join(dir, 'data');
  let truncatedKey = '';
  let manifest = '';
  const servers: SluiceProcess[] = [];

  /** Starts a querier-only gateway over the fixture with the given policy. */
  async function start(policy: 'fail' | 'skip'): Promise<SluiceProcess> {
    const yaml = testConfigYaml({
      walDir: join(dir, `wal-${policy}`),
      dataDir,
      receiver: false,
      querier: true,
      defaultTenant: null,
    });
    const withPolicy = yaml.replace(
      /querier:\n {2}enabled: true\n/,
      `querier:\n  enabled: true\n  on_corrupt_object: ${policy}\n`,
    );
    assert.notEqual(withPolicy, yaml, 'the policy line was placed');
    const server = await spawnSluice(withPolicy, { dir });
    servers.push(server);
    await server.waitReady();
    return server;
  }

  before(async () => {
    const store = createLocalObjectStore({ root: dataDir });
    // Hour 0: a healthy file (100 rows) and a truncated one.
    await store.put(dataFileKey('acme', T0, uuidv7()), await encodeLogsParquet(rows(100, T0)));
    const damaged = await encodeLogsParquet(rows(10, T0 + 500n * 1_000_000_000n));
    truncatedKey = dataFileKey('acme', T0, uuidv7());
    await store.put(truncatedKey, damaged.slice(0, Math.floor(damaged.length / 2)));
    // Hour 1: a healthy file left out with its partition, whose manifest is garbage.
    await store.put(dataFileKey('acme', T0 + H, uuidv7()), await encodeLogsParquet(rows(50, T0 + H)));
    manifest = manifestKey(dataPartitionPrefix('acme', Number((T0 + H) / 1_000_000n)));
    await store.put(manifest, new TextEncoder().encode('{"generation":'));
  });

  after(async () => {
    for (const s of servers) await s.stop();
  });

  test('fail (the default): 500 storage_corrupt naming the object, and a warn line with its key and reason', async () => {
    const server = await start('fail');
    const answer = await postCount(server.queryUrl!);
    assert.equal(answer.status, 500, JSON.stringify(answer.json));
    assert.equal(answer.json.error.kind, 'storage_corrupt');
    assert.equal(answer.json.error.retryable, false);
    assert.ok([truncatedKey, manifest].includes(answer.json.error.key), JSON.stringify(answer.json));
    assert.ok(answer.json.error.message.includes(answer.json.error.key));
    const warned = server.logs.filter((l) => l.includes('"corrupt object in storage"'));
    assert.equal(warned.length, 1, server.logs.join('\n'));
    assert.ok(warned[0]!.includes(answer.json.error.key));
  });

  test('skip: 200 without the damaged objects, each named in stats', async () => {
    const server = await start('skip');
    const answer = await postCount(server.queryUrl!);
    assert.equal(answer.status, 200, JSON.stringify(answer.json));
    assert.equal(answer.json.rows, 100, 'the healthy file of hour 0 only');
    assert.equal(answer.json.stats.objects_skipped, 2);
    assert.deepEqual(answer.json.stats.skipped_objects, [
      { key: manifest, reason: 'manifest_invalid' },
      { key: truncatedKey, reason: 'parquet_unreadable' },
    ]);
  });
});
