/**
 * @module scan
 * Reserved Parquet access: opening a footer and decoding a row group's columns always reserve first. Footers
 * reserve a fixed read allowance before the fetch and are topped up to an estimate of the parsed metadata once its
 * size is known; a row group reserves `estimateDecodedBytes` of the projected columns before `readRowGroup`.
 *
 * What fails is told apart here, where it is still known: a store call's own failure (unavailable storage, an
 * abort, a missing object, an I/O error) propagates as it was thrown, while whatever the decoder throws over bytes
 * the store did deliver, a range outside the file, or a file without the columns every Sluice file has, is a
 * {@link StorageCorruptError} `parquet_unreadable` naming the file. A store failure is never evidence that the
 * file is damaged.
 */
import type {
  ByteRangeSource,
  ColumnValues,
  CountingSource,
  FooterCache,
  ObjectStore,
  ParquetFileHandle,
} from '@sluice/storage';
import { LOG_COLUMNS, StorageCorruptError, countingSource, ensureZstd, openParquetFile } from '@sluice/storage';
import type { ColumnMetaData, SchemaElement } from 'hyparquet';
import { SearchOnlyStrings } from './decode/search-only.js';
import {
  chunkKind,
  chunkRange,
  decodeChunk,
  plainOnlyChunk,
  UnsupportedChunk,
  type ChunkLayout,
  type RowRange,
} from './decode/page-decoder.js';
import { RowSlice, type ColumnData } from './decode/string-vector.js';
import { QueryAbort } from './failures.js';
import type { Columns } from './predicate-eval.js';
import type { MemoryTracker } from './tracker.js';

/** Bytes reserved before a footer fetch (the reader asks for the last 16 KiB first). */
export const FOOTER_FETCH_RESERVE = 64 * 1024;
/** Parsed-metadata retention per footer byte (hyparquet objects; conservative). */
export const FOOTER_RETAIN_FACTOR = 8;
/** Columns every data file has had since schema version 1; a file without them is not one of ours. */
export const DATA_FILE_COLUMNS: readonly string[] = [LOG_COLUMNS.tenantId, LOG_COLUMNS.timeUnixNano];
/** Columns every template audit file has. */
export const AUDIT_FILE_COLUMNS: readonly string[] = ['tenant_id', 'timestamp', 'event_type', 'template_id'];
/** The smallest Parquet file: `PAR1`, a 4-byte footer length and `PAR1`, with an empty footer. */
const MIN_PARQUET_BYTES = 12;

/** An opened file together with what its footer holds on the reservation. */
export interface OpenedFile {
  readonly key: string;
  readonly handle: ParquetFileHandle;
  readonly reserved: number;
  /** The file's byte source; `source.bytesRead` counts every byte fetched, by hyparquet or the columnar decoder. */
  readonly source: CountingSource;
}

/** Wraps a store call's failure so the decoder's own errors can be told from it. */
class StoreCallFailure extends Error {
  override readonly name = 'StoreCallFailure';
  constructor(readonly original: unknown) {
    super('object store call failed');
  }
}

/** Range reads of `key`, cancelled by `signal`, with store failures marked. */
function fileSource(store: ObjectStore, key: string, size: number, signal: AbortSignal | undefined): ByteRangeSource {
  const opts = signal !== undefined ? { signal } : undefined;
  return {
    byteLength: size,
    async read(start, endExclusive) {
      // The decoder asks for ranges the footer describes: one outside the file means the footer is damaged.
      if (!(Number.isSafeInteger(start) && Number.isSafeInteger(endExclusive)) || start < 0 || endExclusive > size)
        throw new RangeError(`range [${start}, ${endExclusive}) outside a file of ${size} bytes`);
      if (endExclusive <= start) return new Uint8Array(0);
      try {
        return await store.getRange(key, start, endExclusive, opts);
      } catch (e) {
        throw new StoreCallFailure(e);
      }
    },
  };
}

/** What a failed open or decode of `key` means: the store's own error, our own abort, or a damaged file. */
export function classified(e: unknown, key: string): unknown {
  if (e instanceof StoreCallFailure) return e.original;
  if (e instanceof QueryAbort) return e;
  return new StorageCorruptError(key, 'parquet_unreadable', { cause: e });
}

