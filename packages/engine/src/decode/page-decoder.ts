/**
 * @module page-decoder
 * Sluice's own decoder for one flat column chunk (docs/design/query-engine.md, "Columnar decode"): page headers
 * and the RLE/bit-packed hybrid come from hyparquet's exported internals, ZSTD from the storage package; values
 * land in typed arrays (INT32/INT64/FLOAT/DOUBLE) or a {@link StringVector} (UTF-8), never one JS object per
 * value. What it does not handle (nested or FIXED_LEN/BOOLEAN columns, other codecs or encodings, numeric columns
 * with NULLs) it refuses up front with `undefined`, or mid-chunk with {@link UnsupportedChunk}, and the caller
 * reads that column through hyparquet instead.
 *
 * Every buffer it keeps is reserved at its exact byte size before it is allocated; a transient buffer (a
 * decompressed numeric page, a page's definition levels) is reserved while it lives.
 */
import type { ColumnMetaData, SchemaElement } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { zstdDecompress, zstdDecompressView } from '@sluice/storage';
import { readHybrid } from './rle-hybrid.js';
import {
  BooleanVector,
  DictStringVector,
  FixedBytesVector,
  PlainStringVector,
  RowSlice,
  decodeUtf8,
  type ColumnData,
} from './string-vector.js';

/** Thrown when a chunk turns out to use something this decoder does not read; the caller falls back. */
export class UnsupportedChunk extends Error {
  override readonly name = 'UnsupportedChunk';
}

/** What the decoder reserves on: the query's tracker. */
export interface DecodeReserve {
  grow(bytes: number): number;
  shrink(bytes: number): void;
}

/** A decoded chunk and the bytes it keeps reserved. */
export interface DecodedChunk {
  readonly data: ColumnData;
  readonly reserved: number;
}

type Kind = 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64' | 'utf8' | 'fixed' | 'bool';

/** Widest FIXED_LEN_BYTE_ARRAY this decoder reads (ids are 8 and 16 bytes). */
const FIXED_MAX_WIDTH = 64;

const LEVEL_ENCODINGS = new Set(['RLE', 'BIT_PACKED']);
const VALUE_ENCODINGS = new Set(['PLAIN', 'RLE_DICTIONARY', 'PLAIN_DICTIONARY']);
const INT32_CONVERTED = new Set([undefined, 'UINT_8', 'UINT_16', 'INT_8', 'INT_16', 'INT_32']);

/**
 * The in-memory kind of a flat column this decoder reads, or `undefined` when hyparquet must read it. The kinds
 * mirror what hyparquet returns (UINT_64 as BigUint64Array, UINT_32 as Uint32Array, nanosecond timestamps as raw
 * int64), so both paths hand the engine the same values.
 */
export function chunkKind(meta: ColumnMetaData, element: SchemaElement): Kind | undefined {
  if (meta.path_in_schema.length !== 1) return undefined;
  if (meta.codec !== 'ZSTD' && meta.codec !== 'UNCOMPRESSED') return undefined;
  if (!meta.encodings.every((e) => LEVEL_ENCODINGS.has(e) || VALUE_ENCODINGS.has(e))) return undefined;
  const optional = element.repetition_type === 'OPTIONAL';
  if (!optional && element.repetition_type !== 'REQUIRED') return undefined;
  const ct = element.converted_type;
  const lt = element.logical_type;
  let kind: Kind | undefined;
  switch (meta.type) {
    case 'INT32':
      if (ct === 'UINT_32') kind = 'u32';
      else if (INT32_CONVERTED.has(ct) && (lt === undefined || lt.type === 'INTEGER')) kind = 'i32';
      break;
    case 'INT64':
      if (ct === 'UINT_64') kind = 'u64';
      else if (lt?.type === 'TIMESTAMP' && lt.unit === 'NANOS' && ct === undefined) kind = 'i64';
      else if ((ct === undefined || ct === 'INT_64') && (lt === undefined || lt.type === 'INTEGER')) kind = 'i64';
      break;
    case 'FLOAT':
      if (ct === undefined && lt === undefined) kind = 'f32';
      break;
    case 'DOUBLE':
      if (ct === undefined && lt === undefined) kind = 'f64';
      break;
    case 'BYTE_ARRAY':
      if (ct === 'UTF8' || (ct === undefined && (lt === undefined || lt.type === 'STRING'))) kind = 'utf8';
      break;
    case 'BOOLEAN':
      if (ct === undefined && lt === undefined) kind = 'bool';
      break;
    case 'FIXED_LEN_BYTE_ARRAY': {
      // Raw bytes only: a DECIMAL, UUID or FLOAT16 annotation makes hyparquet return something else.
      const w = element.type_length ?? 0;
      if (ct === undefined && lt === undefined && w >= 1 && w <= FIXED_MAX_WIDTH) kind = 'fixed';
      break;
    }
    default:
      break;
  }
  if (kind === undefined) return undefined;
  // Numeric columns stay typed arrays only without NULLs: a chunk whose statistics do not say so goes to hyparquet.
  if (
    kind !== 'utf8' &&
    kind !== 'fixed' &&
    kind !== 'bool' &&
    optional &&
    Number(meta.statistics?.null_count ?? -1) !== 0
  )
    return undefined;
  return kind;
}

