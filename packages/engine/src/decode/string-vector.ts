/**
 * @module string-vector
 * A decoded UTF-8 column of one row group without one JS string per row (docs/design/query-engine.md, "Columnar
 * decode"): either a dictionary (decoded once) and one index per row, or the decompressed PLAIN pages kept as
 * they are with each row's page, start and length. A row's string is decoded only when something asks for it,
 * with the same `TextDecoder` semantics hyparquet uses, so both paths give the same text. Fixed-width ids keep one
 * buffer per row group ({@link FixedBytesVector}).
 */

/** hyparquet's decoder: UTF-8, replacement characters for invalid bytes, a leading BOM dropped. */
const TEXT = new TextDecoder();

/** Decodes UTF-8 bytes exactly as the hyparquet path does. */
export function decodeUtf8(bytes: Uint8Array): string {
  return TEXT.decode(bytes);
}

/** A decoded column read row by row through `get(i)` (`null` for a NULL row): strings, ids, booleans. */
export abstract class RowVector {
  abstract readonly length: number;
  abstract get(i: number): unknown;
}

/** Common base of the two string layouts; `get(i)` is `null` for a NULL row. */
export abstract class StringVector extends RowVector {
  abstract override get(i: number): string | null;
}

/** Dictionary layout: `indices[i]` is the dictionary entry of row `i`, `-1` for NULL. */
export class DictStringVector extends StringVector {
  readonly length: number;
  constructor(
    readonly dict: readonly string[],
    readonly indices: Int32Array,
  ) {
    super();
    this.length = indices.length;
  }
  get(i: number): string | null {
    const k = this.indices[i] ?? -1;
    return k < 0 ? null : (this.dict[k] ?? null);
  }
}

/**
 * PLAIN layout: row `i` is `pages[page[i]].subarray(starts[i], starts[i] + lens[i])`, `lens[i] === -1` for NULL.
 * Rows of one page are consecutive and their starts increase, which the byte search relies on.
 */
export class PlainStringVector extends StringVector {
  readonly length: number;
  constructor(
    readonly pages: readonly Buffer[],
    readonly page: Uint16Array,
    readonly starts: Int32Array,
    readonly lens: Int32Array,
    /** First row of each page, plus the row count at the end. */
    readonly pageRows: Int32Array,
  ) {
    super();
    this.length = lens.length;
  }
  get(i: number): string | null {
    const n = this.lens[i] ?? -1;
    if (n < 0) return null;
    const p = this.pages[this.page[i] ?? 0] as Buffer;
    const s = this.starts[i] as number;
    return TEXT.decode(p.subarray(s, s + n));
  }
}

/**
 * A FIXED_LEN_BYTE_ARRAY column (`trace_id`, `span_id`): row `i` is `bytes[i·width, (i+1)·width)` when
 * `present[i]` is 1, else NULL. One buffer for the whole row group instead of one `Uint8Array` per value.
 */
export class FixedBytesVector extends RowVector {
  readonly length: number;
  constructor(
    readonly width: number,
    readonly bytes: Uint8Array,
    readonly present: Uint8Array,
  ) {
    super();
    this.length = present.length;
  }
  /** Row `i`'s bytes (a view into the vector's buffer), `null` for NULL. */
  get(i: number): Uint8Array | null {
    if (this.present[i] !== 1) return null;
    const w = this.width;
    return this.bytes.subarray(i * w, i * w + w);
  }
}

/** A BOOLEAN column: `values[i]` is 0 (false), 1 (true) or 2 (NULL), one byte per row. */
export class BooleanVector extends RowVector {
  readonly length: number;
  constructor(readonly values: Uint8Array) {
    super();
    this.length = values.length;
  }
  get(i: number): boolean | null {
    const v = this.values[i];
    return v === 1 ? true : v === 0 ? false : null;
  }
}

/**
 * Rows `[base, base + inner.length)` of a row group, decoded alone (a targeted read's slice layout, see
 * docs/design/query-engine.md, "Targeted rendering"): `get(i)` takes a group row, any other row reads NULL. Only
 * row-by-row readers (rendering, sort keys) meet it; predicates and aggregation read whole-group layouts.
 */
export class RowSlice extends RowVector {
  constructor(
    readonly inner: ArrayLike<unknown> | RowVector,
    readonly base: number,
    /** The group's row count. */
    readonly length: number,
  ) {
    super();
  }
  get(i: number): unknown {
    const k = i - this.base;
    if (k < 0 || k >= this.inner.length) return null;
    const c = this.inner;
    return c instanceof RowVector ? c.get(k) : c[k];
  }
}

/** Any decoded column of one row group: an array-like of values, or a {@link RowVector}. */
export type ColumnData = ArrayLike<unknown> | RowVector;

/** Row `i` of a column (`undefined` for a column that was not read). */
export function cell(c: ColumnData | undefined, i: number): unknown {
  if (c === undefined) return undefined;
  return c instanceof RowVector ? c.get(i) : c[i];
}

/** A per-row accessor bound to one column, for hot loops. */
export function cellReader(c: ColumnData | undefined): (i: number) => unknown {
  if (c === undefined) return () => undefined;
  if (c instanceof RowVector) return (i) => c.get(i);
  return (i) => c[i];
}
