/**
 * @module sketch/split-block-bloom
 * Parquet's split-block bloom filter (SBBF): 32-byte blocks of eight little-endian u32 words; a 64-bit hash picks
 * a block with its high half and sets one bit per word from its low half. Misses are exact, hits probabilistic.
 * The layout of Parquet's bloom filters, used for our row-group filters of ids and body n-grams
 * (docs/design/storage-format.md, "Row-group filters").
 *
 * The block index is `(hi × blocks) >> 32`, so halving the block count maps block j to j >> 1: a filter is
 * {@link foldSplitBlockBloom folded} by OR-ing neighbouring blocks, exactly, which lets a writer start generous
 * and shrink to the size the data needs.
 */

const SALT = new Uint32Array([
  0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
]);

/** Bytes per block. */
export const SBBF_BLOCK_BYTES = 32;

/** `(hi × blocks) >> 32` without leaving exact integer arithmetic (blocks < 2^27). */
function blockOf(hi: number, blocks: number): number {
  const a = hi >>> 16;
  const b = hi & 0xffff;
  return Math.floor((a * blocks + Math.floor((b * blocks) / 0x10000)) / 0x10000);
}

/** Sets the hash's eight bits. */
export function sbbfInsert(words: Uint32Array, hi: number, lo: number): void {
  const base = blockOf(hi, words.length >>> 3) << 3;
  for (let i = 0; i < 8; i++) words[base + i]! |= 1 << (Math.imul(lo, SALT[i]!) >>> 27);
}

/** False only when the hash was certainly never inserted. */
export function sbbfMayContain(words: Uint32Array, hi: number, lo: number): boolean {
  const base = blockOf(hi, words.length >>> 3) << 3;
  for (let i = 0; i < 8; i++) if ((words[base + i]! & (1 << (Math.imul(lo, SALT[i]!) >>> 27))) === 0) return false;
  return true;
}

/** A filter of `blocks` empty blocks. */
export function createSplitBlockBloom(blocks: number): Uint32Array {
  if (!Number.isSafeInteger(blocks) || blocks < 1 || blocks >= 1 << 27)
    throw new RangeError(`bloom filter blocks must be 1..2^27-1, got ${blocks}`);
  return new Uint32Array(blocks * 8);
}

/** Fraction of bits set. */
export function sbbfFill(words: Uint32Array): number {
  let ones = 0;
  for (let i = 0; i < words.length; i++) {
    let v = words[i]!;
    v = v - ((v >>> 1) & 0x55555555);
    v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
    ones += (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
  }
  return ones / (words.length * 32);
}

/**
 * Halves the filter (an even block count) by OR-ing blocks 2j and 2j+1 into block j: every hash inserted into
 * the input still tests positive in the output. Returns a new array.
 */
export function foldSplitBlockBloom(words: Uint32Array): Uint32Array {
  const blocks = words.length >>> 3;
  if (blocks % 2 !== 0) throw new RangeError('only an even block count folds');
  const out = new Uint32Array(words.length >>> 1);
  for (let j = 0; j < blocks >>> 1; j++)
    for (let i = 0; i < 8; i++) out[j * 8 + i] = words[2 * j * 8 + i]! | words[(2 * j + 1) * 8 + i]!;
  return out;
}

/**
 * Folds while the result stays at or below `maxFill` of its bits set (and above `minBlocks`): the smallest
 * power-of-two shrink of a generous filter that keeps the false-positive rate near `maxFill^8`.
 */
export function shrinkSplitBlockBloom(words: Uint32Array, maxFill: number, minBlocks = 1): Uint32Array {
  let w = words;
  // Folding at most doubles the fill (OR of two halves), so a filter at or below maxFill/2 can always fold.
  while (w.length >>> 3 > minBlocks && (w.length >>> 3) % 2 === 0) {
    const next = foldSplitBlockBloom(w);
    if (sbbfFill(next) > maxFill) break;
    w = next;
  }
  return w;
}
