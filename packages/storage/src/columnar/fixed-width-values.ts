/**
 * @module columnar/fixed-width-values
 * PLAIN encoders and min/max statistics for fixed-width values held in typed arrays: INT32, INT64, FLOAT,
 * FIXED_LEN_BYTE_ARRAY (a byte copy per page slice) and BOOLEAN (bit-packed). Unsigned columns (UINT_8/32/64)
 * order their statistics unsigned, as parquet-format's sort order for those converted types requires.
 */
import type { ByteSink } from './byte-sink.js';
import type { ValueEncoder } from './leaf-column.js';
import { ENCODING } from './parquet-footer.js';

function copyBytes(bytes: Uint8Array, from: number, to: number, out: ByteSink): void {
  out.bytes(bytes.subarray(from, to));
}

/** Values as raw little-endian bytes of `width` each (INT32, INT64, FLOAT, FIXED_LEN_BYTE_ARRAY). */
export function plainFixed(bytes: Uint8Array, width: number): ValueEncoder {
  return {
    encoding: ENCODING.PLAIN,
    sizeOf: () => width,
    write: (v0, v1, out) => copyBytes(bytes, v0 * width, v1 * width, out),
  };
}

/** Booleans (one byte 0/1 each) bit-packed LSB first. */
export function plainBoolean(values: Uint8Array): ValueEncoder {
  return {
    encoding: ENCODING.PLAIN,
    sizeOf: () => 1 / 8,
    write(v0, v1, out) {
      const n = v1 - v0;
      out.reserve((n + 7) >> 3);
      for (let i = 0; i < n; i += 8) {
        let b = 0;
        for (let k = 0; k < 8 && i + k < n; k++) b |= (values[v0 + i + k]! & 1) << k;
        out.byte(b);
      }
    },
  };
}

const le32 = (v: number, signed: boolean): Uint8Array => {
  const b = new Uint8Array(4);
  const d = new DataView(b.buffer);
  if (signed) d.setInt32(0, v, true);
  else d.setUint32(0, v, true);
  return b;
};

/** Min/max of `values[0, count)` as 4-byte LE bounds; `unsigned` reads the bits as u32. */
export function int32Bounds(
  values: Int32Array,
  count: number,
  unsigned: boolean,
): { min: Uint8Array; max: Uint8Array } | undefined {
  if (count === 0) return undefined;
  const a = unsigned ? new Uint32Array(values.buffer, values.byteOffset, count) : values;
  let min = a[0]!;
  let max = min;
  for (let i = 1; i < count; i++) {
    const x = a[i]!;
    if (x < min) min = x;
    else if (x > max) max = x;
  }
  return { min: le32(min, !unsigned), max: le32(max, !unsigned) };
}

/** Min/max of `values[0, count)` as 8-byte LE bounds; `unsigned` reads the bits as u64. */
export function int64Bounds(
  values: BigInt64Array,
  count: number,
  unsigned: boolean,
): { min: Uint8Array; max: Uint8Array } | undefined {
  if (count === 0) return undefined;
  const a = unsigned ? new BigUint64Array(values.buffer, values.byteOffset, count) : values;
  let min = a[0]!;
  let max = min;
  for (let i = 1; i < count; i++) {
    const x = a[i]!;
    if (x < min) min = x;
    else if (x > max) max = x;
  }
  const b = (x: bigint) => {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigUint64(0, BigInt.asUintN(64, x), true);
    return out;
  };
  return { min: b(min), max: b(max) };
}

/** Min/max of finite-or-infinite floats (NaN skipped; zero bounds normalised to -0 / +0 per parquet-format). */
export function float32Bounds(values: Float32Array, count: number): { min: Uint8Array; max: Uint8Array } | undefined {
  let min = Infinity;
  let max = -Infinity;
  let any = false;
  for (let i = 0; i < count; i++) {
    const x = values[i]!;
    if (Number.isNaN(x)) continue;
    any = true;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (!any) return undefined;
  if (min === 0) min = -0;
  if (max === 0) max = 0;
  const f = (x: number) => {
    const out = new Uint8Array(4);
    new DataView(out.buffer).setFloat32(0, x, true);
    return out;
  };
  return { min: f(min), max: f(max) };
}

/** Min/max of booleans (0/1 bytes) as 1-byte bounds. */
export function booleanBounds(values: Uint8Array, count: number): { min: Uint8Array; max: Uint8Array } | undefined {
  if (count === 0) return undefined;
  let min = 1;
  let max = 0;
  for (let i = 0; i < count; i++) {
    const x = values[i]! & 1;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  return { min: Uint8Array.of(min), max: Uint8Array.of(max) };
}

/** Order of two 8-byte little-endian bounds read as signed int64 (the TIMESTAMP columns' statistics order). */
export function compareInt64Le(a: Uint8Array, b: Uint8Array): number {
  const x = new DataView(a.buffer, a.byteOffset, 8).getBigInt64(0, true);
  const y = new DataView(b.buffer, b.byteOffset, 8).getBigInt64(0, true);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Unsigned lexicographic order of byte strings (parquet-format's order for BYTE_ARRAY and FIXED_LEN). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Min/max of `count` fixed-length byte strings laid end to end. */
export function fixedBounds(
  bytes: Uint8Array,
  width: number,
  count: number,
): { min: Uint8Array; max: Uint8Array } | undefined {
  if (count === 0) return undefined;
  let min = bytes.subarray(0, width);
  let max = min;
  for (let i = 1; i < count; i++) {
    const x = bytes.subarray(i * width, (i + 1) * width);
    if (compareBytes(x, min) < 0) min = x;
    else if (compareBytes(x, max) > 0) max = x;
  }
  return { min: min.slice(), max: max.slice() };
}
