/**
 * @module canonical-json.test
 * The canonical proto3-JSON form of attributes and bodies (stored in Parquet and returned by queries): exact
 * rendering of every AnyValue kind, order kept, int64 as decimal strings, bytes as padded base64, non-finite
 * doubles as strings, and the output is valid JSON that round-trips the value.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { AnyValue, KeyValue } from './any-value.js';
import { anyValueToJson, keyValuesToJson, toBase64, toHex } from './canonical-json.js';

const bytes = (...b: number[]) => Uint8Array.from(b);

describe('canonical JSON', () => {
  test('renders each AnyValue kind in proto3-JSON form', () => {
    const cases: [AnyValue, string][] = [
      [{ kind: 'string', value: 'a"b\n' }, '{"stringValue":"a\\"b\\n"}'],
      [{ kind: 'bool', value: true }, '{"boolValue":true}'],
      [{ kind: 'bool', value: false }, '{"boolValue":false}'],
      [{ kind: 'int', value: -9223372036854775808n }, '{"intValue":"-9223372036854775808"}'],
      [{ kind: 'int', value: 18446744073709551615n }, '{"intValue":"18446744073709551615"}'],
      [{ kind: 'double', value: 1.5 }, '{"doubleValue":1.5}'],
      [{ kind: 'double', value: NaN }, '{"doubleValue":"NaN"}'],
      [{ kind: 'double', value: Infinity }, '{"doubleValue":"Infinity"}'],
      [{ kind: 'double', value: -Infinity }, '{"doubleValue":"-Infinity"}'],
      [{ kind: 'bytes', value: bytes(0xde, 0xad, 0xbe, 0xef) }, '{"bytesValue":"3q2+7w=="}'],
      [{ kind: 'empty' }, '{}'],
      [
        { kind: 'array', values: [{ kind: 'int', value: 1n }, { kind: 'empty' }] },
        '{"arrayValue":{"values":[{"intValue":"1"},{}]}}',
      ],
      [
        { kind: 'kvlist', values: [{ key: 'k', value: { kind: 'bool', value: true } }] },
        '{"kvlistValue":{"values":[{"key":"k","value":{"boolValue":true}}]}}',
      ],
    ];
    for (const [value, json] of cases) assert.equal(anyValueToJson(value), json);
  });

  test('-0 is rendered as 0 (JSON has no negative zero literal that JSON.stringify emits)', () => {
    assert.equal(anyValueToJson({ kind: 'double', value: -0 }), '{"doubleValue":0}');
  });

  test('a KeyValue list keeps its order (duplicates included) and an empty list is []', () => {
    const kvs: KeyValue[] = [
      { key: 'z', value: { kind: 'string', value: '1' } },
      { key: 'a', value: { kind: 'string', value: '2' } },
      { key: 'z', value: { kind: 'string', value: '3' } },
    ];
    assert.equal(
      keyValuesToJson(kvs),
      '[{"key":"z","value":{"stringValue":"1"}},{"key":"a","value":{"stringValue":"2"}},{"key":"z","value":{"stringValue":"3"}}]',
    );
    assert.equal(keyValuesToJson([]), '[]');
  });

  test('base64 is standard and padded, hex is lowercase, for every length (property: matches Buffer)', () => {
    assert.equal(toBase64(bytes()), '');
    assert.equal(toBase64(bytes(0xfb)), '+w==');
    assert.equal(toBase64(bytes(0xfb, 0xff)), '+/8=');
    assert.equal(toHex(bytes(0x00, 0x0f, 0xa0)), '000fa0');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (b) => {
        assert.equal(toBase64(b), Buffer.from(b).toString('base64'));
        assert.equal(toHex(b), Buffer.from(b).toString('hex'));
      }),
    );
  });

  const anyValue: fc.Arbitrary<AnyValue> = fc.letrec<{ value: AnyValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.string().map((value) => ({ kind: 'string' as const, value })),
      fc.boolean().map((value) => ({ kind: 'bool' as const, value })),
      fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map((value) => ({ kind: 'int' as const, value })),
      // -0 is stored as 0 (pinned below); the property covers every other double.
      fc.double().map((value) => ({ kind: 'double' as const, value: Object.is(value, -0) ? 0 : value })),
      fc.uint8Array({ maxLength: 8 }).map((value) => ({ kind: 'bytes' as const, value })),
      fc.constant({ kind: 'empty' as const }),
      fc.array(tie('value'), { maxLength: 3 }).map((values) => ({ kind: 'array' as const, values })),
      fc
        .array(
          fc.tuple(fc.string(), tie('value')).map(([key, value]) => ({ key, value })),
          { maxLength: 3 },
        )
        .map((values) => ({ kind: 'kvlist' as const, values })),
    ),
  })).value;

  /** Reads canonical JSON back (the inverse, written here independently of the storage reader). */
  function back(j: unknown): AnyValue {
    const o = j as Record<string, unknown>;
    if ('stringValue' in o) return { kind: 'string', value: o.stringValue as string };
    if ('boolValue' in o) return { kind: 'bool', value: o.boolValue as boolean };
    if ('intValue' in o) return { kind: 'int', value: BigInt(o.intValue as string) };
    if ('doubleValue' in o) return { kind: 'double', value: Number(o.doubleValue) };
    if ('bytesValue' in o)
      return { kind: 'bytes', value: new Uint8Array(Buffer.from(o.bytesValue as string, 'base64')) };
    if ('arrayValue' in o) return { kind: 'array', values: (o.arrayValue as { values: unknown[] }).values.map(back) };
    if ('kvlistValue' in o)
      return {
        kind: 'kvlist',
        values: (o.kvlistValue as { values: { key: string; value: unknown }[] }).values.map((kv) => ({
          key: kv.key,
          value: back(kv.value),
        })),
      };
    return { kind: 'empty' };
  }

  test('the output is valid JSON that reads back to the same value, and equal values render equal bytes (property)', () => {
    fc.assert(
      fc.property(anyValue, (v) => {
        const json = anyValueToJson(v);
        assert.deepEqual(back(JSON.parse(json)), v);
        assert.equal(anyValueToJson(structuredClone(v)), json);
      }),
      { numRuns: 500 },
    );
  });
});
