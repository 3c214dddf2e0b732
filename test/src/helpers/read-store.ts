/**
 * @module read-store
 * Reads back what the gateway stored, two independent ways: our own row-group reader (one row group at a time
 * through range reads) and DuckDB (the oracle). Works on the local store and on s3rver.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  createLocalObjectStore,
  createResilientObjectStore,
  createS3ObjectStore,
  decodeLogRows,
  LOG_COLUMN_NAMES,
  manifestKey,
  openParquetFile,
  parsePartitionManifest,
  sourceFromStore,
  type ObjectStore,
  type StoredLogRow,
} from '@sluice/storage';
import type { TestS3Server } from './s3-server.js';
import { tempDir } from './spawn-sluice.js';

/** Where a test's gateway stored its data. */
export type StoreLocation =
  { readonly backend: 'local'; readonly root: string } | { readonly backend: 's3'; readonly s3: TestS3Server };

/** A stored row as our reader decodes it. */
export type StoredRowView = StoredLogRow;

/** The object store for a location. */
export function storeFor(location: StoreLocation): ObjectStore {
  if (location.backend === 'local') return createLocalObjectStore({ root: location.root });
  const s3 = location.s3;
  // Through the same bounded, retrying wrapper as the gateway: s3rver answers 500 now and then under load.
  return createResilientObjectStore(
    createS3ObjectStore({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: '',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
    }),
    { requestTimeoutMs: 30_000, maxAttempts: 6, retryBaseMs: 100, retryMaxMs: 1000 },
  );
}

/** Every key in the store (data, audit, anything else). */
export async function listStoreFiles(location: StoreLocation): Promise<string[]> {
  const keys: string[] = [];
  for await (const entry of storeFor(location).list({ prefix: '' })) if (entry.kind === 'object') keys.push(entry.key);
  return keys;
}

/** Every data row, read row group by row group with our reader. */
export async function readStoredRows(location: StoreLocation): Promise<StoredRowView[]> {
  const store = storeFor(location);
  const rows: StoredRowView[] = [];
  for await (const entry of store.list({ prefix: 'data/' })) {
    if (entry.kind !== 'object' || !entry.key.endsWith('.parquet')) continue;
    const file = await openParquetFile(sourceFromStore(store, entry.key, entry.size));
    for (const group of file.rowGroups)
      rows.push(...decodeLogRows(await file.readRowGroup(group.index, LOG_COLUMN_NAMES)));
  }
  return rows;
}

/**
 * The rows a query can see: per hour partition the files its `manifest.json` lists when it has one, else every
 * `*.parquet` (docs/design/storage-format.md). Unlisted files (retired compaction inputs, orphans) are skipped.
 */
export async function readLiveRows(location: StoreLocation): Promise<StoredRowView[]> {
  const store = storeFor(location);
  const partitions = new Map<string, { key: string; size: number }[]>();
  for await (const entry of store.list({ prefix: 'data/' })) {
    if (entry.kind !== 'object') continue;
    const prefix = entry.key.slice(0, entry.key.lastIndexOf('/') + 1);
    const list = partitions.get(prefix) ?? [];
    list.push({ key: entry.key, size: entry.size });
    partitions.set(prefix, list);
  }
  const rows: StoredRowView[] = [];
  for (const [prefix, objects] of partitions) {
    const bytes = objects.some((o) => o.key === manifestKey(prefix)) ? await store.get(manifestKey(prefix)) : null;
    const live = bytes === null ? null : new Set(parsePartitionManifest(bytes).files.map((f) => `${prefix}${f}`));
    for (const o of objects) {
      if (!o.key.endsWith('.parquet') || (live !== null && !live.has(o.key))) continue;
      const file = await openParquetFile(sourceFromStore(store, o.key, o.size));
      for (const group of file.rowGroups)
        rows.push(...decodeLogRows(await file.readRowGroup(group.index, LOG_COLUMN_NAMES)));
    }
  }
  return rows;
}

/** One row as DuckDB reads it. */
export interface DuckRow {
  readonly tenantId: string;
  readonly timeUnixNano: bigint;
  readonly severityNumber: number;
  readonly traceIdHex: string;
  readonly templateId: bigint;
  readonly body: string | null;
}

/** Every data row as DuckDB reads the same files (S3 objects are downloaded byte for byte first). */
export async function duckDbRows(location: StoreLocation): Promise<DuckRow[]> {
  let root: string;
  if (location.backend === 'local') {
    root = location.root;
  } else {
    root = tempDir('duck-s3');
    const store = storeFor(location);
    for await (const entry of store.list({ prefix: 'data/' })) {
      if (entry.kind !== 'object') continue;
      const bytes = await store.get(entry.key);
      if (bytes === null) throw new Error(`listed key vanished: ${entry.key}`);
      const path = join(root, entry.key);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes);
    }
  }
  const instance = await DuckDBInstance.create();
  const conn = await instance.connect();
  try {
    const glob = join(root, 'data', '**', '*.parquet').replaceAll("'", "''");
    const result = await conn.runAndReadAll(
      `SELECT tenant_id, epoch_ns(time_unix_nano)::VARCHAR AS t, severity_number AS sev, lower(hex(trace_id)) AS trace,
              template_id::VARCHAR AS tid, body FROM read_parquet('${glob}')`,
    );
    return result.getRowObjectsJson().map((o) => ({
      tenantId: String(o['tenant_id']),
      timeUnixNano: BigInt(String(o['t'])),
      severityNumber: Number(o['sev']),
      traceIdHex: o['trace'] === null ? '' : String(o['trace']),
      templateId: BigInt(String(o['tid'])),
      body: o['body'] === null ? null : String(o['body']),
    }));
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/**
 * Polls until at least `count` data rows are stored (the sink flushes on its age trigger), then returns them.
 * A read that fails while the sink is still uploading (s3rver serves an object while its PUT is in progress) is
 * retried on the next poll; a store that never reaches `count` rows fails with the last error or count.
 */
export async function waitForStoredRows(
  location: StoreLocation,
  count: number,
  timeoutMs = 60_000,
): Promise<StoredRowView[]> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  let rows: StoredRowView[] = [];
  while (Date.now() < deadline) {
    try {
      rows = await readStoredRows(location);
      if (rows.length >= count) return rows;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(
    `only ${rows.length} of ${count} rows stored after ${timeoutMs} ms${last ? `; last read error: ${String(last)}` : ''}`,
  );
}
