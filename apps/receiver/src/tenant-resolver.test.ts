/** Tenant resolution: header, default tenant, grammar, repetition. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTenant } from './tenant-resolver.js';

const withDefault = { header: 'X-Sluice-Tenant', defaultTenant: 'default' };
const required = { header: 'X-Sluice-Tenant', defaultTenant: null };

test('the header wins, surrounding whitespace is trimmed, the default applies only when absent', () => {
  assert.deepEqual(resolveTenant(['  acme\t'], withDefault), { ok: true, value: 'acme' });
  assert.deepEqual(resolveTenant([], withDefault), { ok: true, value: 'default' });
});

test('a missing header without a default tenant, a repeated header, and grammar violations are refused with the rule', () => {
  const missing = resolveTenant([], required);
  assert.equal(missing.ok, false);
  assert.match(String(!missing.ok && missing.error), /missing tenant: set the X-Sluice-Tenant header/);
  assert.match(String((resolveTenant(['a', 'b'], withDefault) as { error: string }).error), /must appear once/);
  for (const bad of ['', 'a/b', 'a:b', 'a#b', 'a b', 'é', 'x'.repeat(129)]) {
    assert.equal(resolveTenant([bad], withDefault).ok, false, JSON.stringify(bad));
  }
  assert.equal(resolveTenant(['x'.repeat(128)], withDefault).ok, true);
});
