/**
 * @module parquet-reader
 * Row-group-at-a-time Parquet reading over a {@link ByteRangeSource} (hyparquet + zstd-wasm). Opening reads only
 * the footer; {@link ParquetFileHandle.readRowGroup} fetches and decodes one row group's projected column chunks.
 * The whole file is never requested in one call (hyparquet's `parquetRead` without a row range would prefetch
 * every row group; this module always passes one group's range).
 */
import { parquetMetadataAsync, parquetRead } from 'hyparquet';
import type { AsyncBuffer, FileMetaData } from 'hyparquet';
import type { ByteRangeSource } from './byte-range-source.js';
import { countingSource } from './byte-range-source.js';
import { ensureZstd, zstdDecompress } from './zstd.js';

/** Footer facts about one top-level column within one row group (leaves of nested columns are summed). */
export interface ColumnChunkInfo {
  readonly name: string;
  /** Sum of `total_uncompressed_size` over the column's leaf chunks. */
  readonly uncompressedBytes: number;
  readonly compressedBytes: number;
  /** Statistics min/max (primitive columns only; bigint for INT64 columns, exact). */
  readonly min?: unknown;
  readonly max?: unknown;
  readonly nullCount?: number;
}

/** One row group as described by the footer. */
export interface RowGroupInfo {
  readonly index: number;
  readonly numRows: number;
  /** Row number of the group's first row within the file. */
  readonly rowStart: number;
  readonly columns: readonly ColumnChunkInfo[];
}

/** Decoded values of one column for one row group (typed arrays for required numeric columns). */
export type ColumnValues = ArrayLike<unknown>;

/** An opened Parquet file. */
export interface ParquetFileHandle {
  readonly byteLength: number;
  readonly numRows: number;
  readonly metadata: FileMetaData;
  readonly rowGroups: readonly RowGroupInfo[];
  /** Top-level column names in file order. */
  readonly columnNames: readonly string[];
  /** Bytes fetched from the source so far (footer included). */
  readonly bytesRead: number;
  /** Range requests made so far. */
  readonly requests: number;
  /** Footer `uncompressedBytes` of the given columns in one row group. */
  uncompressedBytes(index: number, columns: readonly string[]): number;
  /**
   * Upper estimate of the JS memory that `readRowGroup(index, columns)` will retain: what to reserve before
   * decoding. See {@link estimateDecodedBytes}.
   */
  estimateDecodedBytes(index: number, columns: readonly string[]): number;
  /**
   * Decodes the given columns of row group `index`. Unknown column names are an error. With `rows` (offsets within
   * the group, end exclusive) only that slice is returned, and pages wholly before it are skipped undecoded: a
   * large group can be read in bounded slices.
   */
  readRowGroup(
    index: number,
    columns: readonly string[],
    rows?: { readonly start: number; readonly end: number },
  ): Promise<Record<string, ColumnValues>>;
  /**
   * Reads `length` bytes at `offset` (counted in {@link bytesRead}): how bloom filters and body sketches are
   * fetched (packages/storage/src/sketch/group-filters.ts).
   */
  readBytes(offset: number, length: number): Promise<Uint8Array>;
}

/** One leaf column chunk as the footer describes it (input to {@link estimateDecodedBytes}). */
export interface LeafChunkInfo {
  readonly path: readonly string[];
  readonly type: string;
  readonly numValues: number;
  readonly uncompressedBytes: number;
}

/**
 * Upper estimate of the retained JS size of decoded leaf chunks (hyparquet values in the V8 heap plus typed-array
 * backing stores). A constant factor × `total_uncompressed_size` does not work: dictionary/RLE-encoded columns
 * decode to 10–10,000× their encoded size (one array slot per row regardless of encoding), while plain strings
 * decode to ~1.1–1.3×. Measured per row on 64k realistic rows (bench/parquet-bench.ts): strings 9–202 B, INT64
 * (bigint) 32–39 B, INT32/FLOAT/BOOLEAN 8–24 B, 16-byte ids 99 B, `params` (list<struct>, 2 per row) 361 B.
 * The constants below cover those with margin:
 * - BYTE_ARRAY: 1.5 × uncompressed + 16 B per value; INT64/INT96: 48 B per value; other scalars: 32 B per value;
 *   FIXED_LEN_BYTE_ARRAY: uncompressed + 128 B per value;
 * - leaves of nested columns: + 64 B per value (struct objects) and the column + 64 B per row (list arrays).
 */
