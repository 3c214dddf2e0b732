/**
 * @module crc32c
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), slice-by-8 and table-driven. Pure; no I/O.
 */

const POLY = 0x82f63b78;

/** 8 tables of 256 entries: table k maps a byte to its CRC contribution k bytes further on. */
const TABLES: Int32Array = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + n] = c;
    }
  }
  return t;
})();

/**
 * CRC-32C of `data`. Chain calls by passing the previous result as `previous`:
 * `crc32c(b, crc32c(a)) === crc32c(a ‖ b)`.
 * @param data bytes to checksum
 * @param previous the CRC of the bytes before `data` (0 for none)
 * @returns the CRC as an unsigned 32-bit integer
 * @example crc32c(new TextEncoder().encode('123456789')) === 0xe3069283
 */
export function crc32c(data: Uint8Array, previous = 0): number {
  const t = TABLES;
  let c = ~previous;
  let i = 0;
  const n = data.length;
  const end8 = n - (n % 8);
  while (i < end8) {
    const lo = (c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24))) >>> 0;
    c =
      t[7 * 256 + (lo & 0xff)]! ^
      t[6 * 256 + ((lo >>> 8) & 0xff)]! ^
      t[5 * 256 + ((lo >>> 16) & 0xff)]! ^
      t[4 * 256 + (lo >>> 24)]! ^
      t[3 * 256 + data[i + 4]!]! ^
      t[2 * 256 + data[i + 5]!]! ^
      t[256 + data[i + 6]!]! ^
      t[data[i + 7]!]!;
    i += 8;
  }
  while (i < n) {
    c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
    i++;
  }
  return ~c >>> 0;
}
