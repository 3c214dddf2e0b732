/**
 * @module bucket-ids.test
 * `bucketIds` gives every selected row the bucket the generic path gives it (`(ns / w) * w` of the time read as
 * unsigned, formatted once per bucket), ids in first-seen order, on time-ordered runs and random times alike:
 * values at and above 2^63, near 2^64, across 32-bit boundaries, with and without a selection.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { formatTimestamp } from '@sluice/query';
import { bucketIds } from './term-ids.js';

const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
/** Times that cluster (a base plus small steps) so rows share buckets, as real rows do. */
const times = fc.oneof(
  fc.array(u64, { minLength: 1, maxLength: 200 }),
  fc
    .tuple(u64, fc.array(fc.bigInt({ min: -(2n ** 33n), max: 2n ** 33n }), { minLength: 1, maxLength: 200 }))
    .map(([base, steps]) => steps.map((s) => BigInt.asUintN(64, base + s))),
);
const width = fc.oneof(fc.bigInt({ min: 1n, max: 2n ** 40n }), fc.constantFrom(300_000_000_000n, 86_400_000_000_000n));
/** Times for width `w`: the clustered or random ones, or rows one below, at and one past bucket edges, in order. */
const withTimes = (w: bigint) =>
  fc.tuple(
    fc.constant(w),
    fc.oneof(
      times,
      fc
        .tuple(
          fc.bigInt({ min: 0n, max: (2n ** 64n - 2n) / w }),
          fc.array(fc.constantFrom(-1n, 0n, 1n, w - 1n), { minLength: 1, maxLength: 60 }),
        )
        .map(([edge, offsets]) => offsets.map((d, k) => BigInt.asUintN(64, (edge + BigInt(k >> 2)) * w + d))),
    ),
  );

test('bucket ids match the per-row bucket of each selected row, first seen first', () => {
  fc.assert(
    fc.property(width.chain(withTimes), fc.boolean(), fc.boolean(), ([w, values], signed, select) => {
      const vec = signed ? BigInt64Array.from(values, (v) => BigInt.asIntN(64, v)) : BigUint64Array.from(values);
      const sel = select ? Int32Array.from(values.keys()).filter((i) => i % 3 !== 1) : null;
      const m = sel === null ? values.length : sel.length;
      const got = bucketIds(vec, w, sel, m, formatTimestamp);
      const seen = new Map<string, number>();
      for (let k = 0; k < m; k++) {
        const ns = values[sel === null ? k : (sel[k] as number)] as bigint;
        const want = formatTimestamp((ns / w) * w);
        if (!seen.has(want)) seen.set(want, seen.size);
        assert.equal(got.text(got.ids[k] as number), want, `row ${k}`);
        assert.equal(got.ids[k], seen.get(want), `row ${k} id`);
      }
      assert.equal(got.cardinality, seen.size);
    }),
    { numRuns: 1000 },
  );
});
