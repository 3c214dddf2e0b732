/**
 * @module decode-json.test
 * OTLP/JSON decoding rules: accepted forms (hex ids, int64 strings and numbers, base64 variants, special
 * doubles, nulls, unknown keys) and errors that name the JSON path of the bad value.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import type { LogRecord } from '@sluice/core';
import { decodeLogsJson } from './decode-json.js';

const P = 'resourceLogs[0].scopeLogs[0].logRecords[0]';

/** A request with one record whose JSON object text is `record`. */
const req = (record: string): string => `{"resourceLogs":[{"scopeLogs":[{"logRecords":[${record}]}]}]}`;

function one(text: string | Uint8Array): LogRecord {
  const r = decodeLogsJson(text);
  if (!r.ok) return assert.fail(`unexpected error: ${r.error.message}`);
  assert.equal(r.value.length, 1);
  return r.value[0]!;
}

function errorOf(text: string | Uint8Array): string {
  const r = decodeLogsJson(text);
  if (r.ok) return assert.fail('expected an error');
  return r.error.message;
}

void describe('decodeLogsJson: errors', () => {
  void test('invalid JSON gives a fixed message with no parser text', () => {
    assert.equal(errorOf('{"resourceLogs": ['), 'request body is not valid JSON');
    assert.equal(errorOf(''), 'request body is not valid JSON');
  });

  void test('invalid UTF-8 in the body is rejected', () => {
    assert.equal(
      errorOf(Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
      'request body is not valid UTF-8',
    );
  });

  void test('trace and span ids must be 32 / 16 hex characters', () => {
    assert.equal(errorOf(req('{"traceId":"abc"}')), `${P}.traceId: expected 32 hex characters or ""`);
    assert.equal(errorOf(req(`{"traceId":"${'g'.repeat(32)}"}`)), `${P}.traceId: expected 32 hex characters or ""`);
    assert.equal(
      errorOf(req('{"spanId":"AAAAAAAAAAAAAAAAAAAAAA=="}')),
      `${P}.spanId: expected 16 hex characters or ""`,
    );
    assert.equal(errorOf(req('{"spanId":12}')), `${P}.spanId: expected 16 hex characters or ""`);
  });

  void test('int64 / uint64 values out of range are rejected', () => {
    assert.equal(
      errorOf(req('{"timeUnixNano":"18446744073709551616"}')),
      `${P}.timeUnixNano: integer out of range for uint64`,
    );
    assert.equal(errorOf(req('{"timeUnixNano":"-1"}')), `${P}.timeUnixNano: integer out of range for uint64`);
    assert.equal(
      errorOf(req('{"body":{"intValue":"9223372036854775808"}}')),
      `${P}.body.intValue: integer out of range for int64`,
    );
    assert.equal(
      errorOf(req('{"body":{"intValue":-9223372036854775809}}')),
      `${P}.body.intValue: integer out of range for int64`,
    );
  });

  void test('non-integer int64 values are rejected with the path', () => {
    assert.equal(errorOf(req('{"timeUnixNano":"12.5"}')), `${P}.timeUnixNano: expected an integer string`);
    assert.equal(errorOf(req('{"timeUnixNano":1.5}')), `${P}.timeUnixNano: expected an integer string`);
    assert.equal(errorOf(req('{"timeUnixNano":true}')), `${P}.timeUnixNano: expected an integer string`);
  });

  void test('enum names are refused: severityNumber must be an integer', () => {
    assert.equal(
      errorOf(req('{"severityNumber":"SEVERITY_NUMBER_INFO"}')),
      `${P}.severityNumber: expected an integer (enum names are not accepted)`,
    );
  });

  void test('type errors deep inside attributes name the full path', () => {
    const text =
      '{"resourceLogs":[{"resource":{"attributes":[{"key":"a","value":{"stringValue":"x"}},{"key":"b","value":{"boolValue":"yes"}}]}}]}';
    assert.equal(errorOf(text), 'resourceLogs[0].resource.attributes[1].value.boolValue: expected true or false');
    const nested = req(
      '{"body":{"kvlistValue":{"values":[{"key":"k","value":{"arrayValue":{"values":[{"doubleValue":"x"}]}}}]}}}',
    );
    assert.equal(
      errorOf(nested),
      `${P}.body.kvlistValue.values[0].value.arrayValue.values[0].doubleValue: expected a number or "NaN", "Infinity", "-Infinity"`,
    );
  });

  void test('wrong container types are rejected', () => {
    assert.equal(errorOf('{"resourceLogs":{}}'), 'resourceLogs: expected an array');
    assert.equal(errorOf('[]'), 'request body: expected an object');
    assert.equal(errorOf(req('{"attributes":[{"key":1}]}')), `${P}.attributes[0].key: expected a string`);
  });

  void test('an AnyValue with two value fields is rejected', () => {
    assert.equal(
      errorOf(req('{"body":{"stringValue":"a","intValue":"1"}}')),
      `${P}.body: AnyValue has more than one value field`,
    );
  });

  void test('bad base64 in bytesValue is rejected', () => {
    assert.equal(errorOf(req('{"body":{"bytesValue":"a*b"}}')), `${P}.body.bytesValue: expected a base64 string`);
    assert.equal(errorOf(req('{"body":{"bytesValue":"abcde"}}')), `${P}.body.bytesValue: expected a base64 string`);
  });

  void test('AnyValue nesting deeper than 64 levels is refused', () => {
    let v = '{"stringValue":"x"}';
    for (let i = 1; i < 65; i++) v = `{"arrayValue":{"values":[${v}]}}`;
    assert.match(errorOf(req(`{"body":${v}}`)), /AnyValue nested deeper than 64 levels$/);
  });

  void test('32-bit integers out of range are rejected', () => {
    assert.equal(errorOf(req('{"flags":4294967296}')), `${P}.flags: expected an integer between 0 and 4294967295`);
    assert.equal(
      errorOf(req('{"droppedAttributesCount":-1}')),
      `${P}.droppedAttributesCount: expected an integer between 0 and 4294967295`,
    );
  });
});

void describe('decodeLogsJson: accepted forms', () => {
  void test('hex ids are case-insensitive and "" means absent', () => {
    const rec = one(req('{"traceId":"0AF7651916CD43DD8448EB211C80319C","spanId":""}'));
    assert.deepStrictEqual(rec.traceId, new Uint8Array(Buffer.from('0af7651916cd43dd8448eb211c80319c', 'hex')));
    assert.equal(rec.spanId.length, 0);
  });

  void test('int64 as string or number; numbers beyond 2^53 are taken exactly from their digits', () => {
    assert.equal(one(req('{"timeUnixNano":"1764547200123456789"}')).timeUnixNano, 1_764_547_200_123_456_789n);
    assert.equal(one(req('{"timeUnixNano":1764547200123456789}')).timeUnixNano, 1_764_547_200_123_456_789n);
    assert.equal(one(req('{"timeUnixNano":1764547200}')).timeUnixNano, 1_764_547_200n);
    assert.deepStrictEqual(one(req('{"body":{"intValue":-9223372036854775808}}')).body, {
      kind: 'int',
      value: -(2n ** 63n),
    });
    assert.deepStrictEqual(one(req('{"body":{"intValue":"-42"}}')).body, { kind: 'int', value: -42n });
  });

  void test('the exact slow path keeps escaped strings and other fields intact', () => {
    const rec = one(
      req(
        '{"severityText":"a\\"b\\u00e9","timeUnixNano":18446744073709551615,"attributes":[{"key":"__proto__","value":{"stringValue":"\\n"}}]}',
      ),
    );
    assert.equal(rec.severityText, 'a"bé');
    assert.equal(rec.timeUnixNano, 2n ** 64n - 1n);
    assert.deepStrictEqual(rec.attributes, [{ key: '__proto__', value: { kind: 'string', value: '\n' } }]);
  });

  void test('bytesValue accepts standard and URL-safe base64, with or without padding', () => {
    const want = { kind: 'bytes', value: Uint8Array.from([0xfb, 0xff, 0xbf]) };
    assert.deepStrictEqual(one(req('{"body":{"bytesValue":"+/+/"}}')).body, want);
    assert.deepStrictEqual(one(req('{"body":{"bytesValue":"-_-_"}}')).body, want);
    assert.deepStrictEqual(one(req('{"body":{"bytesValue":"AQ"}}')).body, {
      kind: 'bytes',
      value: Uint8Array.from([1]),
    });
    assert.deepStrictEqual(one(req('{"body":{"bytesValue":"AQ=="}}')).body, {
      kind: 'bytes',
      value: Uint8Array.from([1]),
    });
  });

  void test('doubleValue accepts numbers, numeric strings and the special strings', () => {
    assert.deepStrictEqual(one(req('{"body":{"doubleValue":"NaN"}}')).body, { kind: 'double', value: NaN });
    assert.deepStrictEqual(one(req('{"body":{"doubleValue":"-Infinity"}}')).body, { kind: 'double', value: -Infinity });
    assert.deepStrictEqual(one(req('{"body":{"doubleValue":"Infinity"}}')).body, { kind: 'double', value: Infinity });
    assert.deepStrictEqual(one(req('{"body":{"doubleValue":2.5}}')).body, { kind: 'double', value: 2.5 });
    assert.deepStrictEqual(one(req('{"body":{"doubleValue":"1e3"}}')).body, { kind: 'double', value: 1000 });
  });

  void test('null means default everywhere; unknown and snake_case keys are ignored', () => {
    const rec = one(
      '{"resourceLogs":[{"resource":null,"schemaUrl":null,"extra":1,"scopeLogs":[{"scope":null,"logRecords":[' +
        '{"timeUnixNano":null,"severityNumber":null,"body":null,"attributes":null,"traceId":null,"flags":null,' +
        '"severity_text":"ignored","future_field":{"x":[1]}}]}]}]}',
    );
    assert.equal(rec.timeUnixNano, 0n);
    assert.equal(rec.severityText, '');
    assert.equal(rec.body, null);
    assert.deepStrictEqual(rec.attributes, []);
    assert.equal(rec.traceId.length, 0);
    assert.deepStrictEqual(rec.resource, { attributes: [], droppedAttributesCount: 0, schemaUrl: '' });
  });

  void test('an empty AnyValue object is an empty value; int 0 and "" are set values', () => {
    assert.deepStrictEqual(one(req('{"body":{}}')).body, { kind: 'empty' });
    assert.deepStrictEqual(one(req('{"body":{"intValue":0}}')).body, { kind: 'int', value: 0n });
    assert.deepStrictEqual(one(req('{"body":{"stringValue":""}}')).body, { kind: 'string', value: '' });
  });

  void test('32-bit integers may be numbers or decimal strings; a leading BOM is tolerated', () => {
    const rec = one('\uFEFF' + req('{"flags":"1","droppedAttributesCount":4294967295,"severityNumber":9}'));
    assert.equal(rec.flags, 1);
    assert.equal(rec.droppedAttributesCount, 4294967295);
    assert.equal(rec.severityNumber, 9);
  });

  void test('records of one scopeLogs share scope and resource objects', () => {
    const r = decodeLogsJson(
      '{"resourceLogs":[{"scopeLogs":[{"scope":{"name":"s"},"logRecords":[{},{}]},{"logRecords":[{}]}]}]}',
    );
    assert.ok(r.ok);
    const [a, b, c] = r.value;
    assert.ok(a && b && c);
    assert.equal(a.scope, b.scope);
    assert.notEqual(a.scope, c.scope);
    assert.equal(a.resource, c.resource);
  });
});