/** Byte offset and length of a column chunk in its file. */
export function chunkRange(meta: ColumnMetaData): { start: number; length: number } {
  const dict = meta.dictionary_page_offset;
  const start = Number(dict !== undefined && dict > 0n ? dict : meta.data_page_offset);
  return { start, length: Number(meta.total_compressed_size) };
}

type NumberKind = Exclude<Kind, 'utf8' | 'fixed' | 'bool'>;

function bytesPer(kind: NumberKind): number {
  return kind === 'i64' || kind === 'u64' || kind === 'f64' ? 8 : 4;
}

function typedArray(
  kind: NumberKind,
  n: number,
): BigInt64Array | BigUint64Array | Int32Array | Uint32Array | Float32Array | Float64Array {
  switch (kind) {
    case 'i64':
      return new BigInt64Array(n);
    case 'u64':
      return new BigUint64Array(n);
    case 'i32':
      return new Int32Array(n);
    case 'u32':
      return new Uint32Array(n);
    case 'f32':
      return new Float32Array(n);
    case 'f64':
      return new Float64Array(n);
  }
}

type Typed = ReturnType<typeof typedArray>;

/** A reservation ledger for one chunk: kept bytes survive the chunk, transient ones are given back. */
class Ledger {
  kept = 0;
  constructor(readonly reserve: DecodeReserve) {}
  keep(bytes: number): void {
    this.kept += this.reserve.grow(bytes);
  }
  transient(bytes: number): number {
    return this.reserve.grow(bytes);
  }
  giveBack(bytes: number): void {
    this.reserve.shrink(bytes);
  }
}

interface PageBody {
  /** Decompressed page bytes (levels and values). */
  readonly bytes: Uint8Array;
  /** Offset of the values section. */
  readonly valuesAt: number;
  /** Definition levels (1 = present) or `undefined` for a page without NULLs. */
  readonly defs: Uint8Array | undefined;
  readonly numValues: number;
  readonly encoding: string;
}

/**
 * A page's bytes: a buffer of its own, or with `view` the decoder's own memory, valid until the next decompression
 * (for a page read once and dropped before the next one is decompressed).
 */
function decompress(codec: string, input: Uint8Array, size: number, view = false): Uint8Array {
  if (codec === 'UNCOMPRESSED') {
    if (input.length !== size) throw new Error('uncompressed page size mismatch');
    return input;
  }
  return view ? zstdDecompressView(input, size) : zstdDecompress(input, size);
}

/**
 * Decodes one flat column chunk of `numRows` rows. `chunk` is the chunk's bytes as stored. Returns the column
 * with what it keeps reserved; throws {@link UnsupportedChunk} when a page needs the fallback, and an ordinary
 * error for bytes that do not decode (the caller classifies it as a damaged file).
 */
export function decodeChunk(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  element: SchemaElement,
  kind: Kind,
  numRows: number,
  reserve: DecodeReserve,
  rows?: RowRange,
  layout: ChunkLayout = 'group',
): DecodedChunk {
  if (Number(meta.num_values) !== numRows) throw new UnsupportedChunk('value count differs from row count');
  const optional = element.repetition_type === 'OPTIONAL';
  const ledger = new Ledger(reserve);
  let out: OutRows = { base: 0, length: numRows };
  if (layout === 'slice' && rows !== undefined) {
    if (!(Number.isSafeInteger(rows.start) && rows.start >= 0 && rows.start <= rows.end && rows.end <= numRows))
      throw new RangeError(`row range [${rows.start}, ${rows.end}) outside a group of ${numRows} rows`);
    out = { base: rows.start, length: rows.end - rows.start };
  }
  try {
    const data =
      kind === 'utf8'
        ? decodeStrings(chunk, meta, optional, numRows, ledger, out, rows)
        : kind === 'fixed'
          ? decodeFixed(chunk, meta, optional, element.type_length ?? 0, numRows, ledger, out, rows)
          : kind === 'bool'
            ? decodeBooleans(chunk, meta, optional, numRows, ledger, out, rows)
            : decodeNumbers(chunk, meta, optional, kind, numRows, ledger, out, rows);
    return {
      data: out.base === 0 && out.length === numRows ? data : new RowSlice(data, out.base, numRows),
      reserved: ledger.kept,
    };
  } catch (e) {
    reserve.shrink(ledger.kept);
    throw e;
  }
}

