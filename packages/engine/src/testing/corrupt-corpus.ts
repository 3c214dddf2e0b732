/**
 * @module testing/corrupt-corpus
 * A tenant's data with every kind of corrupt or foreign object the query side must contain, one damaged hour
 * partition per case, between healthy partitions (issue 18): manifests that do not parse, are empty, name a
 * missing file, a path or another extension, or carry a generation above 2^53 − 1; Parquet files that are
 * truncated, have a bit-flipped footer (its length, its Thrift body) or bit-flipped pages in their second row
 * group, hold another tenant's rows, are not Sluice data files, or are empty. Every damage is deterministic, so the
 * same corpus written to any store gives the same answers (the local and S3 backends are checked with it).
 */
import type { LogRecord, TemplateAuditEvent } from '@sluice/core';
import type { CorruptReason, ObjectStore, StoredLogRow } from '@sluice/storage';
import {
  auditFileKey,
  dataFileKey,
  dataPartitionPrefix,
  encodeAuditParquet,
  encodeLogsParquet,
  manifestKey,
  openParquetFile,
  sourceFromBytes,
  uuidv7,
} from '@sluice/storage';
import { H, T0 } from './corpus.js';

/** One damaged object, alone in its hour partition's damage. */
export interface CorruptCase {
  /** What is wrong, in words (test names). */
  readonly name: string;
  /** Its hour partition: `T0 + hour × H`. */
  readonly hour: number;
  /** The corrupt object's key (for a manifest's problem, the manifest). */
  readonly key: string;
  readonly reason: CorruptReason;
}

/** The corpus as written. */
export interface CorruptCorpus {
  readonly tenant: string;
  readonly cases: readonly CorruptCase[];
  /** Hours `[0, hours)` hold data. */
  readonly hours: number;
  /** Healthy hours and the rows each holds (every row's body contains `line`). */
  readonly healthy: ReadonlyMap<number, number>;
  /**
   * Rows a `contains(body, "line")` count over every hour finds when corrupt objects are skipped: the healthy hours,
   * the healthy file beside a truncated one, and the first row group of the file damaged in its second.
   */
  readonly rowsWhenSkipping: number;
  /** A day partition of audit files: one healthy, one truncated (`key`). */
  readonly audit: { readonly day: bigint; readonly damagedKey: string; readonly templates: number };
}

/** Rows of `tenant` with string bodies `line <i>` spread over one hour from `startNs`. */
export function lineRows(tenant: string, count: number, startNs: bigint): StoredLogRow[] {
  return Array.from({ length: count }, (_, i) => {
    const t = startNs + (H * BigInt(i)) / BigInt(count);
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
      scope: { name: 'corpus', version: '1', attributes: [], droppedAttributesCount: 0, schemaUrl: '' },
    };
    return {
      tenantId: tenant,
      record,
      mined: { templateId: 1n, templateVersion: 1, params: [], confidence: 1, lossy: false },
    };
  });
}

/** A template audit event (for the audit partition and the foreign data file). */
function auditEvent(tenant: string, ts: bigint, id: bigint): TemplateAuditEvent {
  return {
    eventType: 'template_created',
    tenantId: tenant,
    templateId: id,
    oldVersion: 0,
    newVersion: 1,
    oldTemplate: '',
    newTemplate: `template ${id}`,
    positionsWidened: [],
    triggeringLineSample: 'x',
    timestampUnixNano: ts,
  };
}

/** XORs every byte of row group `index`'s column chunks: its pages no longer decode. */
async function flipRowGroupPages(bytes: Uint8Array, index: number): Promise<Uint8Array> {
  const file = await openParquetFile(sourceFromBytes(bytes));
  const group = file.metadata.row_groups[index];
  if (group === undefined) throw new Error(`no row group ${index}`);
  let lo = Infinity;
  let hi = 0;
  for (const chunk of group.columns) {
    const m = chunk.meta_data;
    if (m === undefined) continue;
    const start = Number(m.dictionary_page_offset ?? m.data_page_offset);
    lo = Math.min(lo, start, Number(m.data_page_offset));
    hi = Math.max(hi, start + Number(m.total_compressed_size));
  }
  const out = bytes.slice();
  for (let i = lo; i < hi; i++) out[i] = (out[i] as number) ^ 0xff;
  return out;
}

/** Flips the top bit of the footer length: the footer claims more bytes than the file has. */
function flipFooterLength(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  out[out.length - 5] = (out[out.length - 5] as number) ^ 0x80;
  return out;
}

