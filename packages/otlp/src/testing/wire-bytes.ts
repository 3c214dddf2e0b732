/**
 * @module testing/wire-bytes
 * Tiny protobuf byte builders for tests: hand-assembled messages, including deliberately malformed ones.
 */

/** Bytes or a list of byte values. */
export type Part = Uint8Array | readonly number[];

/** Concatenates parts. */
export function cat(...parts: Part[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A varint (negative values as 64-bit two's complement, i.e. 10 bytes). */
export function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

/** A field key. */
export function key(field: number, wireType: number): number[] {
  return varint((field << 3) | wireType);
}

/** A length-delimited field wrapping the concatenated parts. */
export function ld(field: number, ...parts: Part[]): Uint8Array {
  const body = cat(...parts);
  return cat(key(field, 2), varint(body.length), body);
}

/** A string field. */
export function str(field: number, s: string): Uint8Array {
  return ld(field, Buffer.from(s, 'utf8'));
}

/** A varint field. */
export function vfield(field: number, n: number | bigint): Uint8Array {
  return cat(key(field, 0), varint(n));
}

/** A fixed64 field. */
export function f64(field: number, n: bigint): Uint8Array {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt.asUintN(64, n));
  return cat(key(field, 1), b);
}

/** A request holding one ResourceLogs with one ScopeLogs with one LogRecord made of `recordParts`. */
export function oneRecordRequest(...recordParts: Part[]): Uint8Array {
  return ld(1, ld(2, ld(2, ...recordParts)));
}
