/**
 * @module keys.test
 * Hive key layout, tenant percent-encoding round trips, UUIDv7 shape and monotonicity.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { auditFileKey, dataFileKey, dataPartitionPrefix, isUuidV7FileName, parseDataKey } from './keys.js';
import { UUIDV7_RE, uuidv7, uuidv7Timestamp } from './uuidv7.js';

const U = '0190a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b';

describe('hive keys', () => {
  test('data file key is data/tenant_id=<enc>/year/month/day/hour (UTC, zero-padded)/<uuid>.parquet', () => {
    const ns = BigInt(Date.UTC(2026, 3, 5, 7, 59, 59, 999)) * 1_000_000n + 999_999n;
    assert.equal(dataFileKey('acme', ns, U), `data/tenant_id=acme/year=2026/month=04/day=05/hour=07/${U}.parquet`);
    assert.equal(
      dataPartitionPrefix('acme', Date.UTC(2026, 11, 31, 23)),
      'data/tenant_id=acme/year=2026/month=12/day=31/hour=23/',
    );
  });

  test('time 0 lands in 1970/01/01/00', () => {
    assert.equal(dataFileKey('t', 0n, U), `data/tenant_id=t/year=1970/month=01/day=01/hour=00/${U}.parquet`);
    assert.equal(auditFileKey('t', 0n, U), `audit/tenant_id=t/year=1970/month=01/day=01/${U}.parquet`);
  });

  test('audit key stops at day', () => {
    const ns = BigInt(Date.UTC(2025, 0, 9, 13)) * 1_000_000n;
    assert.equal(auditFileKey('a.b', ns, U), `audit/tenant_id=a.b/year=2025/month=01/day=09/${U}.parquet`);
  });

  test('tenants with %, /, :, spaces and unicode are percent-encoded (uppercase hex) and parse back', () => {
    const cases: [string, string][] = [
      ['50%off', '50%25off'],
      ['a/b', 'a%2Fb'],
      ['x:y#z', 'x%3Ay%23z'],
      ['sp ace', 'sp%20ace'],
      ['ünï', '%C3%BCn%C3%AF'],
      ['🦀', '%F0%9F%A6%80'],
      ['A-Z_a.z~0', 'A-Z_a.z~0'],
    ];
    for (const [tenant, enc] of cases) {
      const key = dataFileKey(tenant, 1_700_000_000_000_000_000n, U);
      assert.ok(key.startsWith(`data/tenant_id=${enc}/`), key);
      assert.equal(key.split('/').length, 7, 'an encoded tenant never adds a path segment');
      const parsed = parseDataKey(key);
      assert.equal(parsed?.tenant, tenant);
      assert.equal(parsed.file, `${U}.parquet`);
    }
  });

  test('parseDataKey inverts dataFileKey for any tenant and time (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
        fc.bigInt({ min: 0n, max: 8_000_000_000_000_000_000n }),
        (tenant, ns) => {
          const key = dataFileKey(tenant, ns, U);
          const p = parseDataKey(key);
          assert.ok(p !== null, key);
          assert.equal(p.tenant, tenant);
          const d = new Date(Number(ns / 1_000_000n));
          assert.deepEqual(
            [p.year, p.month, p.day, p.hour],
            [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours()],
          );
          assert.equal(p.hourStartMs, Date.UTC(p.year, p.month - 1, p.day, p.hour));
          assert.equal(dataPartitionPrefix(tenant, p.hourStartMs) + p.file, key);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('parseDataKey rejects malformed keys', () => {
    const bad = [
      `audit/tenant_id=t/year=2026/month=01/day=01/${U}.parquet`,
      `data/tenant_id=t/year=2026/month=13/day=01/hour=00/${U}.parquet`,
      `data/tenant_id=t/year=2026/month=02/day=30/hour=00/${U}.parquet`,
      `data/tenant_id=t/year=2026/month=01/day=01/hour=24/${U}.parquet`,
      `data/tenant_id=t/year=2026/month=1/day=01/hour=00/${U}.parquet`,
      `data/tenant_id=t/year=2026/month=01/day=01/hour=00/${U}.parquet.tmp-abc`,
      `data/tenant_id=t/year=2026/month=01/day=01/hour=00/manifest.json`,
      `data/tenant_id=a%2fb/year=2026/month=01/day=01/hour=00/${U}.parquet`, // lowercase hex is not canonical
      `data/tenant_id=a%41/year=2026/month=01/day=01/hour=00/${U}.parquet`, // %41 = 'A' must not be encoded
      `data/tenant_id=%FF/year=2026/month=01/day=01/hour=00/${U}.parquet`, // not UTF-8
      `data/tenant_id=/year=2026/month=01/day=01/hour=00/${U}.parquet`,
    ];
    for (const k of bad) assert.equal(parseDataKey(k), null, k);
  });

  test('isUuidV7FileName accepts <uuidv7>.parquet only', () => {
    assert.equal(isUuidV7FileName(`${U}.parquet`), true);
    assert.equal(isUuidV7FileName(`${U}.json`), false);
    assert.equal(isUuidV7FileName('0190a1b2-c3d4-4e5f-8a6b-7c8d9e0f1a2b.parquet'), false);
  });
});

describe('uuidv7', () => {
  test('has version 7, variant 10 and the current ms timestamp', () => {
    const before = Date.now();
    const u = uuidv7();
    const after = Date.now();
    assert.match(u, UUIDV7_RE);
    const ts = uuidv7Timestamp(u);
    assert.ok(ts !== null && ts >= before && ts <= after + 1, `${ts} in [${before}, ${after}]`);
  });

  test('is strictly increasing within a process, even with a frozen or backwards clock', () => {
    const ids = [uuidv7(1_000), uuidv7(1_000), uuidv7(999), ...Array.from({ length: 10_000 }, () => uuidv7(2_000))];
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
    assert.equal(new Set(ids).size, ids.length);
  });
});