/** The bytes a parsed footer of `metadataLength` footer bytes is taken to retain (query and footer cache alike). */
export function footerRetainedBytes(metadataLength: number): number {
  return (metadataLength + 8) * FOOTER_RETAIN_FACTOR;
}

/**
 * Opens a data or audit file's footer under a reservation. A file without every column of `required` is not one
 * of ours (`parquet_unreadable`). With `footers`, a cached footer opens the file without a storage read (the query
 * still reserves the footer's bytes for as long as it holds it), and a footer read here is offered to the cache.
 * @throws {@link StorageCorruptError} `parquet_unreadable`; a store call's failure as thrown; {@link QueryAbort}
 */
export async function openReserved(
  store: ObjectStore,
  key: string,
  size: number,
  tracker: MemoryTracker,
  required: readonly string[],
  signal?: AbortSignal,
  footers?: FooterCache,
): Promise<OpenedFile> {
  if (size < MIN_PARQUET_BYTES) throw new StorageCorruptError(key, 'parquet_unreadable');
  await ensureZstd(); // outside the classified region: a decoder that fails to load is no fault of the file
  const cached = footers?.lookup(key, size);
  if (cached !== undefined) {
    const reserved = tracker.grow(footerRetainedBytes(cached.metadata_length));
    const source = countingSource(fileSource(store, key, size, signal));
    try {
      // Cached only after the checks below passed, so the file is known to be one of ours.
      return { key, handle: await openParquetFile(source, { metadata: cached }), reserved, source };
    } catch (e) {
      tracker.shrink(reserved);
      throw classified(e, key);
    }
  }
  let reserved = tracker.grow(FOOTER_FETCH_RESERVE);
  let handle: ParquetFileHandle;
  const source = countingSource(fileSource(store, key, size, signal));
  try {
    try {
      handle = await openParquetFile(source);
    } catch (e) {
      throw classified(e, key);
    }
    if (!required.every((c) => handle.columnNames.includes(c)) || !rowCountsAgree(handle))
      throw new StorageCorruptError(key, 'parquet_unreadable');
    const want = handle.bytesRead * FOOTER_RETAIN_FACTOR;
    if (want > reserved) reserved += tracker.grow(want - reserved);
  } catch (e) {
    tracker.shrink(reserved);
    throw e;
  }
  footers?.offer(key, size, handle.metadata, footerRetainedBytes(handle.metadata.metadata_length));
  return { key, handle, reserved, source };
}

/** The footer's row counts are whole numbers that add up: anything else is a damaged footer. */
function rowCountsAgree(handle: ParquetFileHandle): boolean {
  let total = 0;
  for (const g of handle.rowGroups) {
    if (!Number.isSafeInteger(g.numRows) || g.numRows < 0) return false;
    total += g.numRows;
  }
  return total === handle.numRows;
}

/** Decoded columns of one row group and the bytes reserved for them. */
export interface ReservedColumns {
  readonly cols: Columns;
  readonly reserved: number;
}

/** {@link ReservedColumns} as hyparquet decodes them: array-likes only. */
export interface ReservedArrays {
  readonly cols: Readonly<Record<string, ColumnValues>>;
  readonly reserved: number;
}

/**
 * Reserves then decodes `columns` (only those present in the file; absent optional columns read as NULL).
 * @throws {@link StorageCorruptError} `parquet_unreadable` for the file; a store call's failure as thrown;
 *   {@link QueryAbort}
 */
export async function readReserved(
  file: OpenedFile,
  index: number,
  columns: Iterable<string>,
  tracker: MemoryTracker,
): Promise<ReservedArrays> {
  const present = new Set(file.handle.columnNames);
  const want = [...new Set(columns)].filter((c) => present.has(c));
  if (want.length === 0) return { cols: {}, reserved: 0 };
  return readHyparquet(file, index, want, tracker);
}

