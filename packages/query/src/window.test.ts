import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from './parse-query.js';
import { effectiveLimit, effectiveWindow, resolveTimes } from './window.js';
import { formatTimestamp, parseTimestamp } from './time-text.js';
import type { LogQuery, Query } from './ir.js';

const S = 1_000_000_000n;
const NOW = 1_780_000_000n * S;
const q = (t: string): Query => {
  const r = parseQuery(t);
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
};

describe('effective window', () => {
  test('no range: [now - default, now]', () => {
    assert.deepStrictEqual(effectiveWindow(q('true'), NOW, 3600), { fromNs: NOW - 3600n * S, toNs: NOW });
  });
  test('the last range wins and relative times resolve against now', () => {
    assert.deepStrictEqual(effectiveWindow(q('true | range(-1d, now) | range(-15m, -5m)'), NOW, 3600), {
      fromNs: NOW - 900n * S,
      toNs: NOW - 300n * S,
    });
  });
  test('reversed bounds are swapped', () => {
    assert.deepStrictEqual(effectiveWindow(q('true | range(now, -1h)'), NOW, 3600), {
      fromNs: NOW - 3600n * S,
      toNs: NOW,
    });
  });
  test('drift statements use their from/to', () => {
    assert.deepStrictEqual(effectiveWindow(q('drift from -7d to now'), NOW, 3600), {
      fromNs: NOW - 7n * 86400n * S,
      toNs: NOW,
    });
  });
  test('resolveTimes makes every time absolute', () => {
    const r = resolveTimes(q('true | range(-1h, now) | limit 3'), NOW) as LogQuery;
    assert.deepStrictEqual(r.stages[0], {
      kind: 'range',
      from: { kind: 'absolute', ns: NOW - 3600n * S },
      to: { kind: 'absolute', ns: NOW },
    });
    assert.deepStrictEqual(r.stages[1], { kind: 'limit', n: 3n });
  });
  test('the last limit wins', () => {
    assert.equal(effectiveLimit(q('true | limit 5 | limit 7') as LogQuery), 7n);
    assert.equal(effectiveLimit(q('true') as LogQuery), undefined);
  });
});

describe('timestamps', () => {
  test('RFC 3339 with offsets and nanoseconds is exact', () => {
    const r = parseTimestamp('2026-06-01T02:00:00.123456789+02:00');
    assert.ok(r.ok);
    if (r.ok) assert.equal(formatTimestamp(r.ns), '2026-06-01T00:00:00.123456789Z');
  });
  test('leap days and pre-epoch dates round-trip', () => {
    for (const t of [
      '2024-02-29T23:59:59Z',
      '1969-12-31T23:59:59.5Z',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999999Z',
    ]) {
      const r = parseTimestamp(t);
      assert.ok(r.ok, t);
      if (r.ok) assert.equal(formatTimestamp(r.ns), t);
    }
    assert.equal(parseTimestamp('2023-02-29T00:00:00Z').ok, false);
    assert.equal(parseTimestamp('2023-01-01T00:00:00.1234567890Z').ok, false);
  });
  test('epoch matches Date', () => {
    const r = parseTimestamp('2026-06-01T00:00:00Z');
    assert.ok(r.ok);
    if (r.ok) assert.equal(r.ns, BigInt(Date.UTC(2026, 5, 1)) * 1_000_000n);
  });
});
