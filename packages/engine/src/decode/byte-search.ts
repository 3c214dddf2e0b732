/**
 * @module byte-search
 * `contains` / `starts_with` / `ends_with` over a {@link PlainStringVector}'s raw UTF-8 pages, with no string per
 * row (docs/design/query-engine.md, "String functions on bytes"). For a needle that is well-formed UTF-16 and
 * holds neither U+FFFD nor U+FEFF, a byte match inside a value is exactly a match in the string hyparquet would
 * decode: a valid UTF-8 sequence starts at a lead byte, and the WHATWG decoder never folds a lead byte into a
 * preceding invalid sequence, so decoding neither creates nor destroys an occurrence. The two characters left out
 * are the decoder's own products (the replacement character, the BOM it drops at the start), and such needles
 * take the string path.
 */
import type { PlainStringVector } from './string-vector.js';

/** A string function the byte path evaluates. */
export type ByteStringFn = 'contains' | 'starts_with' | 'ends_with';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The needle's UTF-8 bytes when the byte path gives the string path's answers, else `undefined`. */
export function byteNeedle(needle: string): Buffer | undefined {
  if (LONE_SURROGATE.test(needle) || needle.includes('\uFFFD') || needle.includes('\uFEFF')) return undefined;
  return Buffer.from(needle, 'utf8');
}

/** `1` for each row whose value matches, `0` for a miss or NULL. */
export function searchRows(vec: PlainStringVector, fn: ByteStringFn, needle: Buffer): Uint8Array {
  const hits = new Uint8Array(vec.length);
  if (fn === 'contains' && needle.length > 0) containsRows(vec, needle, hits);
  else {
    const { pages, page, starts, lens } = vec;
    const n = needle.length;
    for (let i = 0; i < vec.length; i++) {
      const len = lens[i] as number;
      if (len < 0) continue;
      if (n === 0) {
        hits[i] = 1;
        continue;
      }
      const p = pages[page[i] as number] as Buffer;
      let s = starts[i] as number;
      let l = len;
      // The decoder drops one leading BOM, so the string starts after it.
      if (l >= 3 && p[s] === 0xef && p[s + 1] === 0xbb && p[s + 2] === 0xbf) {
        s += 3;
        l -= 3;
      }
      if (l < n) continue;
      const at = fn === 'starts_with' ? s : s + l - n;
      if (p.compare(needle, 0, n, at, at + n) === 0) hits[i] = 1;
    }
  }
  return hits;
}

/**
 * One `indexOf` sweep per page. A hit is attributed to the last non-NULL row starting at or before it; if it lies
 * wholly inside that row's value the row matches, and either way no later hit can match that row (a later start
 * inside it would end even further past its end), so the sweep resumes at the next row's first byte.
 */
function containsRows(vec: PlainStringVector, needle: Buffer, hits: Uint8Array): void {
  const { pages, starts, lens, pageRows } = vec;
  const n = needle.length;
  const nextPresent = (r: number, end: number): number => {
    let k = r;
    while (k < end && (lens[k] as number) < 0) k++;
    return k;
  };
  for (let pi = 0; pi < pages.length; pi++) {
    const p = pages[pi] as Buffer;
    const endRow = pageRows[pi + 1] as number;
    let row = nextPresent(pageRows[pi] as number, endRow);
    while (row < endRow) {
      const h = p.indexOf(needle, starts[row] as number);
      if (h < 0) break;
      for (;;) {
        const next = nextPresent(row + 1, endRow);
        if (next < endRow && (starts[next] as number) <= h) row = next;
        else break;
      }
      const s = starts[row] as number;
      if (h >= s && h + n <= s + (lens[row] as number)) hits[row] = 1;
      row = nextPresent(row + 1, endRow);
    }
  }
}