/**
 * {@link readReserved} through the chosen decoder: with `columnar`, the columns Sluice's page decoder handles come
 * back as typed arrays and string vectors, the rest through hyparquet. With `rows`, `layout` says whether the
 * columns are laid out for the whole group (`group`, the default: what predicates and aggregation index) or for the
 * range only (`slice`: {@link RowSlice}s, for row-by-row readers).
 * @throws as {@link readReserved}
 */
export async function readReservedWith(
  file: OpenedFile,
  index: number,
  columns: Iterable<string>,
  tracker: MemoryTracker,
  decoder: ColumnDecoderChoice,
  rows?: RowRange,
  layout: ChunkLayout = 'group',
  searchOnly?: ReadonlySet<string>,
): Promise<ReservedColumns> {
  const present = new Set(file.handle.columnNames);
  let want = [...new Set(columns)].filter((c) => present.has(c));
  if (want.length === 0) return { cols: {}, reserved: 0 };
  // The reference path stays what it was: whole row groups through hyparquet.
  if (decoder === 'hyparquet') return readHyparquet(file, index, want, tracker);
  const fast = await readColumnar(file, index, want, tracker, rows, layout, searchOnly);
  want = want.filter((c) => !(c in fast.cols));
  if (want.length === 0) return fast;
  try {
    const rest =
      layout === 'slice' && rows !== undefined
        ? await readHyparquetSlice(file, index, want, tracker, rows)
        : await readHyparquet(file, index, want, tracker, rows);
    return { cols: { ...fast.cols, ...rest.cols }, reserved: fast.reserved + rest.reserved };
  } catch (e) {
    tracker.shrink(fast.reserved);
    throw e;
  }
}

/** Which decoder reads a row group's columns: Sluice's columnar page decoder (hyparquet for what it does not read), or hyparquet alone. */
export type ColumnDecoderChoice = 'columnar' | 'hyparquet';

async function readHyparquet(
  file: OpenedFile,
  index: number,
  want: string[],
  tracker: MemoryTracker,
  rows?: RowRange,
): Promise<ReservedArrays> {
  const { handle } = file;
  tracker.beforeDecode();
  const reserved = tracker.grow(handle.estimateDecodedBytes(index, want)); // reserve before decode
  try {
    if (rows === undefined) return { cols: await handle.readRowGroup(index, want), reserved };
    // A slice comes back indexed from its first row: lay it at its rows so every column shares the group's
    // row numbers (the full-group estimate stays reserved; it bounds the slice too).
    const slice = await handle.readRowGroup(index, want, rows);
    const numRows = handle.rowGroups[index]?.numRows ?? 0;
    const cols: Record<string, ColumnValues> = {};
    for (const [name, values] of Object.entries(slice)) {
      const full = new Array<unknown>(numRows);
      for (let k = 0; k < values.length; k++) full[rows.start + k] = values[k];
      cols[name] = full;
    }
    return { cols, reserved };
  } catch (e) {
    tracker.shrink(reserved);
    throw classified(e, file.key);
  }
}

/** Rows `rows` of `want` through hyparquet in the slice layout: each column a {@link RowSlice} of the values read. */
async function readHyparquetSlice(
  file: OpenedFile,
  index: number,
  want: string[],
  tracker: MemoryTracker,
  rows: RowRange,
): Promise<ReservedColumns> {
  const { handle } = file;
  tracker.beforeDecode();
  const reserved = tracker.grow(handle.estimateDecodedBytes(index, want)); // reserve before decode; bounds the slice
  try {
    const slice = await handle.readRowGroup(index, want, rows);
    const numRows = handle.rowGroups[index]?.numRows ?? 0;
    const cols: Record<string, ColumnData> = {};
    for (const [name, values] of Object.entries(slice)) cols[name] = new RowSlice(values, rows.start, numRows);
    return { cols, reserved };
  } catch (e) {
    tracker.shrink(reserved);
    throw classified(e, file.key);
  }
}

