/**
 * The access gate: authentication (401) before the tenant (400) before the token's tenant set (403), the same
 * for every surface; auth off admits every tenant the tenant rule accepts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAccessGate, type AccessGate } from './access-gate.js';
import { bearerToken, findGrant, hashToken } from './bearer.js';
import type { TokenTable } from './token-table.js';

const tokens: TokenTable = {
  grants: [
    { name: 'ingest-a', sha256: hashToken('tok-ingest-a'), tenants: new Set(['a']), surfaces: new Set(['ingest']) },
    {
      name: 'reader-a',
      sha256: hashToken('tok-reader-a'),
      tenants: new Set(['a']),
      surfaces: new Set(['query', 'mcp']),
    },
    { name: 'ops', sha256: hashToken('tok-ops'), tenants: 'all', surfaces: new Set(['query', 'admin']) },
  ],
};
const tenancy = { header: 'X-Sluice-Tenant', defaultTenant: null };

function gate(protectMetrics = true): AccessGate {
  return createAccessGate({ tokens, tenancy, protectMetrics });
}

const bearer = (token: string): string[] => [`Bearer ${token}`];

describe('access gate', () => {
  test('a right token for the surface and one of its tenants is admitted, with the grant name as principal', () => {
    const r = gate().admit('query', { authorization: bearer('tok-reader-a'), tenant: ['a'] });
    assert.deepEqual(r, { ok: true, value: { tenant: 'a', principal: 'reader-a' } });
    const all = gate().admit('query', { authorization: bearer('tok-ops'), tenant: ['anything'] });
    assert.deepEqual(all, { ok: true, value: { tenant: 'anything', principal: 'ops' } });
  });

  test('missing, malformed, unknown and wrong-surface tokens are one undifferentiated unauthenticated', () => {
    const cases: string[][] = [
      [],
      ['tok-reader-a'],
      ['Basic dXNlcjpwYXNz'],
      ['Bearer'],
      ['Bearer tok-unknown'],
      ['Bearer tok-reader-a', 'Bearer tok-reader-a'],
      bearer('tok-ingest-a'), // valid token, but not for the query surface
    ];
    const messages = new Set<string>();
    for (const authorization of cases) {
      const r = gate().admit('query', { authorization, tenant: ['a'] });
      assert.ok(!r.ok, JSON.stringify(authorization));
      assert.equal(r.error.kind, 'unauthenticated');
      messages.add(r.error.message);
    }
    assert.equal(messages.size, 1, 'one message for every authentication failure');
  });

  test('gate order: 401 before 400 before 403', () => {
    const g = gate();
    // No token and no tenant header: authentication is checked first.
    const noTokenNoTenant = g.admit('query', { authorization: [], tenant: [] });
    assert.equal(!noTokenNoTenant.ok && noTokenNoTenant.error.kind, 'unauthenticated');
    // A right token without a tenant header, and with a bad one: the tenant rule.
    const noTenant = g.admit('query', { authorization: bearer('tok-reader-a'), tenant: [] });
    assert.equal(!noTenant.ok && noTenant.error.kind, 'missing_tenant');
    const badTenant = g.admit('query', { authorization: bearer('tok-reader-a'), tenant: ['a:b'] });
    assert.equal(!badTenant.ok && badTenant.error.kind, 'invalid_tenant');
    // A right token and a valid tenant outside its set: tenant_denied.
    const denied = g.admit('query', { authorization: bearer('tok-reader-a'), tenant: ['ab'] });
    assert.ok(!denied.ok);
    assert.equal(denied.error.kind, 'tenant_denied');
    assert.match(denied.error.message, /may not use tenant "ab"/);
  });

  test('the default tenant is subject to the token set like a named one', () => {
    const g = createAccessGate({ tokens, tenancy: { ...tenancy, defaultTenant: 'default' }, protectMetrics: true });
    const r = g.admit('ingest', { authorization: bearer('tok-ingest-a'), tenant: [] });
    assert.equal(!r.ok && r.error.kind, 'tenant_denied');
  });

  test('the bearer scheme is case-insensitive and surrounding spaces are tolerated', () => {
    assert.equal(bearerToken(['bearer abc']), 'abc');
    assert.equal(bearerToken(['BEARER   abc.def-ghi_~+/=  ']), 'abc.def-ghi_~+/=');
    assert.equal(bearerToken(['Bearer a b']), null);
    assert.equal(bearerToken([]), null);
  });

  test('findGrant compares against every stored hash and returns the matching grant', () => {
    assert.equal(findGrant(tokens, 'tok-ops')?.name, 'ops');
    assert.equal(findGrant(tokens, 'tok-ingest-a')?.name, 'ingest-a');
    assert.equal(findGrant(tokens, 'tok-ops '), null);
  });

  test('/metrics (admin) needs an admin token when protected, and is open when auth.protect_metrics is false', () => {
    assert.equal(gate().admitAdmin([]).ok, false);
    assert.equal(gate().admitAdmin(bearer('tok-reader-a')).ok, false);
    assert.deepEqual(gate().admitAdmin(bearer('tok-ops')), { ok: true, value: { principal: 'ops' } });
    assert.equal(gate(false).admitAdmin([]).ok, true);
  });

  test('a tenant-independent read (/v1/status) needs a token granted the surface for any of its tenants, no tenant', () => {
    assert.equal(gate().admitUntenanted('query', []).ok, false);
    assert.equal(gate().admitUntenanted('query', bearer('tok-ingest-a')).ok, false, 'a token of another surface');
    assert.deepEqual(gate().admitUntenanted('query', bearer('tok-reader-a')), {
      ok: true,
      value: { principal: 'reader-a' },
    });
    const open = createAccessGate({ tokens: null, tenancy, protectMetrics: true });
    assert.deepEqual(open.admitUntenanted('query', []), { ok: true, value: { principal: null } });
  });

  test('a tenant named again inside a request must equal the admitted one', () => {
    const g = gate();
    const grant = { tenant: 'a', principal: 'reader-a' };
    assert.deepEqual(g.confirmTenant(grant, 'a'), { ok: true, value: undefined });
    for (const other of ['ab', 'A', 'a ', '']) {
      const r = g.confirmTenant(grant, other);
      assert.ok(!r.ok, other);
      assert.equal(r.error.kind, 'tenant_denied');
    }
  });

  test('with auth disabled the gate is the tenant rule alone', () => {
    const open = createAccessGate({ tokens: null, tenancy: { ...tenancy, defaultTenant: 'd' }, protectMetrics: true });
    assert.equal(open.authEnabled, false);
    assert.deepEqual(open.admit('mcp', { authorization: [], tenant: ['x'] }), {
      ok: true,
      value: { tenant: 'x', principal: null },
    });
    assert.deepEqual(open.admit('ingest', { authorization: bearer('whatever'), tenant: [] }), {
      ok: true,
      value: { tenant: 'd', principal: null },
    });
    assert.equal(open.admitAdmin([]).ok, true);
    const bad = open.admit('query', { authorization: [], tenant: ['a', 'b'] });
    assert.equal(!bad.ok && bad.error.kind, 'invalid_tenant');
  });
});
