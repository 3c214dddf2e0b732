/**
 * @module corrupt-input
 * Telling a corrupt input file from a storage fault. A data file is judged corrupt only when its bytes arrived
 * whole and still do not decode as one of our data files (footer, schema, pages, rows) or carry another tenant's
 * rows: trying again gives the same answer. Anything the store itself threw (an outage, a timeout, a vanished
 * object, a short read) is a storage fault: the partition fails this sweep and is retried at the next one, and
 * nothing is quarantined. Every read of an input goes through {@link faultTaggingSource}, so a fault raised deep in
 * the Parquet decoder is still recognised as the store's by {@link isStorageFault}.
 */
import {
  LOG_COLUMN_NAMES,
  SCHEMA_VERSION,
  SCHEMA_VERSION_KEY,
  StorageUnavailableError,
  decodeLogRows,
  ensureZstd,
  logSchema,
  openParquetFile,
  sourceFromBytes,
} from '@sluice/storage';
import type { ByteRangeSource, CorruptReason, ObjectStore, ParquetFileHandle, StoredLogRow } from '@sluice/storage';
import { CompactionError } from './compaction-error.js';

/** Errors thrown by the store (or made for it here), wherever the decoder rethrows them from. */
const storeFaults = new WeakSet<object>();

/**
 * A range source over `key` that marks everything the store throws as a storage fault and turns a short answer
 * into a {@link StorageUnavailableError} (`truncated`): a body cut short in transit must never read as a
 * truncated file.
 */
export function faultTaggingSource(store: ObjectStore, key: string, size: number): ByteRangeSource {
  return {
    byteLength: size,
    async read(start, endExclusive) {
      let bytes: Uint8Array;
      try {
        bytes = await store.getRange(key, start, endExclusive);
      } catch (e) {
        const err = typeof e === 'object' && e !== null ? e : new Error(String(e));
        storeFaults.add(err);
        throw err;
      }
      if (bytes.byteLength !== endExclusive - start) {
        const err = new StorageUnavailableError('get_range', key, 1, 'truncated');
        storeFaults.add(err);
        throw err;
      }
      return bytes;
    },
  };
}

/**
 * True when `e` (or an error in its `cause` chain) came from the store, is a {@link StorageUnavailableError}, or is
 * an abort: conditions that say nothing about the object's bytes.
 */
