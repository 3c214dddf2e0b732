/**
 * @module redos-rows
 * Rows for the catastrophic-backtracking storm query {@link REDOS_QUERY_PREDICATE}: bodies of forty `a`s ending in
 * `!`, on which a backtracking engine tries every split of the run before `$` fails. Written as extra Parquet
 * files next to a corpus (not through the bench corpus builder), so the benches' corpus stays byte-for-byte the same.
 */
import type { LogRecord } from '@sluice/core';
import { createMiner } from '@sluice/miner';
import { createLocalObjectStore, dataFileKey, encodeLogsParquet, uuidv7, type StoredLogRow } from '@sluice/storage';
import { corpusRecords } from './query-corpus.js';

/** The predicate from the incident: exponential under a backtracking regex engine, linear under RE2. */
export const REDOS_QUERY_PREDICATE = 'matches(body, "(a+)+$")';

/** The body every row carries. */
export const REDOS_BODY = `${'a'.repeat(40)}!`;

const HOUR_NS = 3_600_000_000_000n;

/**
 * Writes `rows` records with {@link REDOS_BODY} under `root` for `tenant`, spread over the corpus's three hours
 * (one file per hour, the receiver's layout).
 */
export async function writeRedosRows(root: string, tenant: string, rows = 30): Promise<void> {
  const store = createLocalObjectStore({ root });
  const miner = createMiner();
  const byHour = new Map<bigint, StoredLogRow[]>();
  // Tenant index 1: the bench corpus uses 0, so these rows' times and trace ids never coincide with its rows.
  for (const base of corpusRecords(1, rows)) {
    const record: LogRecord = { ...base, body: { kind: 'string', value: REDOS_BODY } };
    const hour = record.timeUnixNano / HOUR_NS;
    const list = byHour.get(hour) ?? [];
    list.push({ tenantId: tenant, record, mined: miner.mine(tenant, record) });
    byHour.set(hour, list);
  }
  for (const list of byHour.values()) {
    await store.put(dataFileKey(tenant, list[0]!.record.timeUnixNano, uuidv7()), await encodeLogsParquet(list));
  }
}
