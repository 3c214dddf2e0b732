/**
 * @module footer-cache.test
 * The footer cache's policy with a counting reservation: reserve before retain, a refused reservation keeps
 * nothing, the capacity holds, clear gives everything back, and the hot set survives a scan.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FileMetaData } from 'hyparquet';
import { createFooterCache } from './footer-cache.js';

/** A stand-in footer: the cache never looks inside one. */
const footer = (n: number): FileMetaData => ({ metadata_length: n }) as unknown as FileMetaData;

function ledger(limit = Infinity): { held: number; reserve(b: number): boolean; release(b: number): void } {
  const l = {
    held: 0,
    reserve(b: number) {
      if (l.held + b > limit) return false;
      l.held += b;
      return true;
    },
    release(b: number) {
      l.held -= b;
    },
  };
  return l;
}

describe('footer cache', () => {
  test('an entry is reserved before it is retained, and a refused reservation keeps nothing', () => {
    const pool = ledger(150);
    const order: string[] = [];
    const cache = createFooterCache({
      capacityBytes: 1000,
      reserve: (b) => {
        order.push(`reserve ${b} with ${cache.stats().entries} entries`);
        return pool.reserve(b);
      },
      release: (b) => pool.release(b),
    });
    assert.equal(cache.offer('a', 10, footer(1), 100), true);
    assert.deepEqual(order, ['reserve 100 with 0 entries'], 'reserved while the entry was not yet kept');
    assert.equal(pool.held, 100);
    assert.equal(cache.offer('b', 10, footer(2), 100), false, 'the pool refused: not kept');
    assert.equal(cache.lookup('b', 10), undefined);
    assert.deepEqual(cache.stats().entries, 1);
    assert.equal(cache.heldBytes, pool.held, 'everything the cache holds is reserved');
  });

  test('a hit returns the footer offered for that key and size; another size is a miss', () => {
    const pool = ledger();
    const cache = createFooterCache({ capacityBytes: 1000, reserve: pool.reserve, release: pool.release });
    const f = footer(7);
    cache.offer('k', 99, f, 50);
    assert.equal(cache.lookup('k', 99), f);
    assert.equal(cache.lookup('k', 98), undefined);
    assert.deepEqual({ hits: cache.stats().hits, misses: cache.stats().misses }, { hits: 1, misses: 1 });
  });

  test('the capacity holds: older entries are evicted (and released) to make room, an entry over it is never kept', () => {
    const pool = ledger();
    const evicted: string[] = [];
    const cache = createFooterCache({
      capacityBytes: 300,
      reserve: pool.reserve,
      release: pool.release,
      onEvict: (k) => evicted.push(k),
    });
    for (const k of ['a', 'b', 'c', 'd']) assert.equal(cache.offer(k, 1, footer(1), 100), true);
    assert.equal(cache.heldBytes, 300);
    assert.equal(pool.held, 300);
    assert.deepEqual(evicted, ['a']);
    assert.equal(cache.offer('huge', 1, footer(1), 301), false);
    assert.equal(pool.held, 300);
  });

  test('clear gives every byte back', () => {
    const pool = ledger();
    const cache = createFooterCache({ capacityBytes: 1000, reserve: pool.reserve, release: pool.release });
    for (const k of ['a', 'b', 'c']) cache.offer(k, 1, footer(1), 100);
    cache.lookup('a', 1); // one of them protected
    assert.equal(cache.clear(), 300);
    assert.equal(pool.held, 0);
    assert.equal(cache.heldBytes, 0);
    assert.equal(cache.lookup('a', 1), undefined);
  });

  test('eviction keeps the hot set under a scan: files read once do not flush files read again', () => {
    const pool = ledger();
    const cache = createFooterCache({ capacityBytes: 1000, reserve: pool.reserve, release: pool.release });
    const hot = ['h0', 'h1', 'h2', 'h3'];
    for (const k of hot) cache.offer(k, 1, footer(1), 100);
    for (const k of hot) assert.notEqual(cache.lookup(k, 1), undefined, 'the dashboard query runs again');
    // One big query scans 200 other files once each.
    for (let i = 0; i < 200; i++) {
      const k = `scan-${i}`;
      assert.equal(cache.lookup(k, 1), undefined);
      cache.offer(k, 1, footer(1), 100);
    }
    for (const k of hot) assert.notEqual(cache.lookup(k, 1), undefined, `${k} survived the scan`);
    assert.ok(cache.heldBytes <= 1000);
    assert.equal(pool.held, cache.heldBytes);
  });
});
