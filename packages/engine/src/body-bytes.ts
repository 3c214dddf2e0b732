/**
 * @module body-bytes
 * The derived field `body_bytes`: the size in UTF-8 bytes of a record's body as the DSL's `body` reads it (a string
 * body's text, a structured body's stored JSON; 0 for an absent body), for `sum|min|max|avg(body_bytes)`
 * (packages/query/README.md, "Derived fields"; docs/design/query-engine.md, "Derived fields"). It is read from the
 * decoded column without making a string per row: a PLAIN vector already holds each row's byte length, and a
 * dictionary's entries are measured once.
 */
import { DictStringVector, PlainStringVector, cellReader, type ColumnData } from './decode/string-vector.js';

/** A leading byte-order mark, which the UTF-8 decoder drops from the text (string-vector.ts). */
const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * A per-row reader of `body_bytes` over one row group's decoded `body` column. Every decoder gives the same
 * figure: the byte length of the text the hyparquet path decodes, so a stored leading BOM is not counted.
 */
export function bodyBytesReader(c: ColumnData | undefined): (i: number) => number {
  if (c instanceof PlainStringVector) {
    const { lens, starts, pages, page } = c;
    return (i) => {
      const n = lens[i] as number;
      if (n < 3) return n < 0 ? 0 : n;
      const p = pages[page[i] as number] as Buffer;
      const s = starts[i] as number;
      return p[s] === BOM[0] && p[s + 1] === BOM[1] && p[s + 2] === BOM[2] ? n - 3 : n;
    };
  }
  if (c instanceof DictStringVector) {
    const sizes = new Float64Array(c.dict.length);
    for (let k = 0; k < c.dict.length; k++) sizes[k] = Buffer.byteLength(c.dict[k] as string, 'utf8');
    const { indices } = c;
    return (i) => {
      const k = indices[i] as number;
      return k < 0 ? 0 : (sizes[k] as number);
    };
  }
  const at = cellReader(c);
  return (i) => {
    const v = at(i);
    return typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0;
  };
}