/**
 * Rows `[start, end)` of a row group: the only rows a targeted read must decode. Pages wholly outside are skipped
 * undecompressed, and their rows read as zero / NULL (docs/design/query-engine.md, "Targeted rendering").
 */
export interface RowRange {
  readonly start: number;
  readonly end: number;
}

/**
 * How a read with a row range lays out its rows. `group`: arrays of the whole group, rows outside the range left
 * zero / NULL (what predicates and aggregation index by group row). `slice`: arrays of the range only, wrapped in
 * a {@link RowSlice} read by group row, so a targeted read allocates and reserves 4–10 bytes per row of the range,
 * not of the group (docs/design/query-engine.md, "Targeted rendering").
 */
export type ChunkLayout = 'group' | 'slice';

/** The rows a decode lays out: group rows `[base, base + length)` at indices `0 … length − 1`. */
interface OutRows {
  readonly base: number;
  readonly length: number;
}

/** The part of a page's rows `[row, row + n)` that lands in `out`, as offsets into the page: `[from, to)`. */
function overlap(out: OutRows, row: number, n: number): { from: number; to: number } {
  const from = Math.max(0, out.base - row);
  const to = Math.min(n, out.base + out.length - row);
  return to > from ? { from, to } : { from: 0, to: 0 };
}

/**
 * Walks the chunk's pages: the dictionary page (if any) to `onDict`, each data page's body to `onData`, and each
 * data page wholly outside `rows` to `onSkip` with its row count, without decompressing it.
 */
function walkPages(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  ledger: Ledger,
  keepPages: boolean,
  onDict: (bytes: Uint8Array, count: number) => void,
  onData: (page: PageBody) => void,
  rows?: RowRange,
  onSkip?: (count: number) => void,
  /** Data pages as views of the decoder's memory (only with `keepPages` false): `onData` must be done with each. */
  viewPages = false,
): void {
  let pageRow = 0;
  const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const reader = { view, offset: 0 };
  while (reader.offset < chunk.length) {
    const header = parquetHeader(reader);
    const start = reader.offset;
    const end = start + header.compressed_page_size;
    if (end > chunk.length) throw new Error('page past the end of its column chunk');
    reader.offset = end;
    const raw = chunk.subarray(start, end);
    const size = header.uncompressed_page_size;
    if (header.type === 'DICTIONARY_PAGE') {
      const dh = header.dictionary_page_header;
      if (dh === undefined) throw new Error('dictionary page without header');
      const t = ledger.transient(size);
      try {
        onDict(decompress(meta.codec, raw, size), dh.num_values);
      } finally {
        ledger.giveBack(t);
      }
      continue;
    }
    if (header.type !== 'DATA_PAGE' && header.type !== 'DATA_PAGE_V2') continue; // index pages carry no rows
    // A flat column has one value per row, so a page's value count is its row count.
    const pageValues = header.data_page_header?.num_values ?? header.data_page_header_v2?.num_values ?? 0;
    const first = pageRow;
    pageRow += pageValues;
    if (rows !== undefined && onSkip !== undefined && (first + pageValues <= rows.start || first >= rows.end)) {
      onSkip(pageValues);
      continue;
    }
    // A kept page (PLAIN strings) is the column's value buffer; others live only while they are decoded.
    const pageBytes = keepPages ? (ledger.keep(size), size) : ledger.transient(size);
    let defsReserved = 0;
    /** The largest definition level read (1 when every value is present). */
    let defsTop = 0;
    try {
      let bytes: Uint8Array;
      let valuesAt: number;
      let defs: Uint8Array | undefined;
      let numValues: number;
      let encoding: string;
      if (header.type === 'DATA_PAGE') {
        const dh = header.data_page_header;
        if (dh === undefined) throw new Error('data page without header');
        numValues = dh.num_values;
        encoding = dh.encoding;
        bytes = decompress(meta.codec, raw, size, viewPages && !keepPages);
        valuesAt = 0;
        if (optional) {
          // The levels: a 4-byte length, then the hybrid at width 1.
          if (bytes.length < 4) throw new Error('page too short for its levels');
          const levels = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
          if (!allPresent(bytes, 4, 4 + levels, numValues)) {
            defsReserved = ledger.transient(numValues);
            defs = new Uint8Array(numValues);
            defsTop = readHybrid(bytes, 4, 1, defs, numValues);
          }
          valuesAt = 4 + levels;
        }
      } else {
        const dh = header.data_page_header_v2;
        if (dh === undefined) throw new Error('data page v2 without header');
        numValues = dh.num_values;
        encoding = dh.encoding;
        if (dh.repetition_levels_byte_length !== 0) throw new UnsupportedChunk('repetition levels');
        const levels = dh.definition_levels_byte_length;
        const values = dh.is_compressed
          ? decompress(meta.codec, raw.subarray(levels), size - levels)
          : raw.subarray(levels);
        bytes = new Uint8Array(size);
        bytes.set(raw.subarray(0, levels), 0);
        bytes.set(values, levels);
        if (optional && !allPresent(bytes, 0, levels, numValues)) {
          defsReserved = ledger.transient(numValues);
          defs = new Uint8Array(numValues);
          if (levels > 0) defsTop = readHybrid(bytes.subarray(0, levels), 0, 1, defs, numValues);
        }
        valuesAt = levels;
      }
      // All 1s: no NULL (a level above 1, in a damaged page, keeps the levels as they are).
      if (defs !== undefined && defsTop <= 1 && defs.indexOf(0) === -1) defs = undefined;
      onData({ bytes, valuesAt, defs, numValues, encoding });
    } finally {
      ledger.giveBack(defsReserved);
      if (!keepPages) ledger.giveBack(pageBytes);
    }
  }
}