/** XORs 30 bytes near the start of the Thrift footer. */
function flipFooterBody(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const length = new DataView(out.buffer, out.byteOffset, out.byteLength).getUint32(out.length - 8, true);
  const start = out.length - 8 - length + 10;
  for (let i = start; i < start + 30; i++) out[i] = (out[i] as number) ^ 0xff;
  return out;
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Writes the corpus for `tenant` into `store`. */
export async function writeCorruptCorpus(store: ObjectStore, tenant = 'acme'): Promise<CorruptCorpus> {
  const at = (hour: number): bigint => T0 + BigInt(hour) * H;
  const prefix = (hour: number): string => dataPartitionPrefix(tenant, Number(at(hour) / 1_000_000n));
  const cases: CorruptCase[] = [];
  const healthy = new Map<number, number>();
  const file = async (hour: number, rows = 100, groupRows = 50): Promise<{ key: string; bytes: Uint8Array }> => {
    const bytes = await encodeLogsParquet(lineRows(tenant, rows, at(hour)), { rowGroupRows: groupRows });
    return { key: dataFileKey(tenant, at(hour), uuidv7()), bytes };
  };
  const put = async (f: { key: string; bytes: Uint8Array }): Promise<string> => {
    await store.put(f.key, f.bytes);
    return f.key;
  };
  const name = (key: string): string => key.slice(key.lastIndexOf('/') + 1);
  const manifest = async (hour: number, body: Uint8Array, reason: CorruptReason, what: string): Promise<void> => {
    await put(await file(hour)); // a healthy file the damaged manifest makes untrustworthy
    const key = manifestKey(prefix(hour));
    await store.put(key, body);
    cases.push({ name: what, hour, key, reason });
  };

  // Hour 0: healthy, no manifest. Hour 1: healthy under a manifest, beside a file the manifest does not list.
  await put(await file(0));
  await put(await file(0));
  healthy.set(0, 200);
  const listed = [name(await put(await file(1))), name(await put(await file(1)))];
  await put(await file(1));
  await store.put(manifestKey(prefix(1)), text(JSON.stringify({ generation: 1, files: listed })));
  healthy.set(1, 200);

  await manifest(2, text('{"generation": 3, "files": ['), 'manifest_invalid', 'a manifest that is not JSON');
  await manifest(3, new Uint8Array(0), 'manifest_invalid', 'an empty manifest');
  {
    const present = name(await put(await file(4)));
    const key = manifestKey(prefix(4));
    await store.put(key, text(JSON.stringify({ generation: 2, files: [present, `${uuidv7()}.parquet`] })));
    cases.push({ name: 'a manifest naming a file that does not exist', hour: 4, key, reason: 'manifest_missing_file' });
  }
  await manifest(
    5,
    text(JSON.stringify({ generation: 1, files: ['../../../tenant_id=other/year=2026/x.parquet'] })),
    'manifest_foreign_name',
    'a manifest naming a path outside its partition',
  );
  await manifest(
    6,
    text(JSON.stringify({ generation: 1, files: ['notes.txt'] })),
    'manifest_foreign_name',
    'a manifest naming a file that is not .parquet',
  );
  await manifest(
    7,
    text('{"generation": 1152921504606846976, "files": []}'),
    'manifest_invalid',
    'a manifest whose generation is above 2^53 - 1',
  );
  {
    await put(await file(8)); // the healthy file beside it is still served
    const f = await file(8);
    const key = await put({ key: f.key, bytes: f.bytes.slice(0, Math.floor(f.bytes.length * 0.6)) });
    cases.push({ name: 'a truncated Parquet file', hour: 8, key, reason: 'parquet_unreadable' });
  }
  {
    const f = await file(9);
    const key = await put({ key: f.key, bytes: flipFooterLength(f.bytes) });
    cases.push({ name: 'a Parquet file with a bit-flipped footer length', hour: 9, key, reason: 'parquet_unreadable' });
  }
  {
    const f = await file(10);
    const key = await put({ key: f.key, bytes: flipFooterBody(f.bytes) });
    cases.push({ name: 'a Parquet file with a bit-flipped footer', hour: 10, key, reason: 'parquet_unreadable' });
  }
  {
    const f = await file(11, 150, 50);
    const key = await put({ key: f.key, bytes: await flipRowGroupPages(f.bytes, 1) });
    cases.push({
      name: 'a Parquet file with bit-flipped pages in its second row group',
      hour: 11,
      key,
      reason: 'parquet_unreadable',
    });
  }
  {
    const key = dataFileKey(tenant, at(12), uuidv7());
    await store.put(key, await encodeLogsParquet(lineRows('evil', 100, at(12)), { rowGroupRows: 50 }));
    cases.push({ name: "a data file holding another tenant's rows", hour: 12, key, reason: 'tenant_mismatch' });
  }
  {
    const key = dataFileKey(tenant, at(13), uuidv7());
    await store.put(key, await encodeAuditParquet([auditEvent(tenant, at(13), 1n)]));
    cases.push({ name: 'a Parquet file that is not a Sluice data file', hour: 13, key, reason: 'parquet_unreadable' });
  }
  {
    const key = dataFileKey(tenant, at(14), uuidv7());
    await store.put(key, new Uint8Array(0));
    cases.push({ name: 'an empty .parquet file', hour: 14, key, reason: 'parquet_unreadable' });
  }
  // Hour 15: healthy again, after every kind of damage.
  await put(await file(15));
  healthy.set(15, 100);

  // Audit: one healthy file and one truncated one, on the day before T0.
  const day = T0 - 24n * H;
  await store.put(
    auditFileKey(tenant, day, uuidv7()),
    await encodeAuditParquet([auditEvent(tenant, day, 1n), auditEvent(tenant, day + 1n, 2n)]),
  );
  const damagedAudit = await encodeAuditParquet([auditEvent(tenant, day + 2n, 3n)]);
  const damagedKey = auditFileKey(tenant, day, uuidv7());
  await store.put(damagedKey, damagedAudit.slice(0, Math.floor(damagedAudit.length / 2)));

  return {
    tenant,
    cases,
    hours: 16,
    healthy,
    rowsWhenSkipping: 200 + 200 + 100 + 50 + 100,
    audit: { day, damagedKey, templates: 2 },
  };
}
