/**
 * @module columnar/rle-hybrid
 * Parquet's RLE / bit-packed hybrid encoding (definition and repetition levels, dictionary indices): runs of
 * ≥ 8 equal values become one RLE run, everything else is bit-packed in groups of 8 (at most 63 groups per run
 * so the header stays one byte). Values beyond `count` in the last group are zero padding; readers stop at the
 * page's value count.
 */
import type { ByteSink } from './byte-sink.js';

/** Bits needed for values in [0, max]. */
export function bitWidth(max: number): number {
  return max <= 0 ? 0 : 32 - Math.clz32(max);
}

type Values = ArrayLike<number>;

function runLength(v: Values, i: number, end: number): number {
  const x = v[i];
  let j = i + 1;
  while (j < end && v[j] === x) j++;
  return j - i;
}

function bitPack(v: Values, start: number, end: number, groups: number, width: number, out: ByteSink): void {
  const n = groups * 8;
  out.reserve(groups * width);
  const buf = out.buf;
  let pos = out.length;
  let acc = 0;
  let bits = 0;
  for (let k = 0; k < n; k++) {
    const i = start + k;
    const x = i < end ? (v[i] as number) : 0;
    // width ≤ 24 keeps acc within 32 bits (acc holds < 8 leftover bits before the add).
    acc |= x << bits;
    bits += width;
    while (bits >= 8) {
      buf[pos++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  }
  out.length = pos;
}

/**
 * Appends `values[start, end)` hybrid-encoded at `width` bits (1..24), without a length prefix.
 */
export function writeHybrid(values: Values, start: number, end: number, width: number, out: ByteSink): void {
  if (width < 1 || width > 24) throw new RangeError(`hybrid bit width ${width} outside 1..24`);
  const valueBytes = (width + 7) >> 3;
  let i = start;
  while (i < end) {
    const run = runLength(values, i, end);
    if (run >= 8) {
      out.varint(run * 2);
      let x = values[i] as number;
      for (let b = 0; b < valueBytes; b++) {
        out.byte(x & 0xff);
        x >>>= 8;
      }
      i += run;
      continue;
    }
    const from = i;
    let groups = 0;
    while (i < end && groups < 63) {
      if (groups > 0 && runLength(values, i, Math.min(end, i + 8)) >= 8) break;
      i += 8;
      groups++;
    }
    if (i > end) i = end;
    out.varint(groups * 2 + 1);
    bitPack(values, from, end, groups, width, out);
  }
}

/** Appends levels as a data page v1 expects them: a 4-byte length, then the hybrid runs. */
export function writeLevelsV1(values: Values, start: number, end: number, maxLevel: number, out: ByteSink): void {
  const at = out.length;
  out.i32(0);
  writeHybrid(values, start, end, bitWidth(maxLevel), out);
  new DataView(out.buf.buffer).setInt32(at, out.length - at - 4, true);
}