/**
 * Whether the definition levels at `bytes[at, end)` (the hybrid at width 1) open with one RLE run of 1s covering
 * all `count` values: what a writer emits for a page without NULLs, recognised from its first header so such a
 * page allocates and decodes no levels at all.
 */
function allPresent(bytes: Uint8Array, at: number, end: number, count: number): boolean {
  let header = 0;
  let shift = 0;
  let pos = at;
  for (;;) {
    if (pos >= end || shift > 28) return false;
    const b = bytes[pos++] as number;
    header += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
  }
  return header % 2 === 0 && header / 2 >= count && pos < end && bytes[pos] === 1;
}

/** Present values among the page's first `upTo` rows (all of them by default). */
function presentCount(page: PageBody, upTo = page.numValues): number {
  if (page.defs === undefined) return upTo;
  let n = 0;
  for (let k = 0; k < upTo; k++) n += page.defs[k] === 1 ? 1 : 0;
  return n;
}

/** Dictionary indices of a page's present values (`bitWidth` byte, then the RLE/bit-packed hybrid). */
function readIndices(page: PageBody, count: number, ledger: Ledger): { idx: Int32Array; reserved: number } {
  const reserved = ledger.transient(count * 4);
  const idx = new Int32Array(count);
  const { bytes, valuesAt } = page;
  const width = bytes[valuesAt] ?? 0;
  if (width > 32) throw new Error('dictionary index width above 32');
  if (width > 0) readHybrid(bytes, valuesAt + 1, width, idx, count);
  return { idx, reserved };
}

/**
 * `out[at + k] = dict[idx[k]]` for `k` in `[from, to)`, moved as 32-bit words (bit-exact for floats too): reading
 * a 64-bit typed array element makes a BigInt, one per row of a dictionary-encoded `template_id` otherwise.
 */
function copyDictionaryValues(dict: Typed, idx: Int32Array, from: number, to: number, out: Typed, at: number): void {
  const dn = dict.length;
  const words = dict.BYTES_PER_ELEMENT >> 2; // every numeric kind is 4 or 8 bytes wide
  const d = new Int32Array(dict.buffer, dict.byteOffset, dn * words);
  const o = new Int32Array(out.buffer, out.byteOffset, out.length * words);
  if (words === 1) {
    for (let k = from; k < to; k++) {
      const j = idx[k] as number;
      if (j >>> 0 >= dn) throw new Error('dictionary index out of range'); // a negative index too
      o[at + k] = d[j] as number;
    }
    return;
  }
  for (let k = from; k < to; k++) {
    const j = idx[k] as number;
    if (j >>> 0 >= dn) throw new Error('dictionary index out of range');
    const w = 2 * (at + k);
    o[w] = d[2 * j] as number;
    o[w + 1] = d[2 * j + 1] as number;
  }
}

