/**
 * @module miner.perf.test
 * A generous throughput floor (the benchmark, `dist/bench.js`, reports the real figure): catches an accidental
 * quadratic path, not a few percent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchMix, measure } from './bench.js';
import { createMiner } from './miner.js';

void test('mining a realistic mix sustains more than 25k lines/s even on a slow CI machine', () => {
  const miner = createMiner();
  measure(miner, benchMix(20_000, 5));
  const rate = measure(miner, benchMix(100_000, 6));
  assert.ok(rate > 25_000, `only ${Math.round(rate)} lines/s`);
});
