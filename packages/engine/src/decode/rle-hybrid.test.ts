/**
 * @module rle-hybrid.test
 * The hybrid reader gives hyparquet's values for RLE and bit-packed runs, stops at the values asked for, returns
 * the largest value read (the dictionary range check relies on it), and throws on a run past its page. A property
 * test covers every width from 1 to 24 (the word-wise path for widths up to 8 and the byte-wise rest) over random
 * run mixes, cut at random counts, with a page ending right after the last run.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
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

/** An RLE run of `count` copies of `value` at `width` bits (whole bytes), header included. */
function rleWide(value: number, count: number, width: number): number[] {
  const out = [count << 1];
  for (let b = 0; b < (width + 7) >> 3; b++) out.push((value >>> (8 * b)) & 0xff);
  return out;
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

  test('random run mixes at every width read as hyparquet reads them, cut at any count', () => {
    const run = (width: number) =>
      fc.oneof(
        fc.record({
          kind: fc.constant('rle' as const),
          value: fc.integer({ min: 0, max: 2 ** width - 1 }),
          count: fc.integer({ min: 1, max: 40 }),
        }),
        fc.record({
          kind: fc.constant('packed' as const),
          values: fc
            .integer({ min: 1, max: 12 })
            .chain((groups) =>
              fc.array(fc.integer({ min: 0, max: 2 ** width - 1 }), { minLength: groups * 8, maxLength: groups * 8 }),
            ),
        }),
      );
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 24 })
          .chain((width) =>
            fc.tuple(fc.constant(width), fc.array(run(width), { minLength: 1, maxLength: 8 }), fc.nat()),
          ),
        ([width, runs, cut]) => {
          const bytes = Uint8Array.from(
            runs.flatMap((r) => (r.kind === 'rle' ? rleWide(r.value, r.count, width) : bitPacked(r.values, width))),
          );
          const total = runs.reduce((n, r) => n + (r.kind === 'rle' ? r.count : r.values.length), 0);
          const ref = new Int32Array(total);
          readRleBitPackedHybrid({ view: new DataView(bytes.buffer), offset: 0 }, width, ref, bytes.length);
          const count = 1 + (cut % total);
          const out = new Int32Array(total + 1).fill(-7);
          const top = readHybrid(bytes, 0, width, out, count);
          assert.deepEqual([...out.subarray(0, count)], [...ref.subarray(0, count)]);
          assert.ok(
            out.subarray(count).every((v) => v === -7),
            'nothing past count is written',
          );
          assert.equal(top, Math.max(...ref.subarray(0, count)));
          const defs = new Uint8Array(count);
          if (width <= 8) {
            readHybrid(bytes, 0, width, defs, count);
            assert.deepEqual([...defs], [...ref.subarray(0, count)], 'a byte output reads the same values');
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
