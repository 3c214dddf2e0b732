/**
 * @module tenant.test
 * The tenant grammar (1–128 bytes of visible ASCII except `:`, `#`, `/`), its messages, and the percent-encoding
 * used for `tenant_id=<enc>` key segments (a tenant can never form a path separator or `..` in a key).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_TENANT_BYTES, describeTenantError, encodeTenantForKey, parseTenant } from './tenant.js';

const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i));
const allowed = visible.filter((c) => c !== ':' && c !== '#' && c !== '/');

describe('parseTenant', () => {
  test('accepts every visible ASCII character except : # / and the boundary lengths 1 and 128', () => {
    for (const c of allowed) assert.deepEqual(parseTenant(c), { ok: true, value: c });
    assert.ok(parseTenant('a'.repeat(MAX_TENANT_BYTES)).ok);
    assert.ok(parseTenant('team-a.prod~x_%41!').ok);
  });

  test('refuses an empty tenant, one longer than 128 bytes, and each forbidden character', () => {
    assert.deepEqual(parseTenant(''), { ok: false, error: 'empty' });
    assert.deepEqual(parseTenant('a'.repeat(MAX_TENANT_BYTES + 1)), { ok: false, error: 'too_long' });
    for (const bad of [':', '#', '/', ' ', '\t', '\u007f', '\u0000', 'é', 'a b', 'a/b', '..\u2215x', '😀']) {
      assert.deepEqual(parseTenant(bad), { ok: false, error: 'invalid_character' }, JSON.stringify(bad));
    }
  });

  test('accepts a string exactly when it is 1–128 characters from the allowed set (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 140 }), (s) => {
        const expected = s.length >= 1 && s.length <= MAX_TENANT_BYTES && [...s].every((c) => allowed.includes(c));
        assert.equal(parseTenant(s).ok, expected, JSON.stringify(s));
      }),
      { numRuns: 2000 },
    );
  });

  test('each error has a message naming the rule', () => {
    assert.equal(describeTenantError('empty'), 'tenant is empty');
    assert.equal(describeTenantError('too_long'), 'tenant is longer than 128 bytes');
    assert.match(describeTenantError('invalid_character'), /visible ASCII \(0x21-0x7E\) except ':', '#' and '\/'/);
  });
});

describe('encodeTenantForKey', () => {
  test('keeps unreserved characters and percent-encodes every other byte in uppercase hex', () => {
    assert.equal(encodeTenantForKey('acme-prod_1.x~y'), 'acme-prod_1.x~y');
    assert.equal(encodeTenantForKey('a%b'), 'a%25b');
    assert.equal(encodeTenantForKey('a+b=c'), 'a%2Bb%3Dc');
    assert.equal(encodeTenantForKey('..'), '..');
    assert.equal(encodeTenantForKey('a/b'), 'a%2Fb');
    assert.equal(encodeTenantForKey('é'), '%C3%A9');
  });

  test('the encoding of a valid tenant is injective and never holds a separator (property)', () => {
    const tenant = fc.string({ unit: fc.constantFrom(...allowed), minLength: 1, maxLength: 32 });
    fc.assert(
      fc.property(tenant, tenant, (a, b) => {
        const ea = encodeTenantForKey(a);
        assert.match(ea, /^(?:[A-Za-z0-9\-_.~]|%[0-9A-F]{2})+$/);
        assert.ok(!ea.includes('/'));
        if (a !== b) assert.notEqual(ea, encodeTenantForKey(b));
        assert.equal(decodeURIComponent(ea), a);
      }),
      { numRuns: 1000 },
    );
  });
});
