/**
 * @module rebuild-live-set.test
 * The live set rebuilt from provenance alone: the newest output wins over what it replaced, retired inputs and
 * older generations are not resurrected, the loser of a race is passed over, and receiver files nobody replaced
 * stay live.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rebuildLiveSet } from './rebuild-live-set.js';

const plain = (name: string) => ({ name, provenance: null });
const output = (name: string, generation: number, replaces: string[]) => ({
  name,
  provenance: { generation, replaces },
});

void test('without any compaction output every file is live', () => {
  assert.deepEqual(rebuildLiveSet([plain('b.parquet'), plain('a.parquet')]), ['a.parquet', 'b.parquet']);
});

void test('an output hides the inputs it replaced (still within their grace); a late receiver file stays live', () => {
  assert.deepEqual(
    rebuildLiveSet([
      plain('a.parquet'),
      plain('b.parquet'),
      output('o1.parquet', 1, ['a.parquet', 'b.parquet']),
      plain('late.parquet'),
    ]),
    ['late.parquet', 'o1.parquet'],
  );
});

void test('a chain of generations keeps only the newest output', () => {
  assert.deepEqual(
    rebuildLiveSet([
      plain('a.parquet'),
      output('o1.parquet', 1, ['a.parquet']),
      plain('c.parquet'),
      output('o2.parquet', 2, ['a.parquet', 'c.parquet', 'o1.parquet']),
    ]),
    ['o2.parquet'],
  );
});

void test('of two outputs of one race the one replacing more is kept, the other passed over (no row twice)', () => {
  assert.deepEqual(
    rebuildLiveSet([
      plain('a.parquet'),
      plain('b.parquet'),
      plain('s.parquet'),
      output('winner.parquet', 3, ['a.parquet', 'b.parquet', 's.parquet']),
      output('zloser.parquet', 3, ['a.parquet', 'b.parquet']),
    ]),
    ['winner.parquet'],
  );
  // Same inputs (same rows): exactly one of them.
  assert.equal(
    rebuildLiveSet([output('x.parquet', 2, ['a.parquet']), output('y.parquet', 2, ['a.parquet'])]).length,
    1,
  );
});
