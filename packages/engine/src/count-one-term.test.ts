/**
 * @module count-one-term.test
 * `count by` one u64 or dictionary term is counted straight from the column (decode/term-counts.ts): checked
 * against a naive oracle over many row groups (template ids below and far above 2^16, services with NULLs,
 * whole groups and window-cut selections), and its direct table is reserved on the query's pool.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryPool } from '@sluice/limits';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { createLocalObjectStore } from '@sluice/storage';
import { DIRECT_TABLE_BYTES } from './decode/term-counts.js';
import { BIG_TEMPLATE, H, T0, effective, makeRows, writeDataFiles } from './testing/corpus.js';
import { run } from './testing/harness.js';

const NOW = T0 + 4n * H;

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

function service(r: StoredLogRow): string | undefined {
  const v = r.record.resource.attributes.find((a) => a.key === 'service.name')?.value;
  return v?.kind === 'string' ? v.value : undefined;
}

/** `{key → count}` of the rows in `[from, to)`, NULL keys left out. */
function oracle(rows: readonly StoredLogRow[], key: (r: StoredLogRow) => string | undefined, from: bigint, to: bigint) {
  const out = new Map<string, number>();
  for (const r of rows) {
    if (effective(r) < from || effective(r) >= to) continue;
    const k = key(r);
    if (k !== undefined) out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

function counted(json: { aggregate: { key: string[]; count: number }[] }): Map<string, number> {
  return new Map(json.aggregate.map((g) => [g.key[0] as string, g.count]));
}

describe('count by one u64 or dictionary term', () => {
  let dir = '';
  let store: ObjectStore;
  let rows: StoredLogRow[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'count-one-term-'));
    store = createLocalObjectStore({ root: dir });
    // Template ids beyond the direct table (70000, BIG_TEMPLATE, 2^63 + 5) next to small ones.
    const big = [70_000n, BIG_TEMPLATE, (1n << 63n) + 5n];
    // Every 11th row without a service (a NULL dictionary key, left out of every group).
    rows = makeRows({ tenant: 'acme', count: 2400, startNs: T0, spanNs: 4n * H, seed: 21 }).map((r, i) => {
      const mined = i % 7 === 0 ? { ...r.mined, templateId: big[i % 3] as bigint } : r.mined;
      const resource =
        i % 11 === 0
          ? { ...r.record.resource, attributes: r.record.resource.attributes.filter((a) => a.key !== 'service.name') }
          : r.record.resource;
      return { ...r, mined, record: { ...r.record, resource } };
    });
    await writeDataFiles(store, rows, { filesPerHour: 2, rowGroupRows: 150 });
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const windows: [string, bigint, bigint][] = [
    ['whole groups', T0, T0 + 4n * H],
    ['a window cutting groups', T0 + H / 3n, T0 + 3n * H + H / 7n],
  ];
  for (const [what, from, to] of windows) {
    test(`count by template_id and by service give the oracle's counts over ${what}`, async () => {
      const R = `range(${iso(from)}, ${iso(to)})`;
      const t = await run(store, `true | ${R} | count by template_id`, { nowNs: NOW });
      assert.deepEqual(
        counted(t.json),
        oracle(rows, (r) => r.mined.templateId.toString(), from, to),
      );
      const s = await run(store, `true | ${R} | count by service`, { nowNs: NOW });
      const want = oracle(rows, service, from, to);
      assert.ok(
        [...rows].some((r) => service(r) === undefined),
        'some rows have no service',
      );
      assert.deepEqual(counted(s.json), want);
      const filtered = await run(store, `severity >= warn | ${R} | count by template_id`, { nowNs: NOW });
      assert.deepEqual(
        counted(filtered.json),
        oracle(
          rows.filter((r) => r.record.severityNumber >= 13 || r.record.severityNumber === 0),
          (r) => r.mined.templateId.toString(),
          from,
          to,
        ),
      );
    });
  }

  test('the direct table of count by a u64 term is reserved on the pool', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    const r = await run(store, `true | range(${iso(T0)}, ${iso(T0 + H)}) | count by template_id`, {
      nowNs: NOW,
      pool,
    });
    assert.equal(r.outcome.status, 'ok');
    assert.ok(
      pool.peakReserved() >= DIRECT_TABLE_BYTES,
      `peak ${pool.peakReserved()} covers the ${DIRECT_TABLE_BYTES}-byte table`,
    );
  });
});
