/**
 * @module canonical-json-parse.test
 * parseKeyValuesJson / parseAnyValueJson invert core's canonical JSON exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { KeyValue } from '@sluice/core';
import { anyValueToJson, keyValuesToJson } from '@sluice/core';
import { CanonicalJsonError, parseAnyValueJson, parseKeyValuesJson } from './canonical-json-parse.js';
import { arbKeyValues } from './testing/arbitraries.js';

describe('canonical JSON parse', () => {
  test('round-trips every AnyValue kind, int64 extremes, bytes and non-finite doubles', () => {
    const kvs: KeyValue[] = [
      { key: 's', value: { kind: 'string', value: 'hé "quoted" \n 🦀' } },
      { key: 'b', value: { kind: 'bool', value: false } },
      { key: 'imin', value: { kind: 'int', value: -(2n ** 63n) } },
      { key: 'imax', value: { kind: 'int', value: 2n ** 63n - 1n } },
      { key: 'nan', value: { kind: 'double', value: NaN } },
      { key: 'inf', value: { kind: 'double', value: Infinity } },
      { key: 'ninf', value: { kind: 'double', value: -Infinity } },
      { key: 'tiny', value: { kind: 'double', value: 5e-324 } },
      { key: 'bytes', value: { kind: 'bytes', value: new Uint8Array([0, 255, 1, 2, 3]) } },
      { key: 'nobytes', value: { kind: 'bytes', value: new Uint8Array(0) } },
      { key: 'e', value: { kind: 'empty' } },
      {
        key: 'arr',
        value: {
          kind: 'array',
          values: [
            { kind: 'int', value: 1n },
            { kind: 'array', values: [] },
          ],
        },
      },
      {
        key: 'kv',
        value: {
          kind: 'kvlist',
          values: [
            { key: 'dup', value: { kind: 'empty' } },
            { key: 'dup', value: { kind: 'bool', value: true } },
          ],
        },
      },
    ];
    assert.deepEqual(parseKeyValuesJson(keyValuesToJson(kvs)), kvs);
    assert.deepEqual(parseKeyValuesJson('[]'), []);
  });

  test('parse(render(x)) equals x for random KeyValue lists (property)', () => {
    fc.assert(
      fc.property(arbKeyValues(3), (kvs) => {
        assert.deepEqual(parseKeyValuesJson(keyValuesToJson(kvs)), kvs);
        for (const kv of kvs) assert.deepEqual(parseAnyValueJson(anyValueToJson(kv.value)), kv.value);
      }),
      { numRuns: 300 },
    );
  });

  test('non-canonical input is refused with CanonicalJsonError', () => {
    for (const bad of [
      '{"intValue":1}',
      '{"intValue":"1.5"}',
      '{"stringValue":"a","boolValue":true}',
      '{"nope":1}',
      '{"bytesValue":"abc"}',
      '{"doubleValue":"nan"}',
      '[]',
    ]) {
      assert.throws(() => parseAnyValueJson(bad), CanonicalJsonError, bad);
    }
    assert.throws(() => parseKeyValuesJson('[{"value":{}}]'), CanonicalJsonError);
  });
});
