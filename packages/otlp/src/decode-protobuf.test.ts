/**
 * @module decode-protobuf.test
 * Wire-rule unit tests for decodeLogsProtobuf: every class of bad input gives a specific error (never a throw),
 * and the protobuf merge / last-wins / presence rules hold.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import type { LogRecord, Result } from '@sluice/core';
import { decodeLogsProtobuf, MAX_ANY_VALUE_DEPTH } from './decode-protobuf.js';
import type { OtlpDecodeError } from './errors.js';
import { cat, f64, key, ld, oneRecordRequest, str, varint, vfield } from './testing/wire-bytes.js';

function ok(r: Result<LogRecord[], OtlpDecodeError>): LogRecord[] {
  if (r.ok) return r.value;
  return assert.fail(`unexpected error: ${r.error.message}`);
}

function errorOf(bytes: Uint8Array): string {
  const r = decodeLogsProtobuf(bytes);
  if (r.ok) return assert.fail('expected a decode error');
  return r.error.message;
}

function only(bytes: Uint8Array): LogRecord {
  const records = ok(decodeLogsProtobuf(bytes));
  assert.equal(records.length, 1);
  return records[0]!;
}

const body = (...anyValueParts: Uint8Array[]): Uint8Array => ld(5, ...anyValueParts);

void describe('decodeLogsProtobuf: malformed input is an error value with a precise message', () => {
  void test('an empty body is a valid request with no records', () => {
    assert.deepStrictEqual(ok(decodeLogsProtobuf(new Uint8Array(0))), []);
  });

  void test('a length running past the end of the request is reported as truncation with field and offset', () => {
    assert.equal(
      errorOf(Uint8Array.from([0x0a, 0x05, 0x12, 0x03])),
      'truncated length-delimited field 1 in ExportLogsServiceRequest at byte 1',
    );
  });

  void test('a LogRecord field whose length overruns its LogRecord (not just the buffer) is truncation', () => {
    // LogRecord = [0x2a, 0x0a, ...] claims 10 body bytes but the LogRecord holds 2 more; the outer buffer has plenty.
    const rec = Uint8Array.from([0x2a, 0x0a, 0x0a, 0x00]);
    const bytes = cat(ld(1, ld(2, ld(2, rec))), new Uint8Array(32));
    assert.equal(errorOf(bytes), 'truncated length-delimited field 5 in LogRecord at byte 7');
  });

  void test('a truncated fixed64 timestamp is reported', () => {
    assert.match(errorOf(oneRecordRequest(key(1, 1), [1, 2, 3])), /^truncated fixed64 in LogRecord at byte \d+$/);
  });

  void test('a truncated varint is reported', () => {
    assert.match(errorOf(Uint8Array.from([0x10, 0x80])), /^truncated varint in ExportLogsServiceRequest at byte 1$/);
  });

  void test('a varint longer than 10 bytes is rejected', () => {
    const bytes = oneRecordRequest(key(2, 0), new Array<number>(10).fill(0x80), [0x01]);
    assert.match(errorOf(bytes), /^varint longer than 10 bytes in LogRecord at byte \d+$/);
  });

  void test('group wire types 3 and 4 are rejected, for known and unknown fields', () => {
    assert.equal(
      errorOf(Uint8Array.from([0x0b])),
      'wire type 3 (group) is not valid in OTLP (field 1 in ExportLogsServiceRequest) at byte 0',
    );
    assert.equal(
      errorOf(Uint8Array.from([0x2c])),
      'wire type 4 (group) is not valid in OTLP (field 5 in ExportLogsServiceRequest) at byte 0',
    );
    assert.match(
      errorOf(oneRecordRequest(key(99, 3))),
      /^wire type 3 \(group\) is not valid in OTLP \(field 99 in LogRecord\) at byte 6$/,
    );
  });

  void test('wire types 6 and 7 are rejected', () => {
    assert.equal(
      errorOf(Uint8Array.from([0x2e])),
      'wire type 6 is not valid in protobuf (field 5 in ExportLogsServiceRequest) at byte 0',
    );
    assert.equal(
      errorOf(Uint8Array.from([0x2f])),
      'wire type 7 is not valid in protobuf (field 5 in ExportLogsServiceRequest) at byte 0',
    );
  });

  void test('a known field with the wrong wire type is rejected with the field name and both wire types', () => {
    assert.equal(
      errorOf(oneRecordRequest(vfield(1, 5))),
      'field 1 (time_unix_nano) in LogRecord has wire type 0 (VARINT), expected 1 (I64) at byte 6',
    );
    assert.match(
      errorOf(oneRecordRequest(vfield(5, 1))),
      /^field 5 \(body\) in LogRecord has wire type 0 \(VARINT\), expected 2 \(LEN\)/,
    );
    assert.match(
      errorOf(oneRecordRequest(body(str(3, 'x')))),
      /^field 3 \(int_value\) in AnyValue has wire type 2 \(LEN\), expected 0 \(VARINT\)/,
    );
  });

  void test('field number 0 is rejected', () => {
    assert.equal(
      errorOf(Uint8Array.from([0x02, 0x00])),
      'invalid field number 0 in ExportLogsServiceRequest at byte 0',
    );
  });

  void test('overlong keys and lengths are not truncated to their low 32 bits', () => {
    // key = 0x0A + 2^35: its low 32 bits would read as field 1 / LEN
    assert.equal(
      errorOf(Uint8Array.from([0x8a, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00])),
      'field number out of range in ExportLogsServiceRequest at byte 0',
    );
    // length = 2^32 + 1: its low 32 bits would read as 1
    const bytes = cat([0x0a], varint(2n ** 32n + 1n), [0x00]);
    assert.equal(errorOf(bytes), 'truncated length-delimited field 1 in ExportLogsServiceRequest at byte 1');
  });

  void test(`AnyValue nesting deeper than ${MAX_ANY_VALUE_DEPTH} levels is refused; exactly ${MAX_ANY_VALUE_DEPTH} is accepted`, () => {
    const nest = (levels: number): Uint8Array => {
      let v: Uint8Array = str(1, 'leaf'); // level `levels`
      for (let i = 1; i < levels; i++) v = ld(5, ld(1, v)); // wrap in an array
      return v;
    };
    const okRec = only(oneRecordRequest(body(nest(MAX_ANY_VALUE_DEPTH))));
    assert.equal(okRec.body?.kind, 'array');
    assert.match(
      errorOf(oneRecordRequest(body(nest(MAX_ANY_VALUE_DEPTH + 1)))),
      /^AnyValue nested deeper than 64 levels at byte \d+$/,
    );
    // a very deep (hostile) message is refused without exhausting the stack
    assert.match(errorOf(oneRecordRequest(body(nest(5000)))), /nested deeper/);
  });

  void test('invalid UTF-8 in a string field is rejected; a genuine U+FFFD is accepted', () => {
    assert.match(
      errorOf(oneRecordRequest(ld(3, Uint8Array.from([0x41, 0xff, 0x42])))),
      /^field 3 in LogRecord is not valid UTF-8 at byte \d+$/,
    );
    assert.equal(only(oneRecordRequest(str(3, 'a\uFFFDb'))).severityText, 'a\uFFFDb');
  });

  void test('every truncation of a valid request is an error value or a shorter valid request, never a throw', () => {
    const full = cat(
      oneRecordRequest(
        f64(1, 1_764_547_200_000_000_000n),
        vfield(2, 9),
        str(3, 'INFO'),
        body(str(1, 'héllo')),
        ld(6, str(1, 'k'), ld(2, vfield(3, -1))),
      ),
      oneRecordRequest(ld(9, new Uint8Array(16).fill(7))),
    );
    for (let n = 0; n < full.length; n++) {
      const r = decodeLogsProtobuf(full.subarray(0, n));
      if (!r.ok) assert.ok(r.error.message.length > 0);
    }
  });
});

void describe('decodeLogsProtobuf: protobuf semantics', () => {
  void test('unknown fields of every wire type are skipped, including reserved LogRecord #4 and ResourceLogs #1000', () => {
    const unknowns = cat(vfield(4, 123), key(40, 1), new Uint8Array(8), str(41, 'x'), key(42, 5), new Uint8Array(4));
    const bytes = ld(1, vfield(1000, 1), unknowns, ld(2, unknowns, ld(2, unknowns, vfield(2, 9), unknowns)), unknowns);
    const rec = only(cat(unknowns, bytes));
    assert.equal(rec.severityNumber, 9);
  });

  void test('int64 values are exact bigints, including negatives and both extremes', () => {
    for (const v of [0n, 1n, -1n, 2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n]) {
      const rec = only(oneRecordRequest(body(vfield(3, v))));
      assert.deepStrictEqual(rec.body, { kind: 'int', value: v });
    }
  });

  void test('fixed64 timestamps above 2^53 are exact, up to 2^64-1', () => {
    const rec = only(oneRecordRequest(f64(1, 1_764_547_200_123_456_789n), f64(11, 2n ** 64n - 1n)));
    assert.equal(rec.timeUnixNano, 1_764_547_200_123_456_789n);
    assert.equal(rec.observedTimeUnixNano, 2n ** 64n - 1n);
  });

  void test('int_value 0 and string_value "" are recorded as set, an AnyValue with no member as empty', () => {
    assert.deepStrictEqual(only(oneRecordRequest(body(vfield(3, 0)))).body, { kind: 'int', value: 0n });
    assert.deepStrictEqual(only(oneRecordRequest(body(str(1, '')))).body, { kind: 'string', value: '' });
    assert.deepStrictEqual(only(oneRecordRequest(body())).body, { kind: 'empty' });
    assert.equal(only(oneRecordRequest()).body, null);
  });

  void test('oneof: the last member on the wire wins', () => {
    assert.deepStrictEqual(only(oneRecordRequest(body(str(1, 'a'), vfield(3, 7)))).body, { kind: 'int', value: 7n });
    assert.deepStrictEqual(only(oneRecordRequest(body(vfield(3, 7), vfield(2, 1)))).body, {
      kind: 'bool',
      value: true,
    });
  });

  void test('bool_value is true for any non-zero varint, even one whose low 32 bits are zero', () => {
    assert.deepStrictEqual(only(oneRecordRequest(body(vfield(2, 2n ** 32n)))).body, { kind: 'bool', value: true });
  });

  void test('non-repeated scalars seen twice: last wins', () => {
    const rec = only(oneRecordRequest(vfield(2, 5), str(3, 'a'), f64(1, 1n), vfield(2, 9), str(3, 'b'), f64(1, 2n)));
    assert.equal(rec.severityNumber, 9);
    assert.equal(rec.severityText, 'b');
    assert.equal(rec.timeUnixNano, 2n);
  });

  void test('non-repeated messages seen twice are merged (body arrays append, resource and scope merge)', () => {
    const rec = only(oneRecordRequest(body(ld(5, ld(1, str(1, 'a')))), body(ld(5, ld(1, str(1, 'b'))))));
    assert.deepStrictEqual(rec.body, {
      kind: 'array',
      values: [
        { kind: 'string', value: 'a' },
        { kind: 'string', value: 'b' },
      ],
    });
    const bytes = ld(
      1,
      ld(1, ld(1, str(1, 'a'))),
      ld(1, ld(1, str(1, 'b')), vfield(2, 3)),
      ld(2, ld(1, str(1, 'lib'), str(2, '1.0')), ld(1, str(1, 'lib2')), ld(2)),
    );
    const merged = only(bytes);
    assert.deepStrictEqual(
      merged.resource.attributes.map((kv) => kv.key),
      ['a', 'b'],
    );
    assert.equal(merged.resource.droppedAttributesCount, 3);
    assert.equal(merged.scope.name, 'lib2');
    assert.equal(merged.scope.version, '1.0');
  });

  void test('repeated fields append in wire order even when interleaved with other fields', () => {
    const rec = only(oneRecordRequest(ld(6, str(1, 'a')), vfield(2, 9), ld(6, str(1, 'b'))));
    assert.deepStrictEqual(rec.attributes, [
      { key: 'a', value: { kind: 'empty' } },
      { key: 'b', value: { kind: 'empty' } },
    ]);
  });

  void test('uint32 fields keep the low 32 bits; enums keep the signed low 32 bits, unknown values as sent', () => {
    assert.equal(only(oneRecordRequest(vfield(7, 2n ** 32n + 5n))).droppedAttributesCount, 5);
    assert.equal(only(oneRecordRequest(vfield(7, 0xffffffff))).droppedAttributesCount, 0xffffffff);
    assert.equal(only(oneRecordRequest(vfield(2, -1))).severityNumber, -1);
    assert.equal(only(oneRecordRequest(vfield(2, 300))).severityNumber, 300);
  });

  void test('flags are fixed32 and keep all 32 bits', () => {
    assert.equal(only(oneRecordRequest(key(8, 5), [0x01, 0x02, 0x00, 0x80])).flags, 0x80000201);
  });

  void test('records of one ResourceLogs share the resource object; of one ScopeLogs the scope object; schema URLs after the records apply', () => {
    const lr = ld(2, vfield(2, 1));
    const bytes = ld(1, ld(2, lr, lr, str(3, 'scope-schema')), ld(2, lr), str(3, 'res-schema'));
    const [a, b, c] = ok(decodeLogsProtobuf(bytes));
    assert.ok(a && b && c);
    assert.equal(a.resource, c.resource);
    assert.equal(a.scope, b.scope);
    assert.notEqual(a.scope, c.scope);
    assert.equal(a.resource.schemaUrl, 'res-schema');
    assert.equal(a.scope.schemaUrl, 'scope-schema');
    assert.equal(c.scope.schemaUrl, '');
  });

  void test('decoded bytes are copies: changing the input afterwards does not change the records', () => {
    const input = oneRecordRequest(ld(9, new Uint8Array(16).fill(1)), body(ld(7, [9, 9])));
    const rec = only(input);
    input.fill(0);
    assert.deepStrictEqual(rec.traceId, new Uint8Array(16).fill(1));
    assert.deepStrictEqual(rec.body, { kind: 'bytes', value: Uint8Array.from([9, 9]) });
  });

  void test('string_value_strindex (profiles only) leaves no value; key_strindex is ignored', () => {
    assert.deepStrictEqual(only(oneRecordRequest(body(str(1, 'x'), vfield(8, 3)))).body, { kind: 'empty' });
    assert.deepStrictEqual(only(oneRecordRequest(ld(6, str(1, 'k'), vfield(3, 4)))).attributes, [
      { key: 'k', value: { kind: 'empty' } },
    ]);
  });

  void test('input given as a subarray of a larger buffer is read at the right offsets', () => {
    const inner = oneRecordRequest(f64(1, 42n), str(3, 'W'));
    const big = cat([0xff, 0xff, 0xff], inner, [0xff]);
    const rec = only(big.subarray(3, 3 + inner.length));
    assert.equal(rec.timeUnixNano, 42n);
    assert.equal(rec.severityText, 'W');
  });
});
