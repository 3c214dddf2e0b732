/**
 * @module sketch/column-bloom
 * Bloom filters of the trace and span ids of one row group (split-block, XXH64 of the id's bytes), so
 * `trace_id == …` skips groups that cannot hold the id (docs/design/storage-format.md, "Row-group filters").
 */
import { xxhash64Into, type Hash64 } from './xxhash64.js';
import { createSplitBlockBloom, sbbfInsert, sbbfMayContain, shrinkSplitBlockBloom } from './split-block-bloom.js';

/** Fill at which folding stops: a false-positive rate near 0.5^8 ≈ 0.4 % per probe. */
const MAX_FILL = 0.5;
/** The largest id filter written per row group. */
export const COLUMN_BLOOM_MAX_BYTES = 1 << 20;

/** A filter over `count` values of `width` bytes, or null when there are none. */
export function buildColumnBloom(bytes: Uint8Array, width: number, count: number): Uint32Array | null {
  if (count === 0) return null;
  // Sixteen bits per value to start (a power of two blocks), then folded to what the distinct values need.
  let blocks = 1;
  while (blocks * 256 < count * 16 && blocks * 32 < COLUMN_BLOOM_MAX_BYTES) blocks *= 2;
  const words = createSplitBlockBloom(blocks);
  const h: Hash64 = { hi: 0, lo: 0 };
  for (let v = 0; v < count; v++) {
    xxhash64Into(bytes, v * width, (v + 1) * width, h);
    sbbfInsert(words, h.hi, h.lo);
  }
  return shrinkSplitBlockBloom(words, MAX_FILL);
}

/** False only when `value` was certainly not among the values the filter was built from. */
export function columnBloomMayContain(words: Uint32Array, value: Uint8Array): boolean {
  const h = xxhash64Into(value, 0, value.length, { hi: 0, lo: 0 });
  return sbbfMayContain(words, h.hi, h.lo);
}

/** The filter's words as little-endian bytes (the file's byte order). */
export function bloomWordsBytes(words: Uint32Array): Uint8Array {
  const out = new Uint8Array(words.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < words.length; i++) view.setUint32(i * 4, words[i]!, true);
  return out;
}

/** Words from little-endian bytes (a whole number of 32-byte blocks). */
export function bloomWordsFrom(bytes: Uint8Array): Uint32Array {
  if (bytes.length === 0 || bytes.length % 32 !== 0) throw new RangeError(`filter of ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const words = new Uint32Array(bytes.length / 4);
  for (let i = 0; i < words.length; i++) words[i] = view.getUint32(i * 4, true);
  return words;
}
