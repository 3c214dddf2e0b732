/**
 * An Arrow answer (docs/design/query-engine.md, "Arrow results") against DuckDB as an independent oracle. DuckDB
 * 1.5 cannot read an Arrow IPC stream offline (no `read_arrow` without its downloaded extension, no Arrow
 * registration in the node API), so the comparison runs the other way: the engine answers over Parquet files
 * written by Sluice's encoder, apache-arrow reads the stream, and DuckDB reads the same files; both must hold the
 * same rows (times, template ids at and above 2^63, severities, trace ids, bodies) and the same counts per template.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC, type Table } from 'apache-arrow';
import { executeQuery, type ExecuteOutcome } from '@sluice/engine';
import { createMemoryPool } from '@sluice/limits';
import { parseQuery } from '@sluice/query';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7 } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { duckDbRows, type DuckRow } from '../helpers/read-store.js';

const T0 = 1_780_272_000_000_000_000n; // 2026-06-01T00:00:00Z
const H = 3_600_000_000_000n;
const W = 'range(2026-06-01T00:00:00Z, 2026-06-01T02:00:00Z)';
let root = '';

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'sluice-arrow-duck-'));
  const store = createLocalObjectStore({ root });
  for (const hour of [0n, 1n]) {
    const rows = sampleRows(1500, { seed: Number(hour) + 3, startNs: T0 + hour * H, tenant: 'acme' }).map((r, i) =>
      // Every seventh row gets a template id at or above 2^63 (u64 only: int64 readers would see it negative).
      i % 7 === 0 ? { ...r, mined: { ...r.mined, templateId: 2n ** 63n + BigInt(i) } } : r,
    );
    await store.put(dataFileKey('acme', T0 + hour * H, uuidv7()), await encodeLogsParquet(rows));
  }
});
after(() => {
  rmSync(root, { recursive: true, force: true });
});

async function arrowAnswer(text: string): Promise<Table> {
  const parsed = parseQuery(text);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const reservation = createMemoryPool({ sizeBytes: 1 << 30 }).createQuery('arrow-duck');
  const outcome: ExecuteOutcome = await executeQuery({
    store: createLocalObjectStore({ root }),
    tenant: 'acme',
    query: parsed.value,
    nowNs: T0 + 2n * H,
    defaultWindowSecs: 3600,
    limits: { defaultRows: 100, maxRows: 10_000, maxListedObjects: 1000, maxFiles: 1000, maxResultBytes: 64 << 20 },
    reservation,
    format: 'arrow',
  });
  if (outcome.status !== 'ok') throw new Error(`query failed: ${outcome.error.kind}`);
  const table = tableFromIPC(outcome.body);
  outcome.budget.release();
  reservation.releaseAll();
  return table;
}

/** The 64-bit integers of a column (times as their unsigned bits), `null` for NULL. */
function u64s(table: Table, name: string): (bigint | null)[] {
  const column = table.getChild(name)!;
  const values = column.data[0]!.values as BigInt64Array | BigUint64Array;
  return Array.from({ length: table.numRows }, (_, i) =>
    column.isValid(i) ? BigInt.asUintN(64, values[i] as bigint) : null,
  );
}

const rowKey = (r: DuckRow): string =>
  [r.timeUnixNano, r.templateId, r.severityNumber, r.traceIdHex, r.body ?? '∅'].join('|');

test('every record of an Arrow answer is a row DuckDB reads from the same files, and each of them is there once', async () => {
  const table = await arrowAnswer(`true | ${W} | limit 5000`);
  const duck = await duckDbRows({ backend: 'local', root });
  assert.equal(table.numRows, 3000);
  assert.equal(duck.length, 3000);
  const times = u64s(table, 'time_unix_nano');
  const ids = u64s(table, 'template_id');
  const line = table.getChild('body_line')!;
  const value = table.getChild('body_value')!;
  const sev = table.getChild('severity_number')!;
  const trace = table.getChild('trace_id')!;
  const fromArrow = Array.from({ length: table.numRows }, (_, i) =>
    [
      times[i],
      ids[i],
      sev.get(i) as number,
      (trace.get(i) as string | null) ?? '',
      (line.get(i) as string | null) ?? (value.get(i) as string | null) ?? '∅',
    ].join('|'),
  );
  assert.deepEqual(fromArrow.sort(), duck.map(rowKey).sort());
  assert.ok(
    ids.some((id) => id !== null && id >= 2n ** 63n),
    'ids at or above 2^63 were compared',
  );
});

test('count by template_id as Arrow equals DuckDB GROUP BY template_id', async () => {
  const table = await arrowAnswer(`true | ${W} | count by template_id`);
  const duck = await duckDbRows({ backend: 'local', root });
  const want = new Map<string, bigint>();
  for (const r of duck) want.set(String(r.templateId), (want.get(String(r.templateId)) ?? 0n) + 1n);
  const got = new Map<string, bigint>();
  const keys = table.getChild('key_0')!;
  const counts = table.getChild('count')!;
  for (let i = 0; i < table.numRows; i++) got.set(keys.get(i) as string, counts.get(i) as bigint);
  assert.deepEqual(got, want);
});
