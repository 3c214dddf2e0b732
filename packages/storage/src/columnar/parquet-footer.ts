/**
 * @module columnar/parquet-footer
 * Page headers and the file footer (FileMetaData) in Thrift compact form, with the field ids of parquet-format's
 * parquet.thrift. Only what the columnar encoder emits is modelled (docs/design/storage-format.md).
 */
import type { SchemaElement } from '../parquet-schema.js';
import { ByteSink } from './byte-sink.js';
import { CT, CompactWriter } from './compact-thrift.js';

/** Physical types, by their parquet.thrift ordinal. */
export const PHYSICAL = Object.freeze({
  BOOLEAN: 0,
  INT32: 1,
  INT64: 2,
  INT96: 3,
  FLOAT: 4,
  DOUBLE: 5,
  BYTE_ARRAY: 6,
  FIXED_LEN_BYTE_ARRAY: 7,
} as const);
/** Encodings used here. */
export const ENCODING = Object.freeze({ PLAIN: 0, RLE: 3, RLE_DICTIONARY: 8 } as const);
const PAGE_TYPE = Object.freeze({ DATA_PAGE: 0, DICTIONARY_PAGE: 2 } as const);
const CODEC_ZSTD = 6;
const REPETITION: Record<string, number> = { REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 };
const CONVERTED: Record<string, number> = { UTF8: 0, LIST: 3, UINT_8: 11, UINT_16: 12, UINT_32: 13, UINT_64: 14 };
const TIME_UNIT: Record<string, number> = { MILLIS: 1, MICROS: 2, NANOS: 3 };

/** Column-chunk statistics as raw little-endian / byte-array bounds. */
export interface ChunkStatistics {
  readonly nullCount: number;
  readonly min?: Uint8Array;
  readonly max?: Uint8Array;
}

/** Where one data page of a chunk is (parquet-format's PageLocation): for the offset index. */
export interface PageLocation {
  /** File offset of the page header. */
  readonly offset: number;
  /** Header plus compressed body. */
  readonly compressedPageSize: number;
  /** Row of the row group the page starts with. */
  readonly firstRowIndex: number;
}

/** One data page's min/max (absent when the page holds only NULLs) and NULL count: for the column index. */
export interface PageBounds {
  readonly nullCount: number;
  readonly min?: Uint8Array;
  readonly max?: Uint8Array;
}

/** One column chunk's metadata. */
export interface ChunkMeta {
  readonly type: number;
  readonly encodings: readonly number[];
  readonly path: readonly string[];
  readonly numValues: number;
  readonly uncompressedBytes: number;
  readonly compressedBytes: number;
  readonly dataPageOffset: number;
  readonly dictionaryPageOffset?: number;
  readonly statistics?: ChunkStatistics;
  /** Its data pages, in order (written as the chunk's offset index). */
  readonly pages?: readonly PageLocation[];
  /** Per data page bounds, for a chunk that gets a column index. */
  readonly pageBounds?: readonly PageBounds[];
}

/** Where a chunk's offset index and column index were written (set by the file writer before the footer). */
export interface ChunkIndexRanges {
  readonly offsetIndex?: { readonly offset: number; readonly length: number };
  readonly columnIndex?: { readonly offset: number; readonly length: number };
}

/** parquet-format's BoundaryOrder. */
const BOUNDARY = Object.freeze({ UNORDERED: 0, ASCENDING: 1 } as const);

/** A chunk's OffsetIndex struct: its page locations. */
export function offsetIndexBytes(pages: readonly PageLocation[]): Uint8Array {
  const w = new CompactWriter(new ByteSink(16 + pages.length * 12)).begin();
  w.list(1, CT.STRUCT, pages.length);
  for (const p of pages) w.begin().i64(1, p.offset).i32(2, p.compressedPageSize).i64(3, p.firstRowIndex).end();
  w.end();
  return w.out.toBytes();
}

/**
 * A chunk's ColumnIndex struct. `compare` orders two bounds as the column's statistics do; the boundary order is
 * ASCENDING when both the mins and the maxes never decrease page to page (rows sorted by time), else UNORDERED.
 */
export function columnIndexBytes(
  bounds: readonly PageBounds[],
  compare: (a: Uint8Array, b: Uint8Array) => number,
): Uint8Array {
  const w = new CompactWriter(new ByteSink(32 + bounds.length * 24)).begin();
  const empty = new Uint8Array(0);
  w.list(1, CT.BOOL, bounds.length);
  for (const b of bounds) w.elemBool(b.min === undefined);
  w.list(2, CT.BINARY, bounds.length);
  for (const b of bounds) w.elemBinary(b.min ?? empty);
  w.list(3, CT.BINARY, bounds.length);
  for (const b of bounds) w.elemBinary(b.max ?? empty);
  let ascending = true;
  let prev: PageBounds | undefined;
  for (const b of bounds) {
    if (b.min === undefined || b.max === undefined) continue;
    if (prev?.min !== undefined && prev.max !== undefined)
      ascending &&= compare(prev.min, b.min) <= 0 && compare(prev.max, b.max) <= 0;
    prev = b;
  }
  w.i32(4, ascending ? BOUNDARY.ASCENDING : BOUNDARY.UNORDERED);
  w.list(5, CT.I64, bounds.length);
  for (const b of bounds) w.elemI64(b.nullCount);
  w.end();
  return w.out.toBytes();
}

/** One row group's metadata. */
export interface RowGroupMeta {
  readonly columns: readonly ChunkMeta[];
  readonly numRows: number;
  readonly fileOffset: number;
}