function decodeNumbers(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  kind: NumberKind,
  numRows: number,
  ledger: Ledger,
  target: OutRows,
  rows?: RowRange,
): Typed {
  const width = bytesPer(kind);
  ledger.keep(target.length * width);
  const out = typedArray(kind, target.length);
  const outBytes = new Uint8Array(out.buffer);
  let dict: Typed | undefined;
  let dictReserved = 0;
  let row = 0;
  try {
    walkPages(
      chunk,
      meta,
      optional,
      ledger,
      false,
      (bytes, count) => {
        dictReserved = ledger.transient(count * width);
        dict = typedArray(kind, count);
        if (bytes.length < count * width) throw new Error('dictionary page too short');
        new Uint8Array(dict.buffer).set(bytes.subarray(0, count * width));
      },
      (page) => {
        // Numeric chunks reach here only when their statistics say no NULLs; a page that has one anyway goes back
        // to hyparquet rather than being guessed at.
        if (page.defs !== undefined) throw new UnsupportedChunk('NULL in a numeric chunk');
        const n = page.numValues;
        if (row + n > numRows) throw new Error('more values than rows');
        const { from, to } = overlap(target, row, n);
        const at = row - target.base;
        if (page.encoding === 'PLAIN') {
          const len = n * width;
          if (page.valuesAt + len > page.bytes.length) throw new Error('page too short for its values');
          const v = page.valuesAt;
          outBytes.set(page.bytes.subarray(v + from * width, v + to * width), (at + from) * width);
        } else if (page.encoding === 'RLE_DICTIONARY' || page.encoding === 'PLAIN_DICTIONARY') {
          const d = dict;
          if (d === undefined) throw new Error('dictionary-encoded page without a dictionary');
          // Only the indices up to the last laid-out row are decoded (the hybrid is read front to back).
          const { idx, reserved } = readIndices(page, to, ledger);
          try {
            copyDictionaryValues(d, idx, from, to, out, at);
          } finally {
            ledger.giveBack(reserved);
          }
        } else throw new UnsupportedChunk(`encoding ${page.encoding}`);
        row += n;
      },
      rows,
      (n) => {
        if (row + n > numRows) throw new Error('more values than rows');
        row += n; // zeros: a targeted read never looks at these rows
      },
    );
  } finally {
    ledger.giveBack(dictReserved);
  }
  if (row !== numRows) throw new Error('fewer values than rows');
  return out;
}

function decodeStrings(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  numRows: number,
  ledger: Ledger,
  target: OutRows,
  rows?: RowRange,
): ColumnData {
  // A chunk is dictionary or PLAIN throughout (Sluice's encoder re-lays a chunk whose dictionary overflows as
  // PLAIN); a chunk that mixes the two goes to hyparquet.
  const dictEncoded = meta.encodings.some((e) => e === 'RLE_DICTIONARY' || e === 'PLAIN_DICTIONARY');
  if (dictEncoded && meta.encodings.includes('PLAIN') && meta.dictionary_page_offset === undefined)
    throw new UnsupportedChunk('mixed encodings');
  return dictEncoded
    ? decodeDictStrings(chunk, meta, optional, numRows, ledger, target, rows)
    : decodePlainStrings(chunk, meta, optional, numRows, ledger, target, rows);
}

