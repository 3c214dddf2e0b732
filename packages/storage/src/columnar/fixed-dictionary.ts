/**
 * @module columnar/fixed-dictionary
 * Dictionary encoding for the low-cardinality fixed-width columns (`template_id`, `severity_number`): a row group
 * holds a few hundred templates at most, so each row's 8-byte id becomes a dictionary index of a few bits. What
 * this saves is read work, not file size (ZSTD already removed the repetition): a `count by template_id` used to
 * decompress 8 bytes a row (docs/design/storage-format.md, "Encodings").
 *
 * Values are compared as their raw little-endian words, so no BigInt is made per row. A chunk with more than
 * {@link DICTIONARY_MAX_ENTRIES} distinct values is written PLAIN, as it always was.
 */
import { DICTIONARY_MAX_ENTRIES } from './byte-array-builder.js';
import { plainFixed } from './fixed-width-values.js';
import type { ValueEncoder } from './leaf-column.js';
import { ENCODING } from './parquet-footer.js';
import { bitWidth, writeHybrid } from './rle-hybrid.js';

/** Open-addressing slots: a power of two at least twice the most entries a dictionary may hold. */
const SLOTS = 1 << (bitWidth(DICTIONARY_MAX_ENTRIES) + 1);

/**
 * The `count` values of `width` bytes (4 or 8) in `bytes`, dictionary-encoded (a PLAIN dictionary page in
 * first-seen order, RLE/bit-packed indices) when they have at most {@link DICTIONARY_MAX_ENTRIES} distinct
 * values, else PLAIN.
 */
export function dictionaryFixed(bytes: Uint8Array, width: 4 | 8, count: number): ValueEncoder {
  const words = width >> 2;
  // A typed array's bytes are word-aligned; a copy keeps any other view correct.
  const src = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const w = new Int32Array(src.buffer, src.byteOffset, count * words);
  const slots = new Int32Array(SLOTS).fill(-1);
  const entries = new Int32Array(DICTIONARY_MAX_ENTRIES * words);
  const indices = new Int32Array(count);
  let n = 0;
  for (let i = 0; i < count; i++) {
    const lo = w[i * words]!;
    const hi = words === 2 ? w[i * words + 1]! : 0;
    let s = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) >>> 0;
    s = (s ^ (s >>> 15)) & (SLOTS - 1);
    for (;;) {
      const e = slots[s]!;
      if (e === -1) {
        if (n === DICTIONARY_MAX_ENTRIES) return plainFixed(bytes, width);
        slots[s] = n;
        entries[n * words] = lo;
        if (words === 2) entries[n * words + 1] = hi;
        indices[i] = n++;
        break;
      }
      if (entries[e * words] === lo && (words === 1 || entries[e * words + 1] === hi)) {
        indices[i] = e;
        break;
      }
      s = (s + 1) & (SLOTS - 1);
    }
  }
  const dict = new Uint8Array(entries.buffer, 0, n * width).slice();
  const bits = Math.max(1, bitWidth(n - 1));
  return {
    encoding: ENCODING.RLE_DICTIONARY,
    dictionary: { bytes: dict, count: n },
    sizeOf: () => bits / 8,
    write(v0, v1, out) {
      out.byte(bits);
      writeHybrid(indices, v0, v1, bits, out);
    },
  };
}
