/**
 * @module rle-hybrid
 * Parquet's RLE / bit-packed hybrid (definition levels, dictionary indices) read into a typed array, stopping at
 * the values asked for (docs/design/query-engine.md, "Columnar decode"). Against hyparquet's reader it fills an
 * RLE run with one `fill` instead of a store per value, and it never writes past `count`: a targeted read that
 * needs a page's first rows only asks for those, where hyparquet's reader would still walk every run to its end.
 * Same bytes, same values: widths above {@link MAX_HYBRID_WIDTH} go to hyparquet's reader.
 */
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';

/** Widest value this reader unpacks with 32-bit arithmetic (an index into a dictionary of 16 M entries). */
export const MAX_HYBRID_WIDTH = 24;

/**
 * Reads the first `count` values of the hybrid encoding at `src[at…]` (values of `width` bits) into `out`, and
 * returns the largest of them (0 when `count` is 0), so a dictionary index range check is one comparison.
 * A run that would read past the end of `src` is damage: it throws.
 */
export function readHybrid(
  src: Uint8Array,
  at: number,
  width: number,
  out: Int32Array | Uint8Array,
  count: number,
): number {
  if (count <= 0) return 0;
  if (width > MAX_HYBRID_WIDTH) {
    // Rare enough (dictionaries above 16 M entries) to pay hyparquet's full walk; it fills exactly `out`.
    const full = new Int32Array(count);
    readRleBitPackedHybrid(
      { view: new DataView(src.buffer, src.byteOffset, src.byteLength), offset: at },
      width,
      full,
      src.length - at,
    );
    out.set(full);
    let top = 0;
    for (let k = 0; k < count; k++) top = Math.max(top, full[k] as number);
    return top;
  }
  const end = src.length;
  const valueBytes = (width + 7) >> 3;
  let pos = at;
  let seen = 0;
  let top = 0;
  while (seen < count) {
    let header = 0;
    let shift = 0;
    let b: number;
    do {
      if (pos >= end) throw new Error('hybrid run header past the end of its page');
      b = src[pos++] as number;
      header += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    const runs = Math.floor(header / 2);
    if (header % 2 === 0) {
      // RLE: one value, little-endian in whole bytes, repeated `runs` times.
      if (pos + valueBytes > end) throw new Error('hybrid run value past the end of its page');
      let v = 0;
      for (let k = 0; k < valueBytes; k++) v += (src[pos++] as number) * 2 ** (8 * k);
      const take = Math.min(runs, count - seen);
      out.fill(v, seen, seen + take);
      if (take > 0 && v > top) top = v;
      seen += take;
      continue;
    }
    // Bit-packed: `runs` groups of 8 values (`width` bytes each), least significant bit first.
    const take = Math.min(runs * 8, count - seen);
    if (pos + Math.ceil((take * width) / 8) > end) throw new Error('bit-packed run past the end of its page');
    const top8 = unpackGroups(src, pos, end, width, out, seen, take);
    if (top8 > top) top = top8;
    seen += take;
    pos += runs * width; // the rest of this run's groups are skipped
  }
  return top;
}

/**
 * Unpacks `take` values of `width` bits from `src[pos…]` into `out[seen…]`; returns the largest. Whole groups of
 * eight values at widths up to 8 come from two 32-bit loads (a third of the per-value cost of reading byte by
 * byte); the rest, and wider values, byte by byte.
 */
function unpackGroups(
  src: Uint8Array,
  pos: number,
  end: number,
  width: number,
  out: Int32Array | Uint8Array,
  seen: number,
  take: number,
): number {
  const mask = (1 << width) - 1;
  const stop = seen + take;
  let k = seen;
  let top = 0;
  if (width <= 8) {
    // A group is `width` bytes; both words are read only while 8 bytes remain, so no load leaves the page.
    while (k + 8 <= stop && pos + 8 <= end) {
      const lo = src[pos]! | (src[pos + 1]! << 8) | (src[pos + 2]! << 16) | (src[pos + 3]! << 24);
      const hi = src[pos + 4]! | (src[pos + 5]! << 8) | (src[pos + 6]! << 16) | (src[pos + 7]! << 24);
      for (let b = 0, bit = 0; b < 8; b++, bit += width) {
        const v =
          bit + width <= 32
            ? (lo >>> bit) & mask
            : bit >= 32
              ? (hi >>> (bit - 32)) & mask
              : ((lo >>> bit) | (hi << (32 - bit))) & mask;
        out[k + b] = v;
        if (v > top) top = v;
      }
      k += 8;
      pos += width;
    }
  }
  let acc = 0;
  let bits = 0;
  while (k < stop) {
    while (bits < width) {
      acc |= src[pos++]! << bits; // bits < 24: the sum stays below 2^31
      bits += 8;
    }
    const v = acc & mask;
    out[k++] = v;
    if (v > top) top = v;
    acc >>>= width;
    bits -= width;
  }
  return top;
}