export function estimateDecodedBytes(leaves: readonly LeafChunkInfo[], numRows: number): number {
  let total = 0;
  const nestedColumns = new Set<string>();
  for (const l of leaves) {
    const n = l.numValues;
    if (l.type === 'BYTE_ARRAY') total += 1.5 * l.uncompressedBytes + 16 * n;
    else if (l.type === 'INT64' || l.type === 'INT96') total += 48 * n;
    else if (l.type === 'FIXED_LEN_BYTE_ARRAY') total += l.uncompressedBytes + 128 * n;
    else total += 32 * n;
    if (l.path.length > 1) {
      total += 64 * n;
      nestedColumns.add(l.path[0] ?? '');
    }
  }
  return Math.ceil(total + nestedColumns.size * 64 * numRows);
}

/** Options for {@link openParquetFile}. */
export interface OpenParquetOptions {
  /** Bytes requested from the end of the file for the footer (a second request follows if it is larger). */
  readonly footerFetchBytes?: number;
  /**
   * The file's footer, parsed by an earlier open of the same immutable file (a worker's footer cache): nothing is
   * fetched to open, so `bytesRead` counts only row-group bytes.
   */
  readonly metadata?: FileMetaData;
}

/** Nanosecond timestamps stay raw int64 `bigint`s (hyparquet would make lossy Dates). */
const PARSERS = {
  timestampFromNanoseconds: (nanos: bigint): unknown => nanos,
};

function toArrayBuffer(u: Uint8Array): ArrayBuffer {
  if (u.byteOffset === 0 && u.byteLength === u.buffer.byteLength && u.buffer instanceof ArrayBuffer) return u.buffer;
  return u.slice().buffer as ArrayBuffer;
}

function concatChunks(
  chunks: { rowStart: number; data: ArrayLike<unknown> }[],
  start: number,
  end: number,
): ColumnValues {
  chunks.sort((a, b) => a.rowStart - b.rowStart);
  const only = chunks[0];
  if (chunks.length === 1 && only !== undefined && only.rowStart === start && only.data.length === end - start)
    return only.data;
  const out = new Array<unknown>(end - start);
  for (const { rowStart, data } of chunks) {
    for (let i = 0; i < data.length; i++) {
      const row = rowStart + i;
      if (row >= start && row < end) out[row - start] = data[i];
    }
  }
  return out;
}

/**
 * Opens a Parquet file by reading its footer only.
 *
 * @example
 * const file = await openParquetFile(sourceFromStore(store, key, size));
 * for (const g of file.rowGroups) {
 *   const cols = await file.readRowGroup(g.index, ['time_unix_nano', 'body']);
 * }
 */