/** Appends a data page v1 header. */
export function writeDataPageHeader(
  out: ByteSink,
  p: { uncompressed: number; compressed: number; numValues: number; encoding: number },
): void {
  const w = new CompactWriter(out).begin();
  w.i32(1, PAGE_TYPE.DATA_PAGE).i32(2, p.uncompressed).i32(3, p.compressed);
  w.struct(5).i32(1, p.numValues).i32(2, p.encoding).i32(3, ENCODING.RLE).i32(4, ENCODING.RLE).end();
  w.end();
}

/** Appends a dictionary page header (PLAIN entries). */
export function writeDictionaryPageHeader(
  out: ByteSink,
  p: { uncompressed: number; compressed: number; numValues: number },
): void {
  const w = new CompactWriter(out).begin();
  w.i32(1, PAGE_TYPE.DICTIONARY_PAGE).i32(2, p.uncompressed).i32(3, p.compressed);
  w.struct(7).i32(1, p.numValues).i32(2, ENCODING.PLAIN).end();
  w.end();
}

function writeSchemaElement(w: CompactWriter, e: SchemaElement): void {
  w.begin();
  if (e.type !== undefined) w.i32(1, PHYSICAL[e.type]);
  if (e.type_length !== undefined) w.i32(2, e.type_length);
  if (e.repetition_type !== undefined) w.i32(3, REPETITION[e.repetition_type]!);
  w.string(4, e.name);
  if (e.num_children !== undefined) w.i32(5, e.num_children);
  if (e.converted_type !== undefined) {
    const c = CONVERTED[e.converted_type];
    if (c === undefined) throw new Error(`columnar encoder: converted type ${e.converted_type} not modelled`);
    w.i32(6, c);
  }
  const lt = e.logical_type;
  if (lt !== undefined) {
    w.struct(10);
    if (lt.type === 'STRING') w.struct(1).end();
    else if (lt.type === 'LIST') w.struct(3).end();
    else if (lt.type === 'TIMESTAMP') {
      w.struct(8).bool(1, lt.isAdjustedToUTC);
      w.struct(2).struct(TIME_UNIT[lt.unit]!).end().end();
      w.end();
    } else throw new Error(`columnar encoder: logical type ${lt.type} not modelled`);
    w.end();
  }
  w.end();
}

function writeChunk(w: CompactWriter, c: ChunkMeta, index: ChunkIndexRanges | undefined): void {
  w.begin().i64(2, c.dataPageOffset);
  w.struct(3).i32(1, c.type);
  w.list(2, CT.I32, c.encodings.length);
  for (const e of c.encodings) w.elemI32(e);
  w.list(3, CT.BINARY, c.path.length);
  for (const p of c.path) w.elemString(p);
  w.i32(4, CODEC_ZSTD).i64(5, c.numValues).i64(6, c.uncompressedBytes).i64(7, c.compressedBytes);
  w.i64(9, c.dataPageOffset);
  if (c.dictionaryPageOffset !== undefined) w.i64(11, c.dictionaryPageOffset);
  const s = c.statistics;
  if (s !== undefined) {
    w.struct(12);
    w.i64(3, s.nullCount);
    if (s.max !== undefined && s.min !== undefined) {
      w.binary(5, s.max).binary(6, s.min).bool(7, true).bool(8, true);
    }
    w.end();
  }
  w.end();
  if (index?.offsetIndex !== undefined) w.i64(4, index.offsetIndex.offset).i32(5, index.offsetIndex.length);
  if (index?.columnIndex !== undefined) w.i64(6, index.columnIndex.offset).i32(7, index.columnIndex.length);
  w.end();
}

/** The serialised FileMetaData (without the trailing length and magic). */
export function footerBytes(m: {
  schema: readonly SchemaElement[];
  numRows: number;
  rowGroups: readonly RowGroupMeta[];
  keyValueMetadata: readonly { readonly key: string; readonly value: string }[];
  createdBy: string;
  /** Per row group, per column: where its page index is (omitted: none). */
  indexes?: readonly (readonly ChunkIndexRanges[])[];
}): Uint8Array {
  const w = new CompactWriter(new ByteSink(4096)).begin();
  w.i32(1, 2);
  w.list(2, CT.STRUCT, m.schema.length);
  for (const e of m.schema) writeSchemaElement(w, e);
  w.i64(3, m.numRows);
  w.list(4, CT.STRUCT, m.rowGroups.length);
  for (const [gi, g] of m.rowGroups.entries()) {
    w.begin();
    w.list(1, CT.STRUCT, g.columns.length);
    let uncompressed = 0;
    let compressed = 0;
    for (const [ci, c] of g.columns.entries()) {
      writeChunk(w, c, m.indexes?.[gi]?.[ci]);
      uncompressed += c.uncompressedBytes;
      compressed += c.compressedBytes;
    }
    w.i64(2, uncompressed).i64(3, g.numRows).i64(5, g.fileOffset).i64(6, compressed);
    w.end();
  }
  w.list(5, CT.STRUCT, m.keyValueMetadata.length);
  for (const kv of m.keyValueMetadata) w.begin().string(1, kv.key).string(2, kv.value).end();
  w.string(6, m.createdBy);
  const leaves = m.schema.filter((e) => e.type !== undefined).length;
  w.list(7, CT.STRUCT, leaves);
  for (let i = 0; i < leaves; i++) w.begin().struct(1).end().end();
  w.end();
  return w.out.toBytes();
}
