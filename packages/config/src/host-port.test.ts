/**
 * @module host-port.test
 * Listen address parsing.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { splitHostPort } from './host-port.js';

describe('splitHostPort', () => {
  test('splits IPv4, host names, bracketed IPv6, and accepts port 0', () => {
    assert.deepEqual(splitHostPort('0.0.0.0:4318'), { ok: true, value: { host: '0.0.0.0', port: 4318 } });
    assert.deepEqual(splitHostPort('localhost:0'), { ok: true, value: { host: 'localhost', port: 0 } });
    assert.deepEqual(splitHostPort('[::]:4317'), { ok: true, value: { host: '::', port: 4317 } });
    assert.deepEqual(splitHostPort('sluice-querier.ns.svc:65535'), {
      ok: true,
      value: { host: 'sluice-querier.ns.svc', port: 65535 },
    });
  });

  test('rejects a missing host or port, a port above 65535, and an unbracketed IPv6 literal', () => {
    for (const bad of ['4318', ':4318', 'host:', 'host:65536', 'host:-1', '::1:4318', '[::1]4318', 'a b:1', '[zz]:1']) {
      assert.equal(splitHostPort(bad).ok, false, bad);
    }
  });
});