export async function openParquetFile(
  source: ByteRangeSource,
  options?: OpenParquetOptions,
): Promise<ParquetFileHandle> {
  await ensureZstd();
  const counted = countingSource(source);
  const file: AsyncBuffer = {
    byteLength: counted.byteLength,
    slice: async (start: number, end?: number) => toArrayBuffer(await counted.read(start, end ?? counted.byteLength)),
  };
  const metadata =
    options?.metadata ??
    (await parquetMetadataAsync(file, {
      parsers: PARSERS,
      initialFetchSize: options?.footerFetchBytes ?? 16 * 1024,
    }));
  const columnNames = metadata.schema.slice(1).reduce<{ names: string[]; skip: number }>(
    (acc, el) => {
      // Top-level columns are the root's direct children: walk the flattened tree skipping descendants.
      if (acc.skip > 0) acc.skip += (el.num_children ?? 0) - 1;
      else {
        acc.names.push(el.name);
        acc.skip = el.num_children ?? 0;
      }
      return acc;
    },
    { names: [], skip: 0 },
  ).names;
  let rowStart = 0;
  const leavesByGroup: LeafChunkInfo[][] = metadata.row_groups.map((rg) =>
    rg.columns.flatMap((chunk) => {
      const md = chunk.meta_data;
      return md === undefined
        ? []
        : [
            {
              path: md.path_in_schema,
              type: md.type,
              numValues: Number(md.num_values),
              uncompressedBytes: Number(md.total_uncompressed_size),
            },
          ];
    }),
  );
  const rowGroups: RowGroupInfo[] = metadata.row_groups.map((rg, index) => {
    const byName = new Map<
      string,
      {
        u: number;
        c: number;
        leaves: number;
        stats?: NonNullable<NonNullable<(typeof rg.columns)[number]['meta_data']>['statistics']>;
      }
    >();
    for (const chunk of rg.columns) {
      const md = chunk.meta_data;
      if (md === undefined) continue;
      const name = md.path_in_schema[0] ?? '';
      const e = byName.get(name) ?? { u: 0, c: 0, leaves: 0 };
      e.u += Number(md.total_uncompressed_size);
      e.c += Number(md.total_compressed_size);
      e.leaves++;
      if (md.path_in_schema.length === 1 && md.statistics !== undefined) e.stats = md.statistics;
      byName.set(name, e);
    }
    const columns: ColumnChunkInfo[] = [...byName].map(([name, e]) => {
      const s = e.stats;
      const min = s?.min_value ?? s?.min;
      const max = s?.max_value ?? s?.max;
      return {
        name,
        uncompressedBytes: e.u,
        compressedBytes: e.c,
        ...(min !== undefined ? { min } : {}),
        ...(max !== undefined ? { max } : {}),
        ...(s?.null_count !== undefined ? { nullCount: Number(s.null_count) } : {}),
      };
    });
    const info = { index, numRows: Number(rg.num_rows), rowStart, columns };
    rowStart += info.numRows;
    return info;
  });
  const known = new Set(columnNames);

  return {
    byteLength: source.byteLength,
    numRows: Number(metadata.num_rows),
    metadata,
    rowGroups,
    columnNames,
    get bytesRead() {
      return counted.bytesRead;
    },
    get requests() {
      return counted.requests;
    },
    uncompressedBytes(index, columns) {
      const g = rowGroups[index];
      if (g === undefined) throw new RangeError(`no row group ${index}`);
      const want = new Set(columns);
      return g.columns.reduce((sum, c) => (want.has(c.name) ? sum + c.uncompressedBytes : sum), 0);
    },
    estimateDecodedBytes(index, columns) {
      const g = rowGroups[index];
      if (g === undefined) throw new RangeError(`no row group ${index}`);
      const want = new Set(columns);
      return estimateDecodedBytes(
        (leavesByGroup[index] ?? []).filter((l) => want.has(l.path[0] ?? '')),
        g.numRows,
      );
    },
    async readBytes(offset, length) {
      if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0)
        throw new RangeError(`byte range ${offset}+${length}`);
      if (offset + length > counted.byteLength)
        throw new RangeError(`byte range ${offset}+${length} outside a file of ${counted.byteLength} bytes`);
      return counted.read(offset, offset + length);
    },
    async readRowGroup(index, columns, rows) {
      const g = rowGroups[index];
      if (g === undefined) throw new RangeError(`no row group ${index}`);
      for (const c of columns) if (!known.has(c)) throw new Error(`unknown column ${JSON.stringify(c)}`);
      const start = g.rowStart + (rows?.start ?? 0);
      const end = g.rowStart + (rows?.end ?? g.numRows);
      if (
        rows !== undefined &&
        !(
          Number.isInteger(rows.start) &&
          Number.isInteger(rows.end) &&
          0 <= rows.start &&
          rows.start < rows.end &&
          rows.end <= g.numRows
        )
      ) {
        throw new RangeError(`row slice [${rows.start}, ${rows.end}) outside row group ${index} of ${g.numRows} rows`);
      }
      const out: Record<string, ColumnValues> = {};
      if (columns.length === 0) return out;
      const chunks = new Map<string, { rowStart: number; data: ArrayLike<unknown> }[]>();
      await parquetRead({
        file,
        metadata,
        columns: [...columns],
        rowStart: start,
        rowEnd: end,
        compressors: { ZSTD: zstdDecompress },
        parsers: PARSERS,
        onChunk: (chunk) => {
          const list = chunks.get(chunk.columnName) ?? [];
          list.push({ rowStart: chunk.rowStart, data: chunk.columnData });
          chunks.set(chunk.columnName, list);
        },
      });
      for (const c of columns) {
        out[c] = concatChunks(chunks.get(c) ?? [], start, end);
      }
      return out;
    },
  };
}
