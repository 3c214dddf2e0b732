/**
 * @module search-only
 * A string column that a query only byte-searches (docs/design/query-engine.md, "Search without keeping pages"):
 * an aggregation whose predicate uses the body only through `contains` / `starts_with` / `ends_with` needs each
 * row's hit, never the text. The column keeps its chunk as stored (compressed) and searches it page by page when
 * the predicate binds, each page decompressed into the decoder's own memory and dropped: no page buffers, no
 * per-row start and length arrays for the whole group. The hits are what {@link searchRows} gives over the whole
 * decoded column: each page is searched by that same code.
 */
import type { ColumnMetaData, SchemaElement } from 'hyparquet';
import type { ByteStringFn } from './byte-search.js';
import { searchRows } from './byte-search.js';
import type { DecodeReserve, RowRange } from './page-decoder.js';
import { searchPlainChunk } from './page-decoder.js';
import { RowVector } from './string-vector.js';

/** A PLAIN string chunk read only through {@link SearchOnlyStrings.search}. */
export class SearchOnlyStrings extends RowVector {
  constructor(
    /** The group's row count. */
    readonly length: number,
    private readonly chunk: Uint8Array,
    private readonly meta: ColumnMetaData,
    private readonly element: SchemaElement,
    private readonly reserve: DecodeReserve,
    private readonly rows: RowRange | undefined,
    /** What a failure while searching means (the scan's classification: a damaged file, or an abort as it is). */
    private readonly classify: (e: unknown) => unknown,
  ) {
    super();
  }

  /** Never called: the plan makes a column search-only only when nothing reads its values. */
  get(): never {
    throw new Error('a search-only column was read row by row');
  }

  /** `1` for each row whose value matches, `0` for a miss, a NULL or a row of a skipped page. */
  search(fn: ByteStringFn, needle: Buffer): Uint8Array {
    const hits = new Uint8Array(this.length);
    try {
      searchPlainChunk(
        this.chunk,
        this.meta,
        this.element,
        this.length,
        this.reserve,
        (page, firstRow) => hits.set(searchRows(page, fn, needle), firstRow),
        this.rows,
      );
    } catch (e) {
      throw this.classify(e);
    }
    return hits;
  }
}
