/**
 * @module canonical-json-parse
 * The inverse of core's `keyValuesToJson` / `anyValueToJson`: canonical proto3 JSON back into the record model
 * (int64 decimal strings → bigint, base64 → bytes, "NaN"/"Infinity"/"-Infinity" → non-finite doubles).
 * Known loss in the forward direction: a double `-0` is rendered as `0`.
 */
import type { AnyValue, KeyValue } from '@sluice/core';

/** Thrown when stored JSON is not canonical AnyValue/KeyValue JSON. */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
}

function fail(what: string): never {
  throw new CanonicalJsonError(`not canonical AnyValue JSON: ${what}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const INT64_RE = /^-?(0|[1-9][0-9]*)$/;

function base64ToBytes(s: string): Uint8Array {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) fail('bytesValue is not padded standard base64');
  const buf = Buffer.from(s, 'base64');
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function toDouble(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  return fail('doubleValue');
}

/** Converts an already `JSON.parse`d canonical AnyValue object. */
export function anyValueFromJsonObject(v: unknown): AnyValue {
  if (!isObject(v)) return fail('value is not an object');
  const keys = Object.keys(v);
  if (keys.length === 0) return { kind: 'empty' };
  if (keys.length !== 1) fail(`more than one member (${keys.join(', ')})`);
  const k = keys[0]!;
  const x = v[k];
  switch (k) {
    case 'stringValue':
      return typeof x === 'string' ? { kind: 'string', value: x } : fail('stringValue');
    case 'boolValue':
      return typeof x === 'boolean' ? { kind: 'bool', value: x } : fail('boolValue');
    case 'intValue':
      return typeof x === 'string' && INT64_RE.test(x) ? { kind: 'int', value: BigInt(x) } : fail('intValue');
    case 'doubleValue':
      return { kind: 'double', value: toDouble(x) };
    case 'bytesValue':
      return typeof x === 'string' ? { kind: 'bytes', value: base64ToBytes(x) } : fail('bytesValue');
    case 'arrayValue': {
      if (!isObject(x) || !Array.isArray(x.values)) return fail('arrayValue');
      return { kind: 'array', values: x.values.map(anyValueFromJsonObject) };
    }
    case 'kvlistValue': {
      if (!isObject(x) || !Array.isArray(x.values)) return fail('kvlistValue');
      return { kind: 'kvlist', values: keyValuesFromJsonArray(x.values) };
    }
    default:
      return fail(`unknown member ${k}`);
  }
}

/** Converts an already `JSON.parse`d canonical KeyValue array. */
export function keyValuesFromJsonArray(v: unknown): KeyValue[] {
  if (!Array.isArray(v)) return fail('KeyValue list is not an array');
  return v.map((kv: unknown) => {
    if (!isObject(kv) || typeof kv.key !== 'string') return fail('KeyValue without a string key');
    return { key: kv.key, value: anyValueFromJsonObject(kv.value) };
  });
}

/** Parses core's `anyValueToJson` output back into an AnyValue. */
export function parseAnyValueJson(json: string): AnyValue {
  return anyValueFromJsonObject(JSON.parse(json));
}

/** Parses core's `keyValuesToJson` output back into a KeyValue list. */
export function parseKeyValuesJson(json: string): KeyValue[] {
  return keyValuesFromJsonArray(JSON.parse(json));
}
