/**
 * @module query-costs.test
 * The lane memory: light only after a light run; fingerprints ignore where the window sits but not its width;
 * the least recently used fingerprint is forgotten first.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from '@sluice/query';
import { createQueryCosts, queryFingerprint } from './query-costs.js';

const NOW = 1_780_272_000_000_000_000n;

function fp(tenant: string, dsl: string, nowNs = NOW): string {
  const q = parseQuery(dsl);
  if (!q.ok) throw new Error(q.error.message);
  return queryFingerprint(tenant, { kind: 'query', query: q.value }, nowNs, 3600);
}

describe('query fingerprints', () => {
  test('a relative window keeps its fingerprint as time moves; a different width or statement does not', () => {
    const a = fp('t', 'severity >= error | range(-15m, now) | count');
    assert.equal(a, fp('t', 'severity >= error | range(-15m, now) | count', NOW + 60_000_000_000n));
    assert.notEqual(a, fp('t', 'severity >= error | range(-24h, now) | count'));
    assert.notEqual(a, fp('t', 'severity >= warn | range(-15m, now) | count'));
    assert.notEqual(a, fp('u', 'severity >= error | range(-15m, now) | count'), 'per tenant');
  });

  test('absolute ranges of the same width (a panel refreshing) share a fingerprint', () => {
    assert.equal(
      fp('t', 'true | range(2026-06-01T00:00:00Z, 2026-06-01T00:15:00Z) | count'),
      fp('t', 'true | range(2026-06-01T00:00:30Z, 2026-06-01T00:15:30Z) | count'),
    );
  });
});

describe('query costs', () => {
  const costs = () => createQueryCosts({ lightMs: 1000, lightBytes: 1000, maxEntries: 2 });

  test('unknown may probe; light after a fast, small, unrefused run; general after a big or refused one; slow and never light may probe', () => {
    const c = createQueryCosts({ lightMs: 1000, lightBytes: 1000 });
    assert.equal(c.laneOf('a'), 'probe');
    c.record('a', { ms: 10, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('a'), 'light');
    c.record('a', { ms: 999, peakBytes: 1000, refused: false, contended: false });
    assert.equal(c.laneOf('a'), 'light', 'at the bounds, still light');
    c.record('a', { ms: 10, peakBytes: 1001, refused: false, contended: false });
    assert.equal(c.laneOf('a'), 'general');
    c.record('a', { ms: 10, peakBytes: 10, refused: true, contended: false });
    assert.equal(c.laneOf('a'), 'general');
    c.record('s', { ms: 5000, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('s'), 'probe', 'slow on its first run: never light, may probe');
    c.record('s', { ms: 5000, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('s'), 'probe', 'and stays so while slow');
  });

  test('a light query keeps the light lane through 2 slow runs in a row, then may only probe; a light run resets the count', () => {
    const c = createQueryCosts({ lightMs: 1000, lightBytes: 1000 });
    c.record('p', { ms: 10, peakBytes: 10, refused: false, contended: false });
    for (let i = 1; i <= 2; i++) {
      c.record('p', { ms: 1000, peakBytes: 10, refused: false, contended: false });
      assert.equal(c.laneOf('p'), 'light', `slow run ${i}: still light`);
    }
    c.record('p', { ms: 1000, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('p'), 'probe', 'one slow run too many');
    c.record('p', { ms: 10, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('p'), 'light', 'light again after a light run');
    c.record('p', { ms: 1000, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('p'), 'light', 'the count started again');
    c.record('p', { ms: 1000, peakBytes: 10, refused: true, contended: false });
    assert.equal(c.laneOf('p'), 'general', 'a refusal is never tolerated');
  });

  test('a light query slowed while other queries executed keeps the light lane, up to 3 x light_query_ms; a slow run alone or past that counts', () => {
    const c = createQueryCosts({ lightMs: 1000, lightBytes: 1000 });
    c.record('d', { ms: 10, peakBytes: 10, refused: false, contended: false });
    for (let i = 1; i <= 10; i++) {
      c.record('d', { ms: 2999, peakBytes: 10, refused: false, contended: true });
      assert.equal(c.laneOf('d'), 'light', `contended slow run ${i}: still light, not counted`);
    }
    // The tolerated slow runs were not used up by the contended ones.
    for (let i = 1; i <= 2; i++) {
      c.record('d', { ms: 1500, peakBytes: 10, refused: false, contended: false });
      assert.equal(c.laneOf('d'), 'light', `uncontended slow run ${i}: tolerated`);
    }
    c.record('d', { ms: 1500, peakBytes: 10, refused: false, contended: false });
    assert.equal(c.laneOf('d'), 'probe', 'slow with nothing else executing: its own weight');

    c.record('e', { ms: 10, peakBytes: 10, refused: false, contended: false });
    for (let i = 1; i <= 2; i++) c.record('e', { ms: 3000, peakBytes: 10, refused: false, contended: true });
    assert.equal(c.laneOf('e'), 'light', 'two runs at 3 x the threshold: the tolerated slow runs');
    c.record('e', { ms: 3000, peakBytes: 10, refused: false, contended: true });
    assert.equal(c.laneOf('e'), 'probe', 'past 3 x the threshold, contention does not excuse it');

    c.record('f', { ms: 2000, peakBytes: 10, refused: false, contended: true });
    assert.equal(c.laneOf('f'), 'probe', 'never light: contention does not make a slow query light');
    c.record('g', { ms: 10, peakBytes: 10, refused: false, contended: false });
    c.record('g', { ms: 2000, peakBytes: 1001, refused: false, contended: true });
    assert.equal(c.laneOf('g'), 'general', 'big is big, contended or not');
  });

  test('bounded: the least recently used fingerprint is forgotten first', () => {
    const c = costs();
    c.record('a', { ms: 1, peakBytes: 1, refused: false, contended: false });
    c.record('b', { ms: 1, peakBytes: 1, refused: false, contended: false });
    assert.equal(c.laneOf('a'), 'light'); // a is now the most recently used
    c.record('c', { ms: 1, peakBytes: 1, refused: false, contended: false });
    assert.equal(c.size(), 2);
    assert.equal(c.laneOf('b'), 'probe', 'b was forgotten: unknown again');
    assert.equal(c.laneOf('a'), 'light');
  });
});
