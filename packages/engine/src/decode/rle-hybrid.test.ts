/**
 * @module rle-hybrid.test
 * The hybrid reader gives hyparquet's values for RLE and bit-packed runs, stops at the values asked for, returns
 * the largest value read (the dictionary range check relies on it), and throws on a run past its page.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { readHybrid } from './rle-hybrid.js';

/** A bit-packed run of `values` (a multiple of 8) at `width` bits, header included. */
function bitPacked(values: readonly number[], width: number): number[] {
  const out = [((values.length / 8) << 1) | 1];
  let acc = 0;
  let bits = 0;
  for (const v of values) {
    acc |= v << bits;
    bits += width;
    while (bits >= 8) {
      out.push(acc & 0xff);
      acc >>>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) out.push(acc & 0xff);
  return out;
}

/** An RLE run of `count` copies of `value` (one byte wide), header included. */
function rle(value: number, count: number): number[] {
  return [count << 1, value];
}

describe('RLE / bit-packed hybrid reader', () => {
  const width = 5;
  const packed = [3, 17, 0, 31, 8, 8, 1, 2, 30, 4, 5, 6, 7, 9, 10, 11];
  const bytes = Uint8Array.from([...rle(21, 10), ...bitPacked(packed, width), ...rle(4, 6)]);
  const total = 10 + packed.length + 6;

  test('gives the values hyparquet reads, and their largest', () => {
    const ref = new Int32Array(total);
    readRleBitPackedHybrid({ view: new DataView(bytes.buffer), offset: 0 }, width, ref, bytes.length);
    const out = new Int32Array(total);
    const top = readHybrid(bytes, 0, width, out, total);
    assert.deepEqual([...out], [...ref]);
    assert.equal(top, 31);
  });

  test('stops at the values asked for: nothing past count is written, the largest is of those read', () => {
    const out = new Int32Array(12).fill(-7);
    const top = readHybrid(bytes, 0, width, out, 11);
    assert.deepEqual([...out], [...Array<number>(10).fill(21), 3, -7]);
    assert.equal(top, 21, 'an RLE run counts toward the largest value');
    const inRun = new Int32Array(8).fill(-7);
    readHybrid(bytes, 0, width, inRun, 5);
    assert.deepEqual([...inRun], [21, 21, 21, 21, 21, -7, -7, -7], 'an RLE run is cut at count');
  });

  test('a run past the end of its page throws', () => {
    assert.throws(() => readHybrid(bytes.subarray(0, 12), 0, width, new Int32Array(total), total), /past the end/);
  });
});
