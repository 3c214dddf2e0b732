/**
 * @module columnar/chunk-writer
 * Writes one leaf column chunk: an optional dictionary page, then data pages (v1: repetition levels,
 * definition levels, values) of about {@link PAGE_TARGET_BYTES} each, every page ZSTD-compressed on its own.
 * Pages end on row boundaries so a reader never stitches a record across pages.
 */
import { ByteSink } from './byte-sink.js';
import type { LeafColumn } from './leaf-column.js';
import type { ChunkMeta, PageBounds, PageLocation } from './parquet-footer.js';
import { ENCODING, writeDataPageHeader, writeDictionaryPageHeader } from './parquet-footer.js';
import { writeLevelsV1 } from './rle-hybrid.js';

/**
 * Target uncompressed value bytes per data page: 128 KiB. The ZSTD wasm heap and a reader's per-page buffer stay
 * bounded by the page, not the chunk, and a targeted read (a `limit`, a window edge) decompresses and decodes
 * only the pages holding its rows, so a smaller page is less work per rendered row; below ~64 KiB per-page
 * overhead (a ZSTD frame, a header, hyparquet's per-page setup) starts to show (docs/design/storage-format.md).
 */
export const PAGE_TARGET_BYTES = 128 << 10;

/** Appends bytes to the file being written. */
export interface FileSink {
  /** Bytes written so far (the next write's offset). */
  readonly offset: number;
  append(bytes: Uint8Array): void;
}

/** Compresses one page body. */
export type PageCompressor = (input: Uint8Array) => Uint8Array;

/** Writes `col` as one column chunk and returns its footer metadata (with its page locations). */
export function writeColumnChunk(
  col: LeafColumn,
  file: FileSink,
  compress: PageCompressor,
  scratch: ByteSink,
  pageTargetBytes: number = PAGE_TARGET_BYTES,
): ChunkMeta {
  const header = new ByteSink(64);
  let uncompressed = 0;
  let compressed = 0;
  let dictionaryPageOffset: number | undefined;
  const dict = col.values.dictionary;
  if (dict !== undefined) {
    dictionaryPageOffset = file.offset;
    const body = compress(dict.bytes);
    header.reset();
    writeDictionaryPageHeader(header, {
      uncompressed: dict.bytes.length,
      compressed: body.length,
      numValues: dict.count,
    });
    file.append(header.toBytes());
    file.append(body);
    uncompressed += header.length + dict.bytes.length;
    compressed += header.length + body.length;
  }
  const dataPageOffset = file.offset;
  const defs = col.definitionLevels;
  const reps = col.repetitionLevels;
  const maxDef = col.maxDefinitionLevel;
  const n = col.numLevels;
  let l = 0;
  let v = 0;
  let row = 0;
  const pages: PageLocation[] = [];
  const bounds: PageBounds[] = [];
  do {
    const l0 = l;
    const v0 = v;
    const firstRow = row;
    let bytes = 0;
    // Consume whole rows until the page holds enough value bytes.
    while (l < n && bytes < pageTargetBytes) {
      do {
        if (defs === null || defs[l] === maxDef) bytes += col.values.sizeOf(v++);
        l++;
      } while (reps !== null && l < n && reps[l] !== 0);
      row++;
    }
    if (col.pageBounds !== undefined) bounds.push({ nullCount: l - l0 - (v - v0), ...col.pageBounds(v0, v) });
    scratch.reset();
    if (reps !== null) writeLevelsV1(reps, l0, l, col.maxRepetitionLevel, scratch);
    if (defs !== null) writeLevelsV1(defs, l0, l, maxDef, scratch);
    col.values.write(v0, v, scratch);
    const raw = scratch.contents();
    const body = compress(raw);
    header.reset();
    writeDataPageHeader(header, {
      uncompressed: raw.length,
      compressed: body.length,
      numValues: l - l0,
      encoding: col.values.encoding,
    });
    pages.push({ offset: file.offset, compressedPageSize: header.length + body.length, firstRowIndex: firstRow });
    file.append(header.toBytes());
    file.append(body);
    uncompressed += header.length + raw.length;
    compressed += header.length + body.length;
  } while (l < n);
  const encodings =
    dict !== undefined ? [ENCODING.PLAIN, ENCODING.RLE, ENCODING.RLE_DICTIONARY] : [ENCODING.PLAIN, ENCODING.RLE];
  return {
    type: col.physicalType,
    encodings,
    path: col.path,
    numValues: n,
    uncompressedBytes: uncompressed,
    compressedBytes: compressed,
    dataPageOffset,
    ...(dictionaryPageOffset !== undefined ? { dictionaryPageOffset } : {}),
    ...(col.statistics !== undefined ? { statistics: col.statistics } : {}),
    pages,
    ...(col.pageBounds !== undefined ? { pageBounds: bounds } : {}),
  };
}
