/**
 * @module sketch/body-ngram-sketch
 * A per-row-group sketch of the `body` column for substring search: a split-block bloom filter of every
 * {@link NGRAM_BYTES}-byte window of the stored bodies' UTF-8 bytes made only of word bytes (ASCII letters,
 * digits, `_`, and every byte of a multi-byte character). A body containing a needle contains each of the
 * needle's windows, and a window of word bytes is one wherever it occurs; so a group whose sketch lacks one of
 * the needle's word windows holds no match and is skipped unread (docs/design/storage-format.md, "Row-group
 * filters"). Windows across spaces and punctuation are left out: they are most of the distinct windows of log
 * text and rarely all that tells a needle apart. Needles without a word window never prune. The hash is ours
 * (a few integer multiplies per window), fixed by the filter index's version.
 */
import {
  createSplitBlockBloom,
  sbbfFill,
  sbbfInsert,
  sbbfMayContain,
  shrinkSplitBlockBloom,
} from './split-block-bloom.js';

/** Window length in bytes: five bytes tell hex request ids apart in a 65,536-row group, where four saturate. */
export const NGRAM_BYTES = 5;
/** Version of the window hash and layout, recorded in the file's key-value metadata. */
export const NGRAM_SKETCH_VERSION = 1;
/** A group's sketch starts at most this big (then folds to what its windows need). */
export const NGRAM_SKETCH_MAX_BYTES = 1 << 20;
/**
 * Fill above which folding stops: a false-positive rate near 0.6^8 ≈ 1.7 % per window, and a needle usually has
 * several windows, all of which must pass.
 */
const MAX_FILL = 0.6;
/** A sketch filled past this prunes nothing worth its bytes: none is written for the group. */
export const NGRAM_SKETCH_USELESS_FILL = 0.9;

/** 1 for word bytes: `0-9 A-Z a-z _` and 0x80–0xFF (any byte of a multi-byte UTF-8 character). */
const WORD = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  WORD[b] =
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b >= 0x80 ? 1 : 0;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The window starting at `at` as the sketch's (hi, lo) hash halves, written into `out`. */
function windowHash(b: Uint8Array, at: number, out: { hi: number; lo: number }): void {
  const x = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
  const y = b[at + 4]!;
  out.hi = fmix32(x ^ Math.imul(y + 1, 0x9e3779b1));
  out.lo = fmix32((x + Math.imul(y + 1, 0xcc9e2d51)) ^ 0x1b873593);
}

/**
 * Builds one group's sketch from PLAIN byte-array values laid out as in a Parquet page: value `v` is the bytes
 * `[starts[v] + 4, starts[v + 1])` of `data` (after its u32 length). Null when no value is as long as a window,
 * or when the sketch would be too full to prune.
 */
export function buildBodyNgramSketch(data: Uint8Array, starts: Int32Array, count: number): Uint32Array | null {
  let windows = 0;
  for (let v = 0; v < count; v++) windows += Math.max(0, starts[v + 1]! - starts[v]! - 4 - NGRAM_BYTES + 1);
  if (windows === 0) return null;
  // Eight bits per window, rounded up to a power of two blocks, capped; folding then fits it to the distinct ones.
  let blocks = 1;
  while (blocks * 256 < windows * 8 && blocks * 32 < NGRAM_SKETCH_MAX_BYTES) blocks *= 2;
  const words = createSplitBlockBloom(blocks);
  const h = { hi: 0, lo: 0 };
  for (let v = 0; v < count; v++) {
    const end = starts[v + 1]!;
    let run = 0; // word bytes ending at `at`
    for (let at = starts[v]! + 4; at < end; at++) {
      run = WORD[data[at]!] === 1 ? run + 1 : 0;
      if (run < NGRAM_BYTES) continue;
      windowHash(data, at - NGRAM_BYTES + 1, h);
      sbbfInsert(words, h.hi, h.lo);
    }
  }
  const folded = shrinkSplitBlockBloom(words, MAX_FILL);
  return sbbfFill(folded) > NGRAM_SKETCH_USELESS_FILL ? null : folded;
}

const utf8 = new TextEncoder();

/** The window hashes a needle's matches must all contain; empty when the needle has no word window. */
export function needleNgramHashes(needle: string): readonly { readonly hi: number; readonly lo: number }[] {
  const b = utf8.encode(needle);
  const out: { hi: number; lo: number }[] = [];
  const seen = new Set<string>();
  let run = 0;
  for (let end = 0; end < b.length; end++) {
    run = WORD[b[end]!] === 1 ? run + 1 : 0;
    if (run < NGRAM_BYTES) continue;
    const h = { hi: 0, lo: 0 };
    windowHash(b, end - NGRAM_BYTES + 1, h);
    const key = `${h.hi}:${h.lo}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(h);
  }
  return out;
}

/** False only when no body in the sketched group can contain a needle with these window hashes. */
export function sketchMayContain(
  words: Uint32Array,
  hashes: readonly { readonly hi: number; readonly lo: number }[],
): boolean {
  for (const h of hashes) if (!sbbfMayContain(words, h.hi, h.lo)) return false;
  return true;
}
