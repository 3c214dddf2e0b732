/**
 * @module @sluice/compaction/testing
 * Helpers for the compaction tests (this package and the compactor role): building partitions of real Parquet
 * files, damaging them the ways storage does (truncation, a flipped bit in a page), reading a partition's live set
 * and the audit events, and DuckDB fingerprints of every column of a set of files.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  compareKeys,
  dataPartitionPrefix,
  encodeLogsParquet,
  manifestKey,
  openParquetFile,
  parsePartitionManifest,
  sourceFromBytes,
  uuidv7,
} from '@sluice/storage';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { sampleRows } from '@sluice/storage/testing';

/** 2026-01-01T00:00Z, the hour the tests' sealed partitions cover. */
export const SEALED_HOUR_MS = Date.UTC(2026, 0, 1, 0);

/** The partition prefix of `tenant` for the hour starting at `hourMs`. */
export function partitionPrefix(tenant: string, hourMs: number): string {
  return dataPartitionPrefix(tenant, hourMs);
}

/**
 * `count` rows starting at the hour, with some rows lacking `service.name` (NULL service) so NULL-first ordering
 * is exercised.
 */
export function rowsFor(count: number, seed: number, hourMs: number, tenant = 'acme'): StoredLogRow[] {
  const rows = sampleRows(count, { seed, startNs: BigInt(hourMs) * 1_000_000n, tenant });
  return rows.map((r, i) =>
    i % 7 === 3
      ? { ...r, record: { ...r.record, resource: { attributes: [], droppedAttributesCount: 0, schemaUrl: '' } } }
      : r,
  );
}

/** Writes `rows` as one new data file in the partition and returns its key. */
export async function writeDataFile(
  store: ObjectStore,
  prefix: string,
  rows: readonly StoredLogRow[],
  rowGroupRows?: number,
): Promise<string> {
  const key = `${prefix}${uuidv7()}.parquet`;
  await store.put(key, await encodeLogsParquet(rows, rowGroupRows !== undefined ? { rowGroupRows } : {}));
  return key;
}

/** Every `*.parquet` key directly in the partition, in key order. */
export async function parquetKeys(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const e of store.list({ prefix })) {
    if (e.kind === 'object' && e.key.endsWith('.parquet') && !e.key.slice(prefix.length).includes('/'))
      keys.push(e.key);
  }
  return keys.sort(compareKeys);
}

/** The live set: the manifest's files when it exists, else every `*.parquet` (keys, sorted). */
export async function liveKeys(store: ObjectStore, prefix: string): Promise<string[]> {
  const m = await store.get(manifestKey(prefix));
  if (m === null) return parquetKeys(store, prefix);
  return parsePartitionManifest(m)
    .files.map((f) => `${prefix}${f}`)
    .sort(compareKeys);
}

/** Every key under `prefix`, in key order. */
export async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const e of store.list({ prefix })) if (e.kind === 'object') keys.push(e.key);
  return keys.sort(compareKeys);
}

/** Cuts the object at `key` to its first half (an upload cut short): its footer is gone. Returns the new bytes. */
export async function truncateObject(store: ObjectStore, key: string): Promise<Uint8Array> {
  const bytes = await store.get(key);
  if (bytes === null) throw new Error(`missing ${key}`);
  const cut = bytes.slice(0, Math.floor(bytes.byteLength / 2));
  await store.put(key, cut);
  return cut;
}

/**
 * Flips one bit inside a compressed page of `column` in row group `group` of the data file at `key` (bit rot):
 * the footer still reads, the page does not decompress. Returns the new bytes.
 */
export async function flipPageBit(store: ObjectStore, key: string, column = 'body', group = 0): Promise<Uint8Array> {
  const bytes = await store.get(key);
  if (bytes === null) throw new Error(`missing ${key}`);
  const file = await openParquetFile(sourceFromBytes(bytes));
  const md = file.metadata.row_groups[group]?.columns.find((c) => c.meta_data?.path_in_schema[0] === column)?.meta_data;
  if (md === undefined) throw new Error(`no column ${column} in row group ${group}`);
  const start = Number(md.dictionary_page_offset ?? md.data_page_offset);
  const end = start + Number(md.total_compressed_size);
  // The zstd frame magic (28 b5 2f fd) that starts each compressed page body.
  for (let i = start; i + 3 < end; i++) {
    if (bytes[i] === 0x28 && bytes[i + 1] === 0xb5 && bytes[i + 2] === 0x2f && bytes[i + 3] === 0xfd) {
      const out = bytes.slice();
      out[i + 1] = out[i + 1]! ^ 0x10;
      await store.put(key, out);
      return out;
    }
  }
  throw new Error(`no zstd page found in ${column} of row group ${group}`);
}

/** Every compaction audit event (the `.jsonl` lines under `audit/`), parsed, in key order. */
export async function auditEvents(store: ObjectStore): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const key of await keysUnder(store, 'audit/')) {
    if (!key.endsWith('.jsonl')) continue;
    const text = new TextDecoder().decode((await store.get(key))!);
    for (const line of text.split('\n')) if (line !== '') out.push(JSON.parse(line) as Record<string, unknown>);
  }
  return out;
}

/** A DuckDB in-memory database reading copies of store objects. */
export class DuckOracle {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly dir: string,
  ) {}

  static async create(): Promise<DuckOracle> {
    return new DuckOracle(await DuckDBInstance.create(), await mkdtemp(join(tmpdir(), 'sluice-compactor-duck-')));
  }

  /** Copies objects to local files (same base names, one directory per call) and returns their paths. */
  private async copy(store: ObjectStore, keys: readonly string[]): Promise<string[]> {
    const sub = await mkdtemp(join(this.dir, 'set-'));
    const paths: string[] = [];
    for (const key of keys) {
      const bytes = await store.get(key);
      if (bytes === null) throw new Error(`missing ${key}`);
      const p = join(sub, key.slice(key.lastIndexOf('/') + 1));
      await writeFile(p, bytes);
      paths.push(p);
    }
    return paths;
  }

  private async rows(sql: string): Promise<string[]> {
    const conn = await this.instance.connect();
    try {
      return (await conn.runAndReadAll(sql)).getRowObjectsJson().map((o) => JSON.stringify(o));
    } finally {
      conn.closeSync();
    }
  }

  /**
   * Every column of every row of `keys`, one JSON fingerprint per row, in the compacted order: service NULL first,
   * time, file (by name), row ordinal.
   */
  async expectedOrder(store: ObjectStore, keys: readonly string[]): Promise<string[]> {
    const paths = await this.copy(store, keys);
    const list = paths.map((p) => `'${p}'`).join(', ');
    return this.rows(
      `SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet([${list}], filename = true, file_row_number = true)
       ORDER BY "resource.service.name" NULLS FIRST, time_unix_nano, filename, file_row_number`,
    );
  }

  /** Every column of every row of `keys` in file order (files by name, then row ordinal). */
  async fileOrder(store: ObjectStore, keys: readonly string[]): Promise<string[]> {
    const paths = await this.copy(store, keys);
    const list = paths.map((p) => `'${p}'`).join(', ');
    return this.rows(
      `SELECT * EXCLUDE (filename, file_row_number) FROM read_parquet([${list}], filename = true, file_row_number = true)
       ORDER BY filename, file_row_number`,
    );
  }

  async close(): Promise<void> {
    this.instance.closeSync();
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** A gate that releases every waiter once `parties` of them have arrived (deterministic interleaving). */
export function barrier(parties: number): () => Promise<void> {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return () => {
    if (++arrived === parties) open();
    return opened;
  };
}
