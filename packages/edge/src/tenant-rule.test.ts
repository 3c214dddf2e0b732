/**
 * The tenant rule: the header (trimmed, grammar-checked, exactly once) or, only when the header is absent, the
 * default tenant.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTenant } from './tenant-rule.js';

const required = { header: 'X-Sluice-Tenant', defaultTenant: null };
const defaulted = { header: 'X-Sluice-Tenant', defaultTenant: 'default' };

describe('tenant rule', () => {
  test('the header names the tenant, trimmed of ASCII whitespace', () => {
    assert.deepEqual(resolveTenant([' team-a\t'], required), { ok: true, value: 'team-a' });
    assert.deepEqual(resolveTenant(['team-a'], defaulted), { ok: true, value: 'team-a' });
  });

  test('an absent header falls back to the default tenant, or is missing_tenant without one', () => {
    assert.deepEqual(resolveTenant([], defaulted), { ok: true, value: 'default' });
    const r = resolveTenant([], required);
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'missing_tenant');
    assert.match(r.error.message, /set the X-Sluice-Tenant header/);
  });

  test('a header that is present but empty is missing_tenant even with a default tenant', () => {
    for (const rule of [required, defaulted]) {
      const r = resolveTenant(['  '], rule);
      assert.ok(!r.ok);
      assert.equal(r.error.kind, 'missing_tenant');
      assert.match(r.error.message, /header is empty/);
    }
  });

  test('a repeated header is invalid_tenant: one request maps to one tenant', () => {
    const r = resolveTenant(['a', 'ab'], defaulted);
    assert.ok(!r.ok);
    assert.equal(r.error.kind, 'invalid_tenant');
    assert.match(r.error.message, /must appear once/);
  });

  test('a value that breaks the grammar is invalid_tenant naming the rule', () => {
    for (const bad of ['a:b', 'a/b', 'a#b', 'a b', 'é', 'x'.repeat(129)]) {
      const r = resolveTenant([bad], defaulted);
      assert.ok(!r.ok, bad);
      assert.equal(r.error.kind, 'invalid_tenant');
      assert.match(r.error.message, /^invalid X-Sluice-Tenant header: tenant/);
    }
  });
});
