/**
 * @module columnar/columnar-logs-writer
 * The columnar data-file encoder: same schema, column order, row-group size, statistics and footer key-value
 * metadata as the hyparquet-writer path (packages/storage/src/log-parquet-writer.ts), but written from typed
 * arrays and byte buffers with dictionary pages for low-cardinality strings, one ZSTD frame per page
 * (docs/design/storage-format.md, "Columnar encoder"). After each row group's chunks it writes that group's
 * filters — bloom filters of its trace and span ids and an n-gram sketch of its bodies ("Row-group filters");
 * files that ask for Parquet bloom filters (`bloomFilterColumns`) stay on hyparquet-writer.
 */
import type { LogsParquetOptions, StoredLogRow } from '../log-parquet-writer.js';
import { DEFAULT_ROW_GROUP_ROWS } from '../log-row-fields.js';
import { LOG_COLUMNS, SCHEMA_VERSION, SCHEMA_VERSION_KEY, logSchema } from '../parquet-schema.js';
import { ensureZstd, zstdCompress } from '../zstd.js';
import { ByteSink } from './byte-sink.js';
import type { FileSink } from './chunk-writer.js';
import { writeColumnChunk } from './chunk-writer.js';
import { JsonMemo, logRowGroupLeaves, rowGroupLeaves } from './log-row-group.js';
import type { LeafColumn } from './leaf-column.js';
import type { LogRowBuffer } from './log-row-buffer.js';
import type { ChunkIndexRanges, RowGroupMeta } from './parquet-footer.js';
import { columnIndexBytes, footerBytes, offsetIndexBytes } from './parquet-footer.js';
import { PAGE_TARGET_BYTES } from './chunk-writer.js';
import { compareInt64Le } from './fixed-width-values.js';
import { buildBodyNgramSketch } from '../sketch/body-ngram-sketch.js';
import { bloomWordsBytes, buildColumnBloom } from '../sketch/column-bloom.js';
import { FILTERS_KEY, encodeFilterIndex, type GroupFilters } from '../sketch/filter-index.js';

const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // "PAR1"

