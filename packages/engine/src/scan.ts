/**
 * @module scan
 * Reserved Parquet access: opening a footer and decoding a row group's columns always reserve first. Footers
 * reserve a fixed read allowance before the fetch and are topped up to an estimate of the parsed metadata once its
 * size is known; a row group reserves `estimateDecodedBytes` of the projected columns before `readRowGroup`.
 * Storage errors surface as scrubbed `internal` failures at the top ({@link failureOf}).
 */
import type { ObjectStore, ParquetFileHandle } from '@sluice/storage';
import { openParquetFile, sourceFromStore } from '@sluice/storage';
import type { Columns } from './predicate-eval.js';
import type { MemoryTracker } from './tracker.js';

/** Bytes reserved before a footer fetch (the reader asks for the last 16 KiB first). */
export const FOOTER_FETCH_RESERVE = 64 * 1024;
/** Parsed-metadata retention per footer byte (hyparquet objects; conservative). */
export const FOOTER_RETAIN_FACTOR = 8;

/** An opened file together with what its footer holds on the reservation. */
export interface OpenedFile {
  readonly key: string;
  readonly handle: ParquetFileHandle;
  readonly reserved: number;
}

/** Opens a data or audit file's footer under a reservation. */
export async function openReserved(
  store: ObjectStore,
  key: string,
  size: number,
  tracker: MemoryTracker,
): Promise<OpenedFile> {
  let reserved = tracker.grow(FOOTER_FETCH_RESERVE);
  let handle: ParquetFileHandle;
  try {
    handle = await openParquetFile(sourceFromStore(store, key, size));
    const want = handle.bytesRead * FOOTER_RETAIN_FACTOR;
    if (want > reserved) reserved += tracker.grow(want - reserved);
  } catch (e) {
    tracker.shrink(reserved);
    throw e;
  }
  return { key, handle, reserved };
}

/** Decoded columns of one row group and the bytes reserved for them. */
export interface ReservedColumns {
  readonly cols: Columns;
  readonly reserved: number;
}

/** Reserves then decodes `columns` (only those present in the file; absent optional columns read as NULL). */
export async function readReserved(
  file: ParquetFileHandle,
  index: number,
  columns: Iterable<string>,
  tracker: MemoryTracker,
): Promise<ReservedColumns> {
  const present = new Set(file.columnNames);
  const want = [...new Set(columns)].filter((c) => present.has(c));
  if (want.length === 0) return { cols: {}, reserved: 0 };
  tracker.beforeDecode();
  const reserved = tracker.grow(file.estimateDecodedBytes(index, want)); // reserve before decode
  try {
    const cols = await file.readRowGroup(index, want);
    return { cols, reserved };
  } catch (e) {
    tracker.shrink(reserved);
    throw e;
  }
}
