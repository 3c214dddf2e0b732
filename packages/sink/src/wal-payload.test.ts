/** The WAL record keeps the tenant, the encoding and the exact body bytes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWalExport, encodeWalExport } from './wal-payload.js';

test('WAL export records round-trip tenant, encoding and body bytes', () => {
  const body = new Uint8Array([0, 1, 2, 255, 254]);
  for (const encoding of ['protobuf', 'json'] as const) {
    const tenant = 'team-a.prod~x'.repeat(9).slice(0, 128);
    const decoded = decodeWalExport(encodeWalExport(tenant, encoding, body));
    assert.equal(decoded.tenant, tenant);
    assert.equal(decoded.encoding, encoding);
    assert.deepEqual(decoded.body, body);
  }
});

test('a foreign or truncated WAL record is refused', () => {
  assert.throws(() => decodeWalExport(new Uint8Array([9, 0, 0, 0])), /not a sluice export record/);
  assert.throws(() => decodeWalExport(new Uint8Array([1, 0, 50, 0, 65])), /tenant length/);
});
