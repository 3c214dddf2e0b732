/**
 * Miner state is durable and consistent with WAL replay: the same exports, whether they went through one clean
 * run or through a checkpoint, a kill -9 and a WAL replay, end up with the same template ids and versions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { LogRecord } from '@sluice/core';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { post } from '../helpers/http-client.js';
import { makeRecords } from '../helpers/records.js';
import { readStoredRows } from '../helpers/read-store.js';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const WORDS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];

/** Batch `b`: lines whose variable words force template creation and widening as batches go on. */
function batch(b: number): Uint8Array {
  const records = makeRecords(20, { start: b * 20 }).map((r, i): LogRecord => {
    const n = b * 20 + i;
    const line =
      i % 3 === 0
        ? `user ${WORDS[n % WORDS.length]} logged out of ${WORDS[(n * 7) % WORDS.length]}`
        : i % 3 === 1
          ? `job ${WORDS[(n >> 1) % WORDS.length]} finished step ${n % 9} of ${WORDS[n % 4]}`
          : `cache ${WORDS[n % 2]} evicted key k${n}`;
    return { ...r, body: { kind: 'string', value: line } };
  });
  return encodeLogsProtobuf(records);
}

async function send(url: string, from: number, to: number): Promise<void> {
  for (let b = from; b < to; b++) {
    const res = await post(`${url}/v1/logs`, batch(b), { 'content-type': 'application/x-protobuf' });
    assert.equal(res.status, 200);
  }
}

async function templateIdsByTime(root: string): Promise<Map<bigint, string>> {
  const rows = await readStoredRows({ backend: 'local', root });
  return new Map(rows.map((r) => [r.record.timeUnixNano, `${r.mined.templateId}@${r.mined.templateVersion}`]));
}

test(
  'a restart from checkpoint + miner snapshot + WAL replay after kill -9 yields the same template ids and versions as a clean run',
  { timeout: 120_000 },
  async () => {
    const BATCHES = 12;
    // Run A: one clean run.
    const a = tempDir('miner-a');
    const configA = testConfigYaml({ walDir: join(a, 'wal'), dataDir: join(a, 'data'), flushAgeSecs: 600 });
    const runA = await spawnSluice(configA, { dir: a });
    await send(runA.otlpHttpUrl, 0, BATCHES);
    assert.equal((await runA.stop()).code, 0);
    const expected = await templateIdsByTime(join(a, 'data'));
    assert.equal(expected.size, BATCHES * 20);
    assert.ok(new Set(expected.values()).size > 3, 'the corpus produced several templates');
    assert.ok(
      [...expected.values()].some((v) => !v.endsWith('@1')),
      'and some widened templates',
    );

    // Run B: half, graceful stop (checkpoint with miner snapshot); the rest, kill -9 before any flush; replay.
    const b = tempDir('miner-b');
    const configB = testConfigYaml({ walDir: join(b, 'wal'), dataDir: join(b, 'data'), flushAgeSecs: 600 });
    const first = await spawnSluice(configB, { dir: b });
    await send(first.otlpHttpUrl, 0, BATCHES / 2);
    assert.equal((await first.stop()).code, 0);
    const second = await spawnSluice(configB, { dir: b });
    await send(second.otlpHttpUrl, BATCHES / 2, BATCHES);
    await second.kill();
    const third = await spawnSluice(configB, { dir: b });
    await third.waitReady();
    assert.equal((await third.stop()).code, 0);
    assert.ok(
      third.logs.some((l) => /"msg":"sink replayed the WAL".*"exports":6/.test(l)),
      "the killed run's 6 exports were replayed",
    );

    const got = await templateIdsByTime(join(b, 'data'));
    assert.equal(got.size, expected.size);
    for (const [time, id] of expected) assert.equal(got.get(time), id, `template id@version of the record at ${time}`);
  },
);