function decodeDictStrings(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  numRows: number,
  ledger: Ledger,
  target: OutRows,
  rows?: RowRange,
): DictStringVector {
  ledger.keep(target.length * 4);
  const indices = new Int32Array(target.length);
  let dict: string[] | undefined;
  let row = 0;
  walkPages(
    chunk,
    meta,
    optional,
    ledger,
    false,
    (bytes, count) => {
      // A V8 string never takes more payload bytes than its UTF-8 form; 32 bytes cover its header and slot.
      ledger.keep(bytes.length + count * 32);
      dict = new Array<string>(count);
      const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let off = 0;
      for (let k = 0; k < count; k++) {
        if (off + 4 > bytes.length) throw new Error('dictionary page too short');
        const len = v.getUint32(off, true);
        off += 4;
        if (off + len > bytes.length) throw new Error('dictionary entry past the page');
        dict[k] = decodeUtf8(bytes.subarray(off, off + len));
        off += len;
      }
    },
    (page) => {
      if (page.encoding !== 'RLE_DICTIONARY' && page.encoding !== 'PLAIN_DICTIONARY')
        throw new UnsupportedChunk(`encoding ${page.encoding} in a dictionary chunk`);
      const d = dict;
      if (d === undefined) throw new Error('dictionary-encoded page without a dictionary');
      const n = page.numValues;
      if (row + n > numRows) throw new Error('more values than rows');
      const { from, to } = overlap(target, row, n);
      const at = row - target.base;
      if (page.defs === undefined && from === 0) {
        // No NULLs and the page's first row laid out: the indices go straight into the kept buffer.
        const out = indices.subarray(at, at + to);
        const { bytes, valuesAt } = page;
        const width = bytes[valuesAt] ?? 0;
        if (width > 32) throw new Error('dictionary index width above 32');
        if (width === 0) out.fill(0);
        else if (readHybrid(bytes, valuesAt + 1, width, out, to) >= d.length)
          throw new Error('dictionary index out of range');
        if (to > 0 && d.length === 0) throw new Error('dictionary index out of range');
        row += n;
        return;
      }
      // Values are read front to back: the indices up to the last laid-out row, those before `from` skipped.
      const { idx, reserved } = readIndices(page, presentCount(page, to), ledger);
      try {
        const dn = d.length;
        const defs = page.defs;
        let k = presentCount(page, from);
        for (let r = from; r < to; r++) {
          if (defs !== undefined && defs[r] !== 1) {
            indices[at + r] = -1;
            continue;
          }
          const j = idx[k++] as number;
          if (j >>> 0 >= dn) throw new Error('dictionary index out of range'); // a negative index too
          indices[at + r] = j;
        }
      } finally {
        ledger.giveBack(reserved);
      }
      row += n;
    },
    rows,
    (n) => {
      if (row + n > numRows) throw new Error('more values than rows');
      const { from, to } = overlap(target, row, n);
      indices.fill(-1, row - target.base + from, row - target.base + to);
      row += n;
    },
  );
  if (row !== numRows) throw new Error('fewer values than rows');
  return new DictStringVector(dict ?? [], indices);
}

