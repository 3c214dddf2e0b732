/**
 * @module round-trip.test
 * encodeLogsProtobuf ∘ decodeLogsProtobuf is the identity on records, and fuzzed input (random bytes,
 * truncations and byte flips of valid requests, random JSON) never makes either decoder throw.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { decodeLogsJson } from './decode-json.js';
import { decodeLogsProtobuf } from './decode-protobuf.js';
import { encodeLogsProtobuf } from './encode-protobuf.js';
import { logRecordsArb } from './testing/record-arbitraries.js';

/** Asserts a decoder result is well-formed: ok with an array, or an error with a non-empty message. */
function assertResultShape(r: { ok: boolean; value?: unknown; error?: { message: string } }): void {
  if (r.ok) assert.ok(Array.isArray(r.value));
  else assert.ok(typeof r.error?.message === 'string' && r.error.message.length > 0);
}

void describe('encode → decode round trip', () => {
  void test('decodeLogsProtobuf(encodeLogsProtobuf(records)) equals records, for every field value', () => {
    fc.assert(
      fc.property(logRecordsArb, (records) => {
        const r = decodeLogsProtobuf(encodeLogsProtobuf(records));
        assert.ok(r.ok, r.ok ? '' : r.error.message);
        assert.deepStrictEqual(r.value, records);
      }),
      { numRuns: 300 },
    );
  });

  void test('consecutive records sharing resource and scope objects are grouped into one ResourceLogs / ScopeLogs', () => {
    fc.assert(
      fc.property(logRecordsArb, (records) => {
        const r = decodeLogsProtobuf(encodeLogsProtobuf(records));
        assert.ok(r.ok);
        for (let i = 1; i < records.length; i++) {
          const sameResource = records[i]!.resource === records[i - 1]!.resource;
          assert.equal(r.value[i]!.resource === r.value[i - 1]!.resource, sameResource);
          if (sameResource)
            assert.equal(r.value[i]!.scope === r.value[i - 1]!.scope, records[i]!.scope === records[i - 1]!.scope);
        }
      }),
      { numRuns: 100 },
    );
  });
});

void describe('fuzzing: decoders return a Result for any input and never throw', () => {
  void test('arbitrary byte strings', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        assertResultShape(decodeLogsProtobuf(bytes));
        assertResultShape(decodeLogsJson(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  void test('truncations of valid requests', () => {
    fc.assert(
      fc.property(
        logRecordsArb.filter((r) => r.length > 0),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (records, cut) => {
          const full = encodeLogsProtobuf(records);
          const n = Math.floor(full.length * cut);
          assertResultShape(decodeLogsProtobuf(full.subarray(0, n)));
        },
      ),
      { numRuns: 500 },
    );
  });

  void test('valid requests with one byte replaced', () => {
    fc.assert(
      fc.property(
        logRecordsArb.filter((r) => r.length > 0),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        (records, at, b) => {
          const bytes = encodeLogsProtobuf(records);
          bytes[at % bytes.length] = b;
          assertResultShape(decodeLogsProtobuf(bytes));
        },
      ),
      { numRuns: 1000 },
    );
  });

  void test('arbitrary JSON documents, including OTLP-shaped ones with wrong types', () => {
    const otlpish = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.dictionary(
          fc.constantFrom(
            'resourceLogs',
            'scopeLogs',
            'logRecords',
            'resource',
            'scope',
            'attributes',
            'body',
            'values',
            'key',
            'value',
            'arrayValue',
            'kvlistValue',
            'intValue',
            'doubleValue',
            'bytesValue',
            'traceId',
            'timeUnixNano',
            'flags',
          ),
          tie('node'),
          { maxKeys: 4 },
        ),
        fc.array(tie('node'), { maxLength: 3 }),
      ),
    })).node;
    fc.assert(
      fc.property(otlpish, (doc) => {
        assertResultShape(decodeLogsJson(JSON.stringify(doc) ?? 'null'));
      }),
      { numRuns: 2000 },
    );
  });
});