/**
 * Reads the columns of `want` that the columnar page decoder handles (docs/design/query-engine.md, "Columnar
 * decode"): each chunk's stored bytes are reserved before its fetch starts and until it is decoded, and the
 * decoded buffers stay reserved at their exact size. The fetches of all chunks run together — one wait for
 * storage instead of one per column — and are decoded in order as they arrive. Columns it does not handle are
 * left out of the result for hyparquet.
 */
async function readColumnar(
  file: OpenedFile,
  index: number,
  want: readonly string[],
  tracker: MemoryTracker,
  rows?: RowRange,
  layout: ChunkLayout = 'group',
  searchOnly?: ReadonlySet<string>,
): Promise<ReservedColumns> {
  const { handle } = file;
  const rg = handle.metadata.row_groups[index];
  const info = handle.rowGroups[index];
  if (rg === undefined || info === undefined) throw new RangeError(`no row group ${index}`);
  const elements = new Map(handle.metadata.schema.slice(1).map((e) => [e.name, e]));
  const plan: {
    name: string;
    meta: ColumnMetaData;
    element: SchemaElement;
    kind: NonNullable<ReturnType<typeof chunkKind>>;
    start: number;
    length: number;
  }[] = [];
  for (const name of want) {
    const chunks = rg.columns.filter((c) => c.meta_data?.path_in_schema[0] === name);
    const meta = chunks.length === 1 ? chunks[0]?.meta_data : undefined;
    const element = elements.get(name);
    if (meta === undefined || element === undefined || (element.num_children ?? 0) > 0) continue;
    const kind = chunkKind(meta, element);
    if (kind === undefined) continue;
    const { start, length } = chunkRange(meta);
    if (!(Number.isSafeInteger(start) && start >= 0 && Number.isSafeInteger(length) && length >= 0))
      throw classified(new RangeError('chunk range'), file.key);
    plan.push({ name, meta, element, kind, start, length });
  }
  const cols: Record<string, ColumnData> = {};
  if (plan.length === 0) return { cols, reserved: 0 };
  tracker.beforeDecode();
  /** Per chunk, its stored bytes still reserved (0 once given back). */
  const stored: number[] = [];
  const fetches: Promise<Uint8Array>[] = [];
  let reserved = 0;
  try {
    for (const c of plan) stored.push(tracker.grow(c.length)); // reserve before the bytes arrive
    for (const c of plan) {
      const fetch = file.source.read(c.start, c.start + c.length);
      fetch.catch(() => undefined); // awaited below; a failure before its turn is not unhandled
      fetches.push(fetch);
    }
    for (let k = 0; k < plan.length; k++) {
      const c = plan[k] as (typeof plan)[number];
      let bytes: Uint8Array;
      try {
        bytes = await (fetches[k] as Promise<Uint8Array>);
      } catch (e) {
        throw classified(e, file.key);
      }
      if (
        searchOnly?.has(c.name) === true &&
        c.kind === 'utf8' &&
        layout === 'group' &&
        Number(c.meta.num_values) === info.numRows && // otherwise the ordinary decode hands it to hyparquet
        plainOnlyChunk(bytes, c.meta)
      ) {
        // Kept as stored and searched page by page; its stored bytes stay reserved with the column.
        const classify = (e: unknown): unknown => classified(e, file.key);
        cols[c.name] = new SearchOnlyStrings(info.numRows, bytes, c.meta, c.element, tracker, rows, classify);
        reserved += stored[k] as number;
        stored[k] = 0;
        continue;
      }
      try {
        const d = decodeChunk(bytes, c.meta, c.element, c.kind, info.numRows, tracker, rows, layout);
        cols[c.name] = d.data;
        reserved += d.reserved;
      } catch (e) {
        if (e instanceof UnsupportedChunk) continue; // hyparquet reads it
        throw classified(e, file.key);
      } finally {
        tracker.shrink(stored[k] as number);
        stored[k] = 0;
      }
    }
  } catch (e) {
    tracker.shrink(reserved);
    throw e;
  } finally {
    // A fetch still in flight keeps its reservation until its bytes have arrived (or it failed).
    if (stored.some((b) => b > 0)) await Promise.allSettled(fetches);
    for (const b of stored) tracker.shrink(b);
  }
  return { cols, reserved };
}
