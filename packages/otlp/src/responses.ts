/**
 * @module responses
 * Response bodies for OTLP/HTTP: the empty-success `ExportLogsServiceResponse` and the `google.rpc.Status` used
 * as the body of 4xx/5xx answers, each in the request's encoding.
 */
import { WIRE } from './wire-reader.js';
import { WireWriter } from './wire-writer.js';

/** The encoding of a request and therefore of its response. */
export type OtlpEncoding = 'protobuf' | 'json';

const JSON_EMPTY_OBJECT = new TextEncoder().encode('{}');

/**
 * A full-success `ExportLogsServiceResponse` (`partial_success` unset): zero bytes in protobuf, `{}` in JSON.
 * Returns a fresh array each call.
 */
export function encodeExportLogsResponse(encoding: OtlpEncoding): Uint8Array {
  return encoding === 'protobuf' ? new Uint8Array(0) : JSON_EMPTY_OBJECT.slice();
}

/**
 * A `google.rpc.Status` (field 1 `code` int32, field 2 `message` string; no details). In protobuf, defaults
 * (code 0, empty message) are omitted as proto3 does; JSON always carries both keys: `{"code":3,"message":"…"}`.
 */
export function encodeRpcStatus(encoding: OtlpEncoding, code: number, message: string): Uint8Array {
  const c = code | 0;
  if (encoding === 'json') return new TextEncoder().encode(JSON.stringify({ code: c, message }));
  const w = new WireWriter(16 + message.length * 3);
  if (c !== 0) {
    w.key(1, WIRE.VARINT);
    w.int32(c);
  }
  if (message !== '') {
    w.key(2, WIRE.LEN);
    w.string(message);
  }
  return w.result();
}
