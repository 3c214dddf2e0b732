/**
 * @module validate-protobuf.test
 * validateLogsProtobuf accepts exactly what decodeLogsProtobuf accepts, counts the same records, and refuses with
 * the same message at the same offset — on valid requests, on their truncations and byte flips, on random field
 * soup (every field number and wire type, nested at random), and at the AnyValue depth limit.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { decodeLogsProtobuf, MAX_ANY_VALUE_DEPTH } from './decode-protobuf.js';
import { encodeLogsProtobuf } from './encode-protobuf.js';
import { logRecordsArb } from './testing/record-arbitraries.js';
import { cat, key, ld, oneRecordRequest, varint } from './testing/wire-bytes.js';
import { validateLogsProtobuf } from './validate-protobuf.js';

/** The decoder's verdict in the validator's terms: a record count, or the error message. */
function verdicts(bytes: Uint8Array): { decoded: number | string; validated: number | string } {
  const d = decodeLogsProtobuf(bytes);
  const v = validateLogsProtobuf(bytes);
  return { decoded: d.ok ? d.value.length : d.error.message, validated: v.ok ? v.value : v.error.message };
}

function assertSameVerdict(bytes: Uint8Array): void {
  const { decoded, validated } = verdicts(bytes);
  assert.equal(validated, decoded);
}

/**
 * Protobuf field soup: any field number OTLP uses (and 0, and unknown ones), any wire type, payloads that fit or
 * run short, strings valid and invalid UTF-8, and length-delimited payloads that are themselves soup.
 */
const soupArb: fc.Arbitrary<Uint8Array> = fc.letrec<{ soup: Uint8Array; field: Uint8Array }>((tie) => ({
  soup: fc.array(tie('field'), { maxLength: 5 }).map((fields) => cat(...fields)),
  field: fc.oneof(
    { depthSize: 'small' },
    fc
      .tuple(fc.constantFrom(1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1000), fc.integer({ min: 0, max: 7 }))
      .chain(([n, wt]) => payloadArb(wt, tie('soup')).map((payload) => cat(key(n, wt), payload))),
    fc.uint8Array({ maxLength: 6 }),
  ),
})).soup;

function payloadArb(wireType: number, soup: fc.Arbitrary<Uint8Array>): fc.Arbitrary<Uint8Array> {
  switch (wireType) {
    case 0:
      return fc.oneof(
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((n) => Uint8Array.from(varint(n))),
        fc.constant(Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02])),
        fc.constant(Uint8Array.from([0x80])),
      );
    case 1:
      return fc.uint8Array({ minLength: 5, maxLength: 8 });
    case 5:
      return fc.uint8Array({ minLength: 2, maxLength: 4 });
    case 2:
      return fc
        .oneof(
          soup,
          fc.string({ unit: 'binary', maxLength: 8 }).map((s) => new TextEncoder().encode(s)),
          fc.uint8Array({ maxLength: 8 }),
        )
        .chain((inner) =>
          fc.integer({ min: -1, max: 1 }).map((skew) => cat(varint(Math.max(0, inner.length + skew)), inner)),
        );
    default:
      return fc.uint8Array({ maxLength: 3 });
  }
}

void describe('validateLogsProtobuf agrees with decodeLogsProtobuf', () => {
  void test('a valid request is accepted with the decoder’s record count', () => {
    fc.assert(
      fc.property(logRecordsArb, (records) => {
        const v = validateLogsProtobuf(encodeLogsProtobuf(records));
        assert.ok(v.ok, v.ok ? '' : v.error.message);
        assert.equal(v.value, records.length);
      }),
      { numRuns: 300 },
    );
  });

  void test('every truncation and byte flip of a valid request gets the decoder’s verdict and message', () => {
    fc.assert(
      fc.property(
        logRecordsArb,
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (records, at, value, cut) => {
          const bytes = encodeLogsProtobuf(records);
          assertSameVerdict(bytes.subarray(0, Math.floor(bytes.length * cut)));
          if (bytes.length === 0) return;
          const flipped = Uint8Array.from(bytes);
          flipped[at % bytes.length] = value;
          assertSameVerdict(flipped);
        },
      ),
      { numRuns: 500 },
    );
  });

  void test('random field soup, at the top level and inside a LogRecord, gets the decoder’s verdict', () => {
    fc.assert(
      fc.property(soupArb, (soup) => {
        assertSameVerdict(soup);
        assertSameVerdict(oneRecordRequest(soup));
        assertSameVerdict(oneRecordRequest(ld(5, soup)));
        assertSameVerdict(oneRecordRequest(ld(6, ld(2, soup))));
      }),
      { numRuns: 2000 },
    );
  });

  void test('random bytes get the decoder’s verdict', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), assertSameVerdict), { numRuns: 1000 });
  });

  void test('an AnyValue exactly at the depth limit is accepted and one level deeper is refused, as the decoder does', () => {
    const nested = (levels: number): Uint8Array => {
      let v: Uint8Array = cat(key(1, 2), varint(1), [0x61]);
      for (let i = 1; i < levels; i++) v = ld(5, ld(1, v)); // AnyValue.array_value { values: v }
      return oneRecordRequest(ld(5, v));
    };
    assert.deepEqual(verdicts(nested(MAX_ANY_VALUE_DEPTH)), { decoded: 1, validated: 1 });
    const deeper = verdicts(nested(MAX_ANY_VALUE_DEPTH + 1));
    assert.match(String(deeper.validated), /^AnyValue nested deeper than 64 levels at byte \d+$/);
    assert.equal(deeper.validated, deeper.decoded);
  });

  void test('invalid UTF-8 in a string is refused with the decoder’s message, valid multi-byte UTF-8 is not', () => {
    const bad = oneRecordRequest(ld(3, [0xc3, 0x28]));
    assert.match(String(verdicts(bad).validated), /^field 3 in LogRecord is not valid UTF-8 at byte \d+$/);
    assertSameVerdict(bad);
    assert.deepEqual(verdicts(oneRecordRequest(ld(3, new TextEncoder().encode('ünïcødé 🚀')))), {
      decoded: 1,
      validated: 1,
    });
  });
});