function decodePlainStrings(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  numRows: number,
  ledger: Ledger,
  target: OutRows,
  rows?: RowRange,
): PlainStringVector {
  // Per row: page number (2 bytes), start and length (4 + 4); the pages themselves are reserved as they are kept.
  ledger.keep(target.length * 10);
  const page = new Uint16Array(target.length);
  const starts = new Int32Array(target.length);
  const lens = new Int32Array(target.length);
  const pages: Buffer[] = [];
  const pageRows: number[] = [];
  let row = 0;
  walkPages(
    chunk,
    meta,
    optional,
    ledger,
    true,
    () => {
      throw new UnsupportedChunk('dictionary page in a PLAIN chunk');
    },
    (p) => {
      if (p.encoding !== 'PLAIN') throw new UnsupportedChunk(`encoding ${p.encoding}`);
      if (pages.length >= 0xffff) throw new UnsupportedChunk('too many pages');
      const n = p.numValues;
      if (row + n > numRows) throw new Error('more values than rows');
      const b = p.bytes;
      const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
      const pi = pages.length;
      pages.push(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
      const { from, to } = overlap(target, row, n);
      const at = row - target.base;
      pageRows.push(at + from);
      let off = p.valuesAt;
      const defs = p.defs;
      // Lengths are read front to back up to the last laid-out row; rows before `from` are walked, not kept.
      for (let r = 0; r < to; r++) {
        const i = at + r;
        const keep = r >= from;
        if (keep) page[i] = pi;
        if (defs !== undefined && defs[r] !== 1) {
          if (keep) {
            lens[i] = -1;
            starts[i] = off;
          }
          continue;
        }
        if (off + 4 > b.length) throw new Error('page too short for its values');
        const len = v.getUint32(off, true);
        off += 4;
        if (len > b.length - off) throw new Error('value past the end of its page');
        if (keep) {
          starts[i] = off;
          lens[i] = len;
        }
        off += len;
      }
      row += n;
    },
    rows,
    (n) => {
      if (row + n > numRows) throw new Error('more values than rows');
      const { from, to } = overlap(target, row, n);
      lens.fill(-1, row - target.base + from, row - target.base + to);
      row += n;
    },
  );
  if (row !== numRows) throw new Error('fewer values than rows');
  pageRows.push(target.length);
  ledger.keep(pageRows.length * 4);
  return new PlainStringVector(pages, page, starts, lens, Int32Array.from(pageRows));
}

/**
 * {@link walkPages} for a flat chunk of `numRows` rows: each data page's body goes to `onData` with the row it starts
 * at; skipped pages (outside `rows`) only advance the row, their rows left as the output's initial value (a targeted
 * read never looks at them). Throws unless the pages hold exactly `numRows` values.
 */
function walkRows(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  ledger: Ledger,
  numRows: number,
  what: string,
  onData: (page: PageBody, row: number) => void,
  rows?: RowRange,
): void {
  let row = 0;
  const advance = (n: number): void => {
    if (row + n > numRows) throw new Error('more values than rows');
    row += n;
  };
  walkPages(
    chunk,
    meta,
    optional,
    ledger,
    false,
    () => {
      throw new UnsupportedChunk(`dictionary page in a ${what} chunk`);
    },
    (p) => {
      if (row + p.numValues > numRows) throw new Error('more values than rows');
      onData(p, row);
      advance(p.numValues);
    },
    rows,
    advance,
  );
  if (row !== numRows) throw new Error('fewer values than rows');
}

/**
 * A FIXED_LEN_BYTE_ARRAY chunk (PLAIN pages, NULLs allowed) into one buffer of `width` bytes per row and a
 * presence byte per row; a NULL row's bytes stay zero. Kept: `numRows × (width + 1)` bytes.
 */
function decodeFixed(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  width: number,
  numRows: number,
  ledger: Ledger,
  target: OutRows,
  rows?: RowRange,
): FixedBytesVector {
  ledger.keep(target.length * (width + 1));
  const bytes = new Uint8Array(target.length * width);
  const present = new Uint8Array(target.length);
  const onData = (p: PageBody, row: number): void => {
    if (p.encoding !== 'PLAIN') throw new UnsupportedChunk(`encoding ${p.encoding}`);
    const n = p.numValues;
    const defs = p.defs;
    const src = p.bytes;
    const { from, to } = overlap(target, row, n);
    const at = row - target.base;
    let off = p.valuesAt;
    if (defs === undefined) {
      if (off + n * width > src.length) throw new Error('page too short for its values');
      bytes.set(src.subarray(off + from * width, off + to * width), (at + from) * width);
      present.fill(1, at + from, at + to);
      return;
    }
    for (let r = 0; r < to; r++) {
      if (defs[r] !== 1) continue;
      if (off + width > src.length) throw new Error('page too short for its values');
      if (r >= from) {
        bytes.set(src.subarray(off, off + width), (at + r) * width);
        present[at + r] = 1;
      }
      off += width;
    }
  };
  walkRows(chunk, meta, optional, ledger, numRows, 'fixed-width', onData, rows);
  return new FixedBytesVector(width, bytes, present);
}

/**
 * A BOOLEAN chunk (PLAIN pages: one bit per present value, LSB first; or RLE) into one byte per row: 0, 1, or 2
 * for NULL and for rows of skipped pages. Kept: `numRows` bytes.
 */
function decodeBooleans(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  optional: boolean,
  numRows: number,
  ledger: Ledger,
  target: OutRows,
  rows?: RowRange,
): BooleanVector {
  ledger.keep(target.length);
  const values = new Uint8Array(target.length).fill(2);
  const onData = (p: PageBody, row: number): void => {
    const n = p.numValues;
    const defs = p.defs;
    const src = p.bytes;
    const { from, to } = overlap(target, row, n);
    const at = row - target.base;
    if (p.encoding === 'RLE') {
      // The RLE/bit-packed hybrid at width 1 after a 4-byte length (hyparquet-writer writes booleans so).
      const present = presentCount(p);
      const held = ledger.transient(present);
      try {
        const bits = new Uint8Array(present);
        const r = { view: new DataView(src.buffer, src.byteOffset, src.byteLength), offset: p.valuesAt };
        readRleBitPackedHybrid(r, 1, bits);
        let k = 0;
        for (let i = 0; i < to; i++) {
          if (defs !== undefined && defs[i] !== 1) continue;
          const bit = (bits[k++] as number) & 1;
          if (i >= from) values[at + i] = bit;
        }
      } finally {
        ledger.giveBack(held);
      }
    } else if (p.encoding === 'PLAIN') {
      const valuesAt = p.valuesAt;
      let bit = 0;
      for (let i = 0; i < to; i++) {
        if (defs !== undefined && defs[i] !== 1) continue;
        const byte = valuesAt + (bit >> 3);
        if (byte >= src.length) throw new Error('page too short for its values');
        if (i >= from) values[at + i] = ((src[byte] as number) >> (bit & 7)) & 1;
        bit++;
      }
    } else throw new UnsupportedChunk(`encoding ${p.encoding}`);
  };
  walkRows(chunk, meta, optional, ledger, numRows, 'BOOLEAN', onData, rows);
  return new BooleanVector(values);
}

/**
 * True when every page of the flat string chunk is a PLAIN data page (v1, or v2 without repetition levels) and there
 * is no dictionary page: what {@link searchPlainChunk} reads. Headers only; nothing is decompressed. A chunk it
 * cannot walk is `false` (the ordinary decode then reports or falls back as it always did).
 */
export function plainOnlyChunk(chunk: Uint8Array, meta: ColumnMetaData): boolean {
  if (meta.dictionary_page_offset !== undefined) return false;
  if (meta.encodings.some((e) => e === 'RLE_DICTIONARY' || e === 'PLAIN_DICTIONARY')) return false;
  try {
    const reader = { view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength), offset: 0 };
    let pages = 0;
    while (reader.offset < chunk.length) {
      const header = parquetHeader(reader);
      reader.offset += header.compressed_page_size;
      if (reader.offset > chunk.length) return false;
      if (header.type === 'DATA_PAGE') {
        if (header.data_page_header?.encoding !== 'PLAIN') return false;
      } else if (header.type === 'DATA_PAGE_V2') {
        const h = header.data_page_header_v2;
        if (h?.encoding !== 'PLAIN' || h.repetition_levels_byte_length !== 0) return false;
      } else if (header.type !== 'INDEX_PAGE') return false;
      if (++pages >= 0xffff) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Searches a PLAIN string chunk ({@link plainOnlyChunk}) of `numRows` rows page by page, without keeping a page:
 * each data page is decompressed into the decoder's own memory, laid out as a one-page {@link PlainStringVector}
 * and handed to `onPage` with the group row of its first value, then dropped. Pages wholly outside `rows` are
 * skipped undecompressed (their rows are left to the caller as misses). Each page's bytes and per-row layout are
 * reserved while it is searched.
 */
export function searchPlainChunk(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  element: SchemaElement,
  numRows: number,
  reserve: DecodeReserve,
  onPage: (page: PlainStringVector, firstRow: number) => void,
  rows?: RowRange,
): void {
  if (Number(meta.num_values) !== numRows) throw new Error('value count differs from row count');
  const ledger = new Ledger(reserve);
  let row = 0;
  walkPages(
    chunk,
    meta,
    element.repetition_type === 'OPTIONAL',
    ledger,
    false,
    () => {
      throw new Error('dictionary page in a PLAIN chunk');
    },
    (p) => {
      if (p.encoding !== 'PLAIN') throw new Error(`encoding ${p.encoding} in a PLAIN chunk`);
      const n = p.numValues;
      if (row + n > numRows) throw new Error('more values than rows');
      const layout = ledger.transient(n * 10);
      try {
        const b = p.bytes;
        const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
        const starts = new Int32Array(n);
        const lens = new Int32Array(n);
        let off = p.valuesAt;
        const defs = p.defs;
        for (let r = 0; r < n; r++) {
          if (defs !== undefined && defs[r] !== 1) {
            lens[r] = -1;
            starts[r] = off;
            continue;
          }
          if (off + 4 > b.length) throw new Error('page too short for its values');
          const len = v.getUint32(off, true);
          off += 4;
          if (len > b.length - off) throw new Error('value past the end of its page');
          starts[r] = off;
          lens[r] = len;
          off += len;
        }
        const page = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
        onPage(new PlainStringVector([page], new Uint16Array(n), starts, lens, Int32Array.of(0, n)), row);
      } finally {
        ledger.giveBack(layout);
      }
      row += n;
    },
    rows,
    (n) => {
      if (row + n > numRows) throw new Error('more values than rows');
      row += n;
    },
    true,
  );
  if (row !== numRows) throw new Error('fewer values than rows');
}
