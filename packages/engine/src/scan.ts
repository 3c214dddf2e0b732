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
import type { ByteRangeSource, FooterCache, ObjectStore, ParquetFileHandle } from '@sluice/storage';
import { LOG_COLUMNS, StorageCorruptError, ensureZstd, openParquetFile } from '@sluice/storage';
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
function classified(e: unknown, key: string): unknown {
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
    try {
      // Cached only after the checks below passed, so the file is known to be one of ours.
      return {
        key,
        handle: await openParquetFile(fileSource(store, key, size, signal), { metadata: cached }),
        reserved,
      };
    } catch (e) {
      tracker.shrink(reserved);
      throw classified(e, key);
    }
  }
  let reserved = tracker.grow(FOOTER_FETCH_RESERVE);
  let handle: ParquetFileHandle;
  try {
    try {
      handle = await openParquetFile(fileSource(store, key, size, signal));
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
  return { key, handle, reserved };
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
): Promise<ReservedColumns> {
  const { handle } = file;
  const present = new Set(handle.columnNames);
  const want = [...new Set(columns)].filter((c) => present.has(c));
  if (want.length === 0) return { cols: {}, reserved: 0 };
  tracker.beforeDecode();
  const reserved = tracker.grow(handle.estimateDecodedBytes(index, want)); // reserve before decode
  try {
    const cols = await handle.readRowGroup(index, want);
    return { cols, reserved };
  } catch (e) {
    tracker.shrink(reserved);
    throw classified(e, file.key);
  }
}
