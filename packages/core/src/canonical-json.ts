/**
 * @module canonical-json
 * Sluice's deterministic proto3-JSON rendering of AnyValue/KeyValue (lowerCamelCase keys, int64 as decimal
 * strings, bytes as standard base64, order preserved, non-finite doubles as "NaN"/"Infinity"/"-Infinity").
 * This is the stored form of `attributes`, `resource_attributes`, `scope_attributes` and structured bodies,
 * and the wire form in query responses.
 */
import type { AnyValue, KeyValue } from './any-value.js';
import { assertNever } from './result.js';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Standard base64 with padding, without Buffer (core does no I/O and imports no node modules). */
export function toBase64(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + B64[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64[(n >> 18) & 63]! + B64[(n >> 12) & 63]! + B64[(n >> 6) & 63]! + '=';
  }
  return out;
}

/** Lowercase hex of raw bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += (b < 16 ? '0' : '') + b.toString(16);
  return out;
}

/** Renders one AnyValue in canonical proto3 JSON. */
export function anyValueToJson(value: AnyValue): string {
  switch (value.kind) {
    case 'string':
      return `{"stringValue":${JSON.stringify(value.value)}}`;
    case 'bool':
      return `{"boolValue":${value.value ? 'true' : 'false'}}`;
    case 'int':
      return `{"intValue":"${value.value.toString()}"}`;
    case 'double': {
      const v = value.value;
      const text = Number.isNaN(v)
        ? '"NaN"'
        : v === Infinity
          ? '"Infinity"'
          : v === -Infinity
            ? '"-Infinity"'
            : JSON.stringify(v);
      return `{"doubleValue":${text}}`;
    }
    case 'bytes':
      return `{"bytesValue":"${toBase64(value.value)}"}`;
    case 'array':
      return `{"arrayValue":{"values":[${value.values.map(anyValueToJson).join(',')}]}}`;
    case 'kvlist':
      return `{"kvlistValue":{"values":${keyValuesToJson(value.values)}}}`;
    case 'empty':
      return '{}';
    default:
      return assertNever(value, 'AnyValue');
  }
}

/** Renders a KeyValue list as a canonical proto3-JSON array (`[]` when empty). */
export function keyValuesToJson(values: readonly KeyValue[]): string {
  let out = '[';
  for (let i = 0; i < values.length; i++) {
    const kv = values[i]!;
    if (i > 0) out += ',';
    out += `{"key":${JSON.stringify(kv.key)},"value":${anyValueToJson(kv.value)}}`;
  }
  return out + ']';
}