/** The output file as a list of parts (no copy until {@link ChunkList.concat}). */
class ChunkList implements FileSink {
  offset = 0;
  private readonly parts: Uint8Array[] = [];
  append(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.offset += bytes.length;
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.offset);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** Incremental columnar data-file writer (the same call shape as `LogsParquetWriter`). */
export interface ColumnarLogsWriter {
  readonly rowGroupRows: number;
  /** Rows written so far. */
  readonly rows: number;
  /** Appends one row group (1..rowGroupRows rows; an empty call is a no-op). */
  writeRowGroup(rows: readonly StoredLogRow[]): void;
  /** Appends rows `order[from, to)` of `buffer` as one row group (1..rowGroupRows rows), in that order. */
  writeBufferedRowGroup(buffer: LogRowBuffer, order: Int32Array, from: number, to: number): void;
  /** Writes the footer and returns the whole file. */
  finish(): Uint8Array;
}

/**
 * A columnar writer with ZSTD ready. Refuses `bloomFilterColumns` (a caller bug: the writer factory routes
 * those files to hyparquet-writer).
 */
export async function createColumnarLogsWriter(options?: LogsParquetOptions): Promise<ColumnarLogsWriter> {
  await ensureZstd();
  const rowGroupRows = options?.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  const pageTargetBytes = options?.pageTargetBytes ?? PAGE_TARGET_BYTES;
  if (!Number.isSafeInteger(pageTargetBytes) || pageTargetBytes < 1)
    throw new RangeError(`pageTargetBytes must be ≥ 1, got ${pageTargetBytes}`);
  if (!Number.isSafeInteger(rowGroupRows) || rowGroupRows < 1)
    throw new RangeError(`rowGroupRows must be ≥ 1, got ${rowGroupRows}`);
  if ((options?.bloomFilterColumns?.length ?? 0) > 0)
    throw new RangeError('columnar encoder: bloom filters are written by the hyparquet-writer path');
  const kv = [
    { key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION },
    ...(options?.keyValueMetadata ?? []).map((m) => ({ key: m.key, value: m.value })),
  ];
  const file = new ChunkList();
  file.append(MAGIC);
  const memo = new JsonMemo();
  const scratch = new ByteSink(1 << 16);
  const groups: RowGroupMeta[] = [];
  const sketches = options?.sketches ?? true;
  const groupFilters: GroupFilters[] = [];
  let rows = 0;
  let finished = false;
  /** Writes one row group's chunks, then its filters. */
  function writeLeaves(leaves: LeafColumn[], numRows: number): void {
    const fileOffset = file.offset;
    const columns = leaves.map((leaf) => writeColumnChunk(leaf, file, zstdCompress, scratch, pageTargetBytes));
    if (sketches) {
      // Filters follow the group's chunks; the footer's filter index names where (readers never assume).
      const filters: GroupFilters = {};
      for (const leaf of leaves) {
        const input = leaf.sketchInput;
        if (input === undefined) continue;
        const words =
          input.kind === 'fixed'
            ? buildColumnBloom(input.bytes, input.width, input.count)
            : buildBodyNgramSketch(input.data, input.starts, input.count);
        if (words === null) continue;
        const kind =
          leaf.path[0] === LOG_COLUMNS.traceId ? 'trace_id' : leaf.path[0] === LOG_COLUMNS.spanId ? 'span_id' : 'body';
        filters[kind] = { offset: file.offset, length: words.length * 4 };
        file.append(bloomWordsBytes(words));
      }
      groupFilters.push(filters);
    }
    groups.push({ columns, numRows, fileOffset });
    rows += numRows;
  }

  return {
    rowGroupRows,
    get rows() {
      return rows;
    },
    writeRowGroup(batch) {
      if (finished) throw new Error('ColumnarLogsWriter: already finished');
      if (batch.length === 0) return;
      if (batch.length > rowGroupRows)
        throw new RangeError(`row group of ${batch.length} rows exceeds ${rowGroupRows}`);
      writeLeaves(logRowGroupLeaves(batch, memo), batch.length);
    },
    writeBufferedRowGroup(buffer, order, from, to) {
      if (finished) throw new Error('ColumnarLogsWriter: already finished');
      if (to === from) return;
      if (to - from > rowGroupRows) throw new RangeError(`row group of ${to - from} rows exceeds ${rowGroupRows}`);
      writeLeaves(rowGroupLeaves(buffer.rowGroup(order, from, to)), to - from);
    },
    finish() {
      if (finished) throw new Error('ColumnarLogsWriter: already finished');
      finished = true;
      if (sketches && groupFilters.some((g) => Object.keys(g).length > 0))
        kv.push({ key: FILTERS_KEY, value: encodeFilterIndex(groupFilters) });
      const footer = footerBytes({
        schema: logSchema(),
        numRows: rows,
        rowGroups: groups,
        keyValueMetadata: kv,
        createdBy: 'sluice',
        indexes: writePageIndex(groups, file),
      });
      file.append(footer);
      const tail = new Uint8Array(8);
      new DataView(tail.buffer).setUint32(0, footer.length, true);
      tail.set(MAGIC, 4);
      file.append(tail);
      return file.concat();
    },
  };
}

/**
 * Writes the page index after the last row group, as parquet-format lays it out: every column index (only the
 * effective time has one), then every offset index (every chunk). Returns where each chunk's went.
 */
function writePageIndex(groups: readonly RowGroupMeta[], file: FileSink): ChunkIndexRanges[][] {
  const ranges = groups.map((g) => g.columns.map((): ChunkIndexRanges => ({})));
  const put = (bytes: Uint8Array): { offset: number; length: number } => {
    const at = { offset: file.offset, length: bytes.length };
    file.append(bytes);
    return at;
  };
  groups.forEach((g, gi) =>
    g.columns.forEach((c, ci) => {
      if (c.pageBounds === undefined) return;
      ranges[gi]![ci] = { columnIndex: put(columnIndexBytes(c.pageBounds, compareInt64Le)) };
    }),
  );
  groups.forEach((g, gi) =>
    g.columns.forEach((c, ci) => {
      if (c.pages === undefined) return;
      ranges[gi]![ci] = { ...ranges[gi]![ci], offsetIndex: put(offsetIndexBytes(c.pages)) };
    }),
  );
  return ranges;
}

/** Encodes rows (already sorted by the caller) into one data file with the columnar encoder. */
export async function encodeLogsParquetColumnar(
  rows: readonly StoredLogRow[],
  options?: LogsParquetOptions,
): Promise<Uint8Array> {
  const w = await createColumnarLogsWriter(options);
  for (let i = 0; i < rows.length; i += w.rowGroupRows) w.writeRowGroup(rows.slice(i, i + w.rowGroupRows));
  return w.finish();
}

/**
 * Encodes a partition's buffered rows into one data file with the columnar encoder, in `order` (default
 * {@link LogRowBuffer.sortedOrder}: effective time, equal times in arrival order): the same bytes as
 * {@link encodeLogsParquetColumnar} of the same rows in that order.
 */
export async function encodeLogRowBuffer(
  buffer: LogRowBuffer,
  options?: LogsParquetOptions,
  order: Int32Array = buffer.sortedOrder(),
): Promise<Uint8Array> {
  const w = await createColumnarLogsWriter(options);
  for (let i = 0; i < order.length; i += w.rowGroupRows)
    w.writeBufferedRowGroup(buffer, order, i, Math.min(order.length, i + w.rowGroupRows));
  return w.finish();
}
