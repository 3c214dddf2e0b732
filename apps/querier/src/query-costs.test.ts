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

  test('unknown may probe; light after a fast, small, unrefused run; probe after a run that was only slow; general after a big or refused one', () => {
    const c = costs();
    assert.equal(c.laneOf('a'), 'probe');
    c.record('a', { ms: 10, peakBytes: 10, refused: false });
    assert.equal(c.laneOf('a'), 'light');
    c.record('a', { ms: 999, peakBytes: 1000, refused: false });
    assert.equal(c.laneOf('a'), 'light', 'at the bounds, still light');
    c.record('a', { ms: 1000, peakBytes: 10, refused: false });
    assert.equal(c.laneOf('a'), 'probe', 'a run that reached light_query_ms is not light, but may probe again');
    c.record('a', { ms: 10, peakBytes: 10, refused: false });
    assert.equal(c.laneOf('a'), 'light', 'and a light run makes it light again');
    c.record('a', { ms: 10, peakBytes: 1001, refused: false });
    assert.equal(c.laneOf('a'), 'general');
    c.record('a', { ms: 10, peakBytes: 10, refused: true });
    assert.equal(c.laneOf('a'), 'general');
  });

  test('bounded: the least recently used fingerprint is forgotten first', () => {
    const c = costs();
    c.record('a', { ms: 1, peakBytes: 1, refused: false });
    c.record('b', { ms: 1, peakBytes: 1, refused: false });
    assert.equal(c.laneOf('a'), 'light'); // a is now the most recently used
    c.record('c', { ms: 1, peakBytes: 1, refused: false });
    assert.equal(c.size(), 2);
    assert.equal(c.laneOf('b'), 'probe', 'b was forgotten: unknown again');
    assert.equal(c.laneOf('a'), 'light');
  });
});
