/**
 * @module columnar/leaf-column
 * What the chunk writer needs from one leaf column of one row group: its levels, its non-null values (as a
 * page-sliceable encoder) and its statistics. Builders in this folder produce these from typed arrays and byte
 * buffers; nothing here holds a JS object per value.
 */
import type { ByteSink } from './byte-sink.js';
import type { ChunkStatistics } from './parquet-footer.js';

/** Non-null values of one chunk, written a page slice at a time. */
export interface ValueEncoder {
  /** Parquet encoding of data-page values (PLAIN or RLE_DICTIONARY). */
  readonly encoding: number;
  /** PLAIN dictionary page body and its entry count, for dictionary-encoded chunks. */
  readonly dictionary?: { readonly bytes: Uint8Array; readonly count: number };
  /** Encoded bytes of value `v` (page sizing; an estimate is fine for dictionary indices). */
  sizeOf(v: number): number;
  /** Appends values `[v0, v1)`. */
  write(v0: number, v1: number, out: ByteSink): void;
}

/** One leaf column of one row group. */
export interface LeafColumn {
  readonly path: readonly string[];
  readonly physicalType: number;
  readonly maxDefinitionLevel: number;
  readonly maxRepetitionLevel: number;
  /** Level count (= rows for flat columns). */
  readonly numLevels: number;
  /** Definition levels, or null when the column is REQUIRED and flat. */
  readonly definitionLevels: Uint8Array | null;
  /** Repetition levels, or null for flat columns. */
  readonly repetitionLevels: Uint8Array | null;
  readonly values: ValueEncoder;
  /** Footer statistics (omitted for free-text columns nobody prunes on). */
  readonly statistics?: ChunkStatistics;
  /** What the column's bloom filter or sketch is built from, for the columns that get one. */
  readonly sketchInput?: SketchInput;
  /**
   * Min/max of non-null values `[v0, v1)` in the column's statistics order, for the columns that get a page-level
   * column index (the effective time: docs/design/storage-format.md, "Page index").
   */
  readonly pageBounds?: (v0: number, v1: number) => { min: Uint8Array; max: Uint8Array } | undefined;
}

/**
 * The raw values a filter is built from: `fixed` (trace and span ids, `count` values of `width` bytes back to
 * back) gets a standard Parquet bloom filter; `text` (the body, PLAIN layout) gets the n-gram sketch.
 */
export type SketchInput =
  | { readonly kind: 'fixed'; readonly bytes: Uint8Array; readonly width: number; readonly count: number }
  | { readonly kind: 'text'; readonly data: Uint8Array; readonly starts: Int32Array; readonly count: number };
