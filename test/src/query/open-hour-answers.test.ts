/**
 * Open-hour compaction changes what is read, never what is answered (docs/design/freshness.md): a partition of
 * the current hour holding several sink files is queried, compacted while the hour is still open (the compactor's
 * `compactPartition` with `openHourMinFileAgeSecs`), and queried again; every statement of the suite gives the
 * same answer (stats aside: the file and row-group counts are what compaction changes).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compactPartition } from '@sluice/compaction';
import { liveKeys, partitionPrefix, rowsFor } from '@sluice/compaction/testing';
import { executeQuery } from '@sluice/engine';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import { createLocalObjectStore, encodeLogsParquet, uuidv7, type ObjectStore } from '@sluice/storage';

const HOUR_MS = Date.UTC(2026, 2, 1, 10);
const NOW_MS = HOUR_MS + 40 * 60_000; // the hour is open
const WINDOW = 'range(2026-03-01T10:00:00Z, 2026-03-01T11:00:00Z)';
const SUITE = [
  `true | ${WINDOW} | count`,
  `true | ${WINDOW} | count by service`,
  `severity >= warn | ${WINDOW} | count by template_id`,
  `true | ${WINDOW} | count by service, bucket(5m)`,
  `contains(body, "timeout") | ${WINDOW} | count`,
  `contains(body, "request_id=req-0") | ${WINDOW} | count`,
  `not (severity < error) or contains(body, "cache miss") | ${WINDOW} | count by severity`,
];

let dir = '';
let store: ObjectStore;
const pool = createMemoryPool({ sizeBytes: 256 << 20 });

async function answer(statement: string): Promise<unknown> {
  const parsed = parseQuery(statement);
  assert.ok(parsed.ok, statement);
  const reservation = pool.createQuery(`q-${Math.random()}`);
  try {
    const outcome = await executeQuery({
      store,
      tenant: 'acme',
      query: parsed.value,
      nowNs: BigInt(NOW_MS) * 1_000_000n,
      defaultWindowSecs: 3600,
      limits: { defaultRows: 100, maxRows: 10_000, maxListedObjects: 10_000, maxFiles: 1000, maxResultBytes: 1 << 24 },
      reservation,
    });
    assert.equal(outcome.status, 'ok', JSON.stringify(outcome));
    if (outcome.status !== 'ok') return null;
    const json = JSON.parse(outcome.body.toString('utf8')) as Record<string, unknown>;
    outcome.budget.release();
    delete json['stats'];
    return json;
  } finally {
    reservation.releaseAll();
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-open-hour-answers-'));
  store = createLocalObjectStore({ root: dir });
  // Eight sink files of the open hour, each a minute old or more: old enough to be merged.
  const prefix = partitionPrefix('acme', HOUR_MS);
  for (let f = 0; f < 8; f++) {
    const rows = rowsFor(300, 900 + f, HOUR_MS + f * 60_000);
    const name = `${uuidv7(NOW_MS - (10 - f) * 60_000)}.parquet`;
    await store.put(`${prefix}${name}`, await encodeLogsParquet(rows, { rowGroupRows: 100 }));
  }
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('every statement of the suite answers the same before and after the open hour is compacted', async () => {
  const before = await Promise.all(SUITE.map(answer));
  const prefix = partitionPrefix('acme', HOUR_MS);
  const outcome = await compactPartition(store, prefix, {
    now: () => NOW_MS,
    graceSecs: 900,
    openHourMinFileAgeSecs: 10,
  });
  assert.equal(outcome.status, 'committed', JSON.stringify(outcome));
  assert.ok((await liveKeys(store, prefix)).length < 8, 'the live set shrank');
  const afterwards = await Promise.all(SUITE.map(answer));
  SUITE.forEach((statement, i) => assert.deepEqual(afterwards[i], before[i], statement));
  const total = before[0] as { rows: number };
  assert.equal(total.rows, 8 * 300);
});