export function isStorageFault(e: unknown): boolean {
  let cur: unknown = e;
  for (let depth = 0; depth < 8 && typeof cur === 'object' && cur !== null; depth++) {
    if (storeFaults.has(cur) || cur instanceof StorageUnavailableError) return true;
    if (cur instanceof Error && cur.name === 'AbortError') return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}

/** Where in a file a problem showed: the footer (opening, schema, statistics) or one slice of one row group. */
export type FaultSite =
  | { readonly kind: 'footer' }
  | { readonly kind: 'rows'; readonly group: number; readonly rows?: { readonly start: number; readonly end: number } };

/** A data file found corrupt (not yet confirmed on its whole bytes, not yet quarantined). */
export interface CorruptFinding {
  /** File name within the partition. */
  readonly name: string;
  readonly reason: Extract<CorruptReason, 'parquet_unreadable' | 'tenant_mismatch'>;
  /** One line for operators (log, audit): what failed. */
  readonly detail: string;
  readonly site: FaultSite;
}

/** First line of an error's message, at most 200 characters (operator detail, not a stack). */
export function detailOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** The fields of a Parquet schema element that say what a column is. */
interface ElementShape {
  readonly name: string;
  readonly type?: string | undefined;
  readonly type_length?: number | undefined;
  readonly num_children?: number | undefined;
}

/** The top-level columns of a flattened schema (root first), by name: physical type and fixed length. */
function topLevelColumns(schema: readonly ElementShape[]): Map<string, { type?: string; length?: number }> {
  const out = new Map<string, { type?: string; length?: number }>();
  let skip = 0;
  for (const el of schema.slice(1)) {
    if (skip > 0) {
      skip += (el.num_children ?? 0) - 1;
      continue;
    }
    out.set(el.name, {
      ...(el.type !== undefined ? { type: el.type } : {}),
      ...(el.type_length !== undefined ? { length: el.type_length } : {}),
    });
    skip = el.num_children ?? 0;
  }
  return out;
}

/** Our data-file columns with their physical types: the contract other readers query by name. */
const EXPECTED_COLUMNS = topLevelColumns(logSchema() as readonly ElementShape[]);

/** A statistics bound as UTF-8 bytes (hyparquet gives UTF-8 statistics as strings, sometimes as bytes). */
function statBytes(v: unknown): Uint8Array | null {
  if (typeof v === 'string') return new TextEncoder().encode(v);
  if (v instanceof Uint8Array) return v;
  return null;
}

/**
 * Checks what the footer of an opened file promises: every data-file column with its physical type, row groups
 * adding up to the file's row count, and (where statistics exist) `tenant` within each row group's `tenant_id`
 * bounds. Bounds, not values: the writer truncates string statistics to 16 bytes (min a prefix, max rounded up),
 * so a longer tenant never equals them; a file of another tenant still falls outside. Rows are checked one by one
 * when the merge decodes them ({@link tenantProblem}). Returns the problem, or `null` when the footer is one of ours.
 */
export function inspectFooter(
  file: ParquetFileHandle,
  tenant: string,
): { readonly reason: CorruptFinding['reason']; readonly detail: string } | null {
  const have = topLevelColumns(file.metadata.schema);
  for (const [name, want] of EXPECTED_COLUMNS) {
    const got = have.get(name);
    if (got === undefined) return { reason: 'parquet_unreadable', detail: `not a data file: no column ${name}` };
    if (got.type !== want.type || got.length !== want.length)
      return {
        reason: 'parquet_unreadable',
        detail: `not a data file: column ${name} is ${got.type ?? 'a group'}, expected ${want.type ?? 'a group'}`,
      };
  }
  const sum = file.rowGroups.reduce((n, g) => n + g.numRows, 0);
  if (!Number.isSafeInteger(file.numRows) || sum !== file.numRows)
    return { reason: 'parquet_unreadable', detail: `row groups hold ${sum} rows, the footer says ${file.numRows}` };
  const want = new TextEncoder().encode(tenant);
  for (const g of file.rowGroups) {
    const c = g.columns.find((x) => x.name === 'tenant_id');
    const min = statBytes(c?.min);
    const max = statBytes(c?.max);
    // Byte order is the order Parquet compares UTF-8 statistics in.
    if ((min !== null && Buffer.compare(want, min) < 0) || (max !== null && Buffer.compare(want, max) > 0)) {
      const shown = new TextDecoder().decode(min ?? max ?? new Uint8Array());
      return { reason: 'tenant_mismatch', detail: `row group ${g.index} holds tenant ${JSON.stringify(shown)}` };
    }
  }
  return null;
}

/** The first row whose tenant is not `tenant`, as a problem, or `null`. */
export function tenantProblem(
  rows: readonly StoredLogRow[],
  tenant: string,
): { readonly reason: 'tenant_mismatch'; readonly detail: string } | null {
  const bad = rows.find((r) => r.tenantId !== tenant);
  return bad === undefined
    ? null
    : { reason: 'tenant_mismatch', detail: `a row holds tenant ${JSON.stringify(bad.tenantId)}` };
}

/**
 * The `sluice.schema_version` a file declares, when it is newer than this build writes: such a file may be
 * perfectly sound yet not decode here, so a failure on it is never taken for corruption.
 */
export function newerSchemaVersion(file: ParquetFileHandle | null): string | null {
  const v = file?.metadata.key_value_metadata?.find((kv) => kv.key === SCHEMA_VERSION_KEY)?.value;
  return v !== undefined && /^\d+$/.test(v) && Number(v) > Number(SCHEMA_VERSION) ? v : null;
}

/** Result of {@link openInput}. */
export type OpenedInput =
  | { readonly status: 'ok'; readonly file: ParquetFileHandle }
  | { readonly status: 'corrupt'; readonly finding: CorruptFinding };

/**
 * Opens an input's footer through {@link faultTaggingSource} and checks it ({@link inspectFooter}). Storage faults
 * propagate; a footer that does not decode or is not one of ours is a `corrupt` result.
 * @throws {@link CompactionError} for a file that declares a newer schema version and does not look like ours:
 *   this build cannot judge it, so it is neither compacted nor quarantined.
 */
export async function openInput(
  store: ObjectStore,
  prefix: string,
  name: string,
  size: number,
  tenant: string,
): Promise<OpenedInput> {
  // Outside the judged region: a wasm start-up failure says nothing about any file.
  await ensureZstd();
  let file: ParquetFileHandle;
  try {
    file = await openParquetFile(faultTaggingSource(store, `${prefix}${name}`, size));
  } catch (e) {
    if (isStorageFault(e)) throw e;
    return {
      status: 'corrupt',
      finding: { name, reason: 'parquet_unreadable', detail: detailOf(e), site: { kind: 'footer' } },
    };
  }
  const problem = inspectFooter(file, tenant);
  if (problem === null) return { status: 'ok', file };
  const newer = newerSchemaVersion(file);
  // Another tenant's rows are wrong in any version; an unfamiliar schema may just be a newer one.
  if (newer !== null && problem.reason !== 'tenant_mismatch')
    throw new CompactionError(`${prefix}${name} has schema version ${newer}, newer than this build reads; left as is`);
  return { status: 'corrupt', finding: { name, ...problem, site: { kind: 'footer' } } };
}

/**
 * Re-checks a finding on the object's whole bytes (the very bytes about to be quarantined): opens them from
 * memory, inspects the footer and, for a row-level finding, decodes that slice again. Returns the problem if it
 * recurs, `null` if the bytes now read cleanly (then the first failure was not the object's, and it stays).
 */
export async function confirmCorrupt(
  bytes: Uint8Array,
  tenant: string,
  site: FaultSite,
): Promise<{ readonly reason: CorruptFinding['reason']; readonly detail: string } | null> {
  await ensureZstd();
  try {
    const file = await openParquetFile(sourceFromBytes(bytes));
    const footer = inspectFooter(file, tenant);
    if (footer !== null) return footer;
    if (site.kind === 'footer') return null;
    const rows = decodeLogRows(await file.readRowGroup(site.group, LOG_COLUMN_NAMES, site.rows));
    return tenantProblem(rows, tenant);
  } catch (e) {
    return { reason: 'parquet_unreadable', detail: detailOf(e) };
  }
}
