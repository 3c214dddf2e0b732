/**
 * docs/analytics.md's DuckDB statements, run as written (taken from the page itself) over a store written by
 * Sluice's own sink and compactor: two tenants (one whose key segment is percent-encoded), two hours, several
 * flushes per hour, and one compacted hour whose replaced files are still present (inside the grace). The view
 * counts every row exactly once where a plain glob counts the compacted hour twice, and the documented query
 * gives the errors per service and hour that the exported records hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { compactPartition } from '@sluice/compaction';
import { effectiveTimeUnixNano, type LogRecord } from '@sluice/core';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { createSinkLoop, encodeWalExport } from '@sluice/sink';
import { createLocalObjectStore, dataPartitionPrefix, type ObjectStore } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';
import { openWal, type WalPosition } from '@sluice/wal';
import { REPO_ROOT } from '../helpers/spawn-sluice.js';

const HOUR_MS = 3_600_000;
const HOUR0_MS = Date.UTC(2026, 0, 1, 0);
const GRACE_SECS = 900;

/** The SQL block that follows `<!-- duckdb: <name> -->` in docs/analytics.md, with `<store>` replaced. */
function docSql(name: string, store: string): string {
  const page = readFileSync(join(REPO_ROOT, 'docs', 'analytics.md'), 'utf8');
  const m = new RegExp(`<!-- duckdb: ${name} -->\\s*\`\`\`sql\\n([\\s\\S]*?)\`\`\``).exec(page);
  if (m === null) throw new Error(`docs/analytics.md has no "duckdb: ${name}" SQL block`);
  return m[1]!.replaceAll('<store>', store);
}

/** Exports in three flushes per hour for two tenants, through a real WAL and the sink; returns what was sent. */
async function writeStore(root: string, store: ObjectStore): Promise<{ tenant: string; record: LogRecord }[]> {
  const walDir = join(root, 'wal');
  const sent: { tenant: string; record: LogRecord }[] = [];
  let flush = 0;
  for (const hour of [0, 1]) {
    for (let round = 0; round < 3; round++) {
      const wal = await openWal({ dir: walDir, groupCommitMs: 1, segmentBytes: 1 << 24 });
      let last: WalPosition | null = null;
      for (const tenant of ['acme', 'team@1']) {
        const startNs = BigInt(HOUR0_MS + hour * HOUR_MS + round * 600_000) * 1_000_000n;
        const records = sampleRows(150, { seed: 10 * hour + round + (tenant === 'acme' ? 0 : 100), startNs }).map(
          (r) => r.record,
        );
        last = await wal.append(encodeWalExport(tenant, 'protobuf', encodeLogsProtobuf(records)));
        for (const record of records) sent.push({ tenant, record });
      }
      await wal.close();
      // One sink run per round: each round's rows become new files in their partitions.
      const sink = createSinkLoop({
        settings: {
          walDir,
          flushAgeSecs: 3600,
          flushBytes: 1 << 30,
          ceilingBytes: 1 << 30,
          miner: {},
          replayTarget: last,
        },
        store,
        emit: () => undefined,
      });
      const running = sink.run();
      sink.shutdown(last);
      await running;
      flush++;
    }
  }
  assert.equal(flush, 6);
  return sent;
}

test(
  'the DuckDB view of docs/analytics.md honours manifest.json and the documented query matches the exported records',
  { timeout: 120_000 },
  async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-analytics-'));
    const storeRoot = join(root, 'store');
    const store = createLocalObjectStore({ root: storeRoot });
    const instance = await DuckDBInstance.create();
    const conn = await instance.connect();
    const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson();
    const count = async (sql: string) => Number((await rows(sql))[0]!['n']);
    try {
      const sent = await writeStore(root, store);
      const views = docSql('views', storeRoot);

      // Before any compaction there is no manifest: the view is every file.
      await conn.run(views);
      assert.equal(await count('SELECT count(*) AS n FROM sluice_logs'), sent.length);

      // Compact acme's first hour inside the grace: the three replaced files stay next to the merged one.
      const prefix = dataPartitionPrefix('acme', HOUR0_MS);
      const outcome = await compactPartition(store, prefix, {
        now: () => HOUR0_MS + HOUR_MS + GRACE_SECS * 1000 + 1000,
        graceSecs: GRACE_SECS,
      });
      assert.equal(outcome.status, 'committed');
      assert.equal(outcome.status === 'committed' && outcome.inputs.length, 3);

      await conn.run(views);
      const glob = `'${storeRoot}/data/**/*.parquet'`;
      const compactedRows = sent.filter(
        (s) => s.tenant === 'acme' && effectiveTimeUnixNano(s.record) < BigInt(HOUR0_MS + HOUR_MS) * 1_000_000n,
      ).length;
      assert.equal(
        await count(`SELECT count(*) AS n FROM read_parquet(${glob})`),
        sent.length + compactedRows,
        'a plain glob counts the compacted hour twice (what the manifest rule warns about)',
      );
      assert.equal(await count('SELECT count(*) AS n FROM sluice_logs'), sent.length, 'the view counts each row once');
      assert.equal(
        await count(`SELECT count(*) AS n FROM sluice_logs WHERE tenant_id = 'team@1'`),
        sent.filter((s) => s.tenant === 'team@1').length,
        'the data column holds the tenant as sent',
      );

      // The documented query, against the same figures computed from the exported records.
      const expected = new Map<string, number>();
      for (const { tenant, record } of sent) {
        if (tenant !== 'acme' || record.severityNumber < 17) continue;
        const service = record.resource.attributes.find((a) => a.key === 'service.name')!.value;
        const hourStart = Math.floor(Number(record.timeUnixNano / 1_000_000n) / HOUR_MS) * HOUR_MS;
        const key = `${service.kind === 'string' ? service.value : ''} ${new Date(hourStart).toISOString()}`;
        expected.set(key, (expected.get(key) ?? 0) + 1);
      }
      const got = new Map<string, number>();
      for (const r of await rows(docSql('query', storeRoot))) {
        const hour = new Date(`${String(r['hour']).replace(' ', 'T')}Z`).toISOString();
        got.set(`${String(r['service'])} ${hour}`, Number(r['errors']));
      }
      assert.ok(expected.size >= 10, `enough groups to be a real check (${expected.size})`);
      assert.deepEqual(got, expected);
    } finally {
      conn.closeSync();
      instance.closeSync();
      rmSync(root, { recursive: true, force: true });
    }
  },
);
