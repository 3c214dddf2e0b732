/**
 * @module sort-newest-first.test
 * `sort ts desc | limit n` walks partitions newest first and, once the top n are in, reads nothing more for row
 * groups the statistics cover (docs/design/query-engine.md, "Newest first"): the answer is the oracle's, `rows` is
 * still every match, and far fewer row groups are read than by the oldest-first `sort ts asc` walk.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { createLocalObjectStore } from '@sluice/storage';
import { H, T0, makeRows, writeDataFiles } from './testing/corpus.js';
import { run } from './testing/harness.js';

const NOW = T0 + 5n * H;

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

describe('sort ts desc | limit n walks partitions newest first', () => {
  let dir = '';
  let store: ObjectStore;
  let rows: StoredLogRow[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sort-desc-'));
    store = createLocalObjectStore({ root: dir });
    rows = makeRows({ tenant: 'acme', count: 4000, startNs: T0, spanNs: 4n * H, seed: 21 });
    await writeDataFiles(store, rows, { filesPerHour: 2, rowGroupRows: 200 });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('the newest n records and every match counted, reading a fraction of what the oldest-first walk reads', async () => {
    const W = `range(${iso(T0)}, ${iso(T0 + 4n * H)})`;
    let descGroups = 0;
    let ascGroups = 0;
    const desc = await run(store, `true | ${W} | sort ts desc | limit 5`, {
      nowNs: NOW,
      hooks: { beforeRowGroup: () => void descGroups++ },
    });
    const want = rows
      .map((r) => r.record.timeUnixNano)
      .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
      .slice(0, 5)
      .map(String);
    assert.deepEqual(
      desc.json.records.map((r: { time_unix_nano: unknown }) => String(r.time_unix_nano)),
      want,
    );
    assert.equal(desc.json.rows, rows.length);
    const asc = await run(store, `true | ${W} | sort ts asc | limit 5`, {
      nowNs: NOW,
      hooks: { beforeRowGroup: () => void ascGroups++ },
    });
    assert.equal(asc.json.rows, rows.length);
    // Only the newest hour's groups are read; the older hours' groups are counted from their statistics.
    assert.ok(descGroups * 3 < ascGroups, `desc read ${descGroups} row groups, asc ${ascGroups}`);
    assert.equal(desc.json.stats.row_groups_scanned, asc.json.stats.row_groups_scanned);
  });

  test('with a predicate and a window that cuts groups, the answer is the oracle and rows counts every match', async () => {
    const from = T0 + H / 2n;
    const to = T0 + 3n * H + H / 3n;
    const text = `severity >= warn | range(${iso(from)}, ${iso(to)}) | sort ts desc | limit 7`;
    const got = await run(store, text, { nowNs: NOW });
    const match = rows.filter((r) => {
      const t = r.record.timeUnixNano;
      const s = r.record.severityNumber;
      return t >= from && t < to && (s >= 13 || s === 0);
    });
    const want = match
      .map((r) => r.record.timeUnixNano)
      .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
      .slice(0, 7)
      .map(String);
    assert.deepEqual(
      got.json.records.map((r: { time_unix_nano: unknown }) => String(r.time_unix_nano)),
      want,
    );
    assert.equal(got.json.rows, match.length);
  });
});
