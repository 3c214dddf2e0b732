/**
 * @module responses.test
 * Response bodies: empty ExportLogsServiceResponse and google.rpc.Status in both encodings.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { encodeExportLogsResponse, encodeRpcStatus } from './responses.js';

void describe('responses', () => {
  void test('a full-success response is zero bytes in protobuf and {} in JSON', () => {
    assert.equal(encodeExportLogsResponse('protobuf').length, 0);
    assert.equal(Buffer.from(encodeExportLogsResponse('json')).toString(), '{}');
  });

  void test('google.rpc.Status protobuf carries code as field 1 varint and message as field 2 string', () => {
    const bytes = encodeRpcStatus('protobuf', 3, 'bad');
    assert.deepStrictEqual([...bytes], [0x08, 0x03, 0x12, 0x03, 0x62, 0x61, 0x64]);
  });

  void test('google.rpc.Status omits proto3 defaults and sign-extends a negative code to 10 bytes', () => {
    assert.equal(encodeRpcStatus('protobuf', 0, '').length, 0);
    assert.deepStrictEqual(
      [...encodeRpcStatus('protobuf', -1, '')],
      [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
    );
  });

  void test('google.rpc.Status protobuf with a long UTF-8 message uses a multi-byte length', () => {
    const msg = 'é'.repeat(100);
    const bytes = encodeRpcStatus('protobuf', 14, msg);
    assert.deepStrictEqual([...bytes.subarray(0, 5)], [0x08, 0x0e, 0x12, 0xc8, 0x01]);
    assert.equal(Buffer.from(bytes.subarray(5)).toString('utf8'), msg);
  });

  void test('google.rpc.Status JSON has code and message keys', () => {
    assert.deepStrictEqual(JSON.parse(Buffer.from(encodeRpcStatus('json', 3, 'bad "x"')).toString()), {
      code: 3,
      message: 'bad "x"',
    });
  });
});
