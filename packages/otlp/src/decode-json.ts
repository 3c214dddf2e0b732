/**
 * @module decode-json
 * Decoder of an OTLP/JSON `ExportLogsServiceRequest` into flat {@link LogRecord}s (same sharing of
 * `resource`/`scope` objects as the protobuf decoder).
 *
 * Accepted forms (OTLP/JSON = proto3 JSON with OTLP deviations): lowerCamelCase keys only; unknown keys ignored;
 * `null` = default; 64-bit integers as decimal strings or JSON numbers (exactly: see {@link decodeLogsJson});
 * 32-bit integers as numbers or decimal strings; enums as integers only; `traceId`/`spanId` as hex (any case,
 * `""` = absent); `bytesValue` as base64 (standard or URL-safe, padding optional); `doubleValue` as a number, a
 * numeric string or `"NaN"`/`"Infinity"`/`"-Infinity"`. Type errors name the JSON path of the bad value.
 */
import { isUtf8 } from 'node:buffer';
import type { AnyValue, KeyValue, LogRecord, Result } from '@sluice/core';
import { EMPTY_VALUE, err, ok, parseJsonExact } from '@sluice/core';
import type { OtlpDecodeError } from './errors.js';
import { DecodeFailure, decodeError } from './errors.js';
import { MAX_ANY_VALUE_DEPTH } from './decode-protobuf.js';

type JsonObject = Record<string, unknown>;

const UINT64_MAX = (1n << 64n) - 1n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UNSIGNED_DIGITS = /^\d+$/;
const SIGNED_DIGITS = /^-?\d+$/;
const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const NO_BYTES = new Uint8Array(0);

/** Signal: a JSON number lost precision in `JSON.parse`; decode again from the exact parse. */
class NeedExactIntegers {}

/**
 * Decodes an OTLP/JSON `ExportLogsServiceRequest`.
 *
 * 64-bit integers: decimal strings are always exact. JSON numbers are exact when they are safe integers; when a
 * number beyond ±(2^53−1) appears where an int64/uint64 is expected, the body is re-parsed with a small exact
 * parser so the value is taken from its digits, not from a rounded double. Never throws; invalid JSON gives
 * "request body is not valid JSON", invalid UTF-8 "request body is not valid UTF-8".
 */
export function decodeLogsJson(body: Uint8Array | string): Result<LogRecord[], OtlpDecodeError> {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    text = buf.toString('utf8');
    if (text.indexOf('\uFFFD') !== -1 && !isUtf8(buf)) return err(decodeError('request body is not valid UTF-8'));
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return err(decodeError('request body is not valid JSON'));
  }
  try {
    return ok(new JsonWalker(false).request(root));
  } catch (e) {
    if (e instanceof DecodeFailure) return err(decodeError(e.message));
    if (!(e instanceof NeedExactIntegers)) throw e;
  }
  // Same acceptance and values as the JSON.parse above, except that big integers stay exact.
  const exact = parseJsonExact(text, { mode: 'json_parse' });
  if (!exact.ok) {
    return err(
      decodeError(
        exact.error.reason === 'too_deep' ? 'request body nests JSON too deeply' : 'request body is not valid JSON',
      ),
    );
  }
  try {
    return ok(new JsonWalker(true).request(exact.value));
  } catch (e) {
    if (e instanceof DecodeFailure) return err(decodeError(e.message));
    throw e;
  }
}

interface MutableResource {
  attributes: KeyValue[];
  droppedAttributesCount: number;
  schemaUrl: string;
}

interface MutableScope {
  name: string;
  version: string;
  attributes: KeyValue[];
  droppedAttributesCount: number;
  schemaUrl: string;
}

/** Walks a parsed request; `path` holds the JSON path of the value being read, for error messages. */
class JsonWalker {
  private readonly path: (string | number)[] = [];

  /** `exact`: the tree comes from {@link parseJsonExact} (big integers are `bigint`). */
  constructor(private readonly exact: boolean) {}

  private fail(message: string): never {
    let p = '';
    for (const seg of this.path) p += typeof seg === 'number' ? `[${seg}]` : p === '' ? seg : `.${seg}`;
    throw new DecodeFailure(`${p === '' ? 'request body' : p}: ${message}`);
  }

  request(root: unknown): LogRecord[] {
    const out: LogRecord[] = [];
    const o = this.object(root);
    if (o === null) return out;
    this.path.push('resourceLogs');
    const rls = this.array(o.resourceLogs);
    for (let i = 0; i < rls.length; i++) {
      this.path.push(i);
      this.resourceLogs(rls[i], out);
      this.path.pop();
    }
    this.path.pop();
    return out;
  }

  /** Runs `read` with `key` appended to the JSON path that error messages cite. */
  private at<T>(key: string | number, read: () => T): T {
    this.path.push(key);
    try {
      return read();
    } finally {
      this.path.pop();
    }
  }

  /** Decodes `items` (a JSON array at `key`) element by element, each under its index in the path. */
  private each(key: string, items: unknown, visit: (item: unknown) => void): void {
    this.at(key, () => {
      const list = this.array(items);
      for (let i = 0; i < list.length; i++) this.at(i, () => visit(list[i]));
    });
  }

  private resourceLogs(v: unknown, out: LogRecord[]): void {
    const o = this.object(v);
    if (o === null) return;
    const resource: MutableResource = { attributes: [], droppedAttributesCount: 0, schemaUrl: '' };
    this.at('resource', () => {
      const r = this.object(o.resource);
      if (r === null) return;
      resource.attributes = this.at('attributes', () => this.keyValues(r.attributes, 0));
      resource.droppedAttributesCount = this.at('droppedAttributesCount', () => this.uint32(r.droppedAttributesCount));
    });
    resource.schemaUrl = this.at('schemaUrl', () => this.string(o.schemaUrl));
    this.each('scopeLogs', o.scopeLogs, (item) => this.scopeLogs(item, resource, out));
  }

  private scopeLogs(v: unknown, resource: MutableResource, out: LogRecord[]): void {
    const o = this.object(v);
    if (o === null) return;
    const scope: MutableScope = { name: '', version: '', attributes: [], droppedAttributesCount: 0, schemaUrl: '' };
    this.at('scope', () => {
      const s = this.object(o.scope);
      if (s === null) return;
      scope.name = this.at('name', () => this.string(s.name));
      scope.version = this.at('version', () => this.string(s.version));
      scope.attributes = this.at('attributes', () => this.keyValues(s.attributes, 0));
      scope.droppedAttributesCount = this.at('droppedAttributesCount', () => this.uint32(s.droppedAttributesCount));
    });
    scope.schemaUrl = this.at('schemaUrl', () => this.string(o.schemaUrl));
    this.each('logRecords', o.logRecords, (item) => {
      const rec = this.logRecord(item, resource, scope);
      if (rec !== null) out.push(rec);
    });
  }

  private logRecord(v: unknown, resource: MutableResource, scope: MutableScope): LogRecord | null {
    const o = this.object(v);
    if (o === null) return null;
    const path = this.path;
    path.push('timeUnixNano');
    const timeUnixNano = this.uint64(o.timeUnixNano);
    path[path.length - 1] = 'observedTimeUnixNano';
    const observedTimeUnixNano = this.uint64(o.observedTimeUnixNano);
    path[path.length - 1] = 'severityNumber';
    const severityNumber = this.enumValue(o.severityNumber);
    path[path.length - 1] = 'severityText';
    const severityText = this.string(o.severityText);
    path[path.length - 1] = 'body';
    const body = o.body === undefined || o.body === null ? null : this.anyValue(o.body, 1);
    path[path.length - 1] = 'attributes';
    const attributes = this.keyValues(o.attributes, 0);
    path[path.length - 1] = 'droppedAttributesCount';
    const droppedAttributesCount = this.uint32(o.droppedAttributesCount);
    path[path.length - 1] = 'flags';
    const flags = this.uint32(o.flags);
    path[path.length - 1] = 'traceId';
    const traceId = this.hexId(o.traceId, 16);
    path[path.length - 1] = 'spanId';
    const spanId = this.hexId(o.spanId, 8);
    path[path.length - 1] = 'eventName';
    const eventName = this.string(o.eventName);
    path.pop();
    return {
      timeUnixNano,
      observedTimeUnixNano,
      severityNumber,
      severityText,
      body,
      attributes,
      droppedAttributesCount,
      flags,
      traceId,
      spanId,
      eventName,
      resource,
      scope,
    };
  }

  private keyValues(v: unknown, depth: number): KeyValue[] {
    const a = this.array(v);
    const out: KeyValue[] = [];
    for (let i = 0; i < a.length; i++) {
      this.path.push(i);
      const o = this.object(a[i]);
      if (o !== null) {
        this.path.push('key');
        const key = this.string(o.key);
        this.path[this.path.length - 1] = 'value';
        const value = o.value === undefined || o.value === null ? EMPTY_VALUE : this.anyValue(o.value, depth + 1);
        this.path.pop();
        out.push({ key, value });
      }
      this.path.pop();
    }
    return out;
  }

  private anyValue(v: unknown, depth: number): AnyValue {
    if (depth > MAX_ANY_VALUE_DEPTH) this.fail(`AnyValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
    const o = this.object(v);
    if (o === null) return EMPTY_VALUE;
    let result: AnyValue = EMPTY_VALUE;
    let members = 0;
    for (const k in o) {
      const x = o[k];
      if (x === null || x === undefined) continue;
      let next: AnyValue;
      this.path.push(k);
      switch (k) {
        case 'stringValue':
          next = { kind: 'string', value: this.string(x) };
          break;
        case 'boolValue':
          if (typeof x !== 'boolean') this.fail('expected true or false');
          next = { kind: 'bool', value: x };
          break;
        case 'intValue':
          next = { kind: 'int', value: this.int64(x) };
          break;
        case 'doubleValue':
          next = { kind: 'double', value: this.double(x) };
          break;
        case 'bytesValue':
          next = { kind: 'bytes', value: this.base64(x) };
          break;
        case 'arrayValue': {
          const av = this.object(x);
          const values: AnyValue[] = [];
          if (av !== null) {
            this.path.push('values');
            const items = this.array(av.values);
            for (let i = 0; i < items.length; i++) {
              this.path.push(i);
              values.push(items[i] === null ? EMPTY_VALUE : this.anyValue(items[i], depth + 1));
              this.path.pop();
            }
            this.path.pop();
          }
          next = { kind: 'array', values };
          break;
        }
        case 'kvlistValue': {
          const kv = this.object(x);
          let values: KeyValue[] = [];
          if (kv !== null) {
            this.path.push('values');
            values = this.keyValues(kv.values, depth);
            this.path.pop();
          }
          next = { kind: 'kvlist', values };
          break;
        }
        default:
          this.path.pop();
          continue; // unknown key (incl. stringValueStrindex, which logs cannot resolve)
      }
      this.path.pop();
      if (++members > 1) this.fail('AnyValue has more than one value field');
      result = next;
    }
    return result;
  }

  private object(v: unknown): JsonObject | null {
    if (v === null || v === undefined) return null;
    if (typeof v !== 'object' || Array.isArray(v)) this.fail('expected an object');
    return v as JsonObject;
  }

  private array(v: unknown): readonly unknown[] {
    if (v === null || v === undefined) return [];
    if (!Array.isArray(v)) this.fail('expected an array');
    return v;
  }

  private string(v: unknown): string {
    if (typeof v === 'string') return v;
    if (v === null || v === undefined) return '';
    return this.fail('expected a string');
  }

  /** A JSON number that is an integer but may have been rounded by JSON.parse. */
  private exactInteger(v: number): bigint {
    if (Number.isSafeInteger(v)) return BigInt(v);
    if (!this.exact) throw new NeedExactIntegers();
    return this.fail('expected an integer string (this number is not an exact integer)');
  }

  /** A 64-bit integer given as a decimal string, a JSON number or (exact re-parse) a bigint; `null` when absent. */
  private integer64(v: unknown): bigint | null {
    if (typeof v === 'string') {
      if (!SIGNED_DIGITS.test(v)) this.fail('expected an integer string');
      return BigInt(v);
    }
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) this.fail('expected an integer string');
      return this.exactInteger(v);
    }
    if (typeof v === 'bigint') return v;
    if (v === null || v === undefined) return null;
    return this.fail('expected an integer string');
  }

  private uint64(v: unknown): bigint {
    const n = this.integer64(v) ?? 0n;
    if (n < 0n || n > UINT64_MAX) this.fail('integer out of range for uint64');
    return n;
  }

  private int64(v: unknown): bigint {
    const n = this.integer64(v);
    if (n === null) return this.fail('expected an integer string');
    if (n < INT64_MIN || n > INT64_MAX) this.fail('integer out of range for int64');
    return n;
  }

  private uint32(v: unknown): number {
    if (typeof v === 'number') {
      if (Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return v;
    } else if (typeof v === 'string') {
      if (UNSIGNED_DIGITS.test(v)) {
        const n = Number(v);
        if (n <= 0xffffffff) return n;
      }
    } else if (v === null || v === undefined) {
      return 0;
    }
    return this.fail('expected an integer between 0 and 4294967295');
  }

  private enumValue(v: unknown): number {
    if (typeof v === 'number' && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff) return v;
    if (v === null || v === undefined) return 0;
    if (typeof v === 'string') return this.fail('expected an integer (enum names are not accepted)');
    return this.fail('expected a 32-bit integer');
  }

  private double(v: unknown): number {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') return Number(v);
    if (typeof v === 'string') {
      if (v === 'NaN') return NaN;
      if (v === 'Infinity') return Infinity;
      if (v === '-Infinity') return -Infinity;
      if (DECIMAL.test(v)) return Number(v);
    }
    return this.fail('expected a number or "NaN", "Infinity", "-Infinity"');
  }

  private hexId(v: unknown, bytes: number): Uint8Array {
    if (v === null || v === undefined || v === '') return NO_BYTES;
    if (typeof v !== 'string' || v.length !== bytes * 2 || !HEX.test(v)) {
      return this.fail(`expected ${bytes * 2} hex characters or ""`);
    }
    return new Uint8Array(Buffer.from(v, 'hex'));
  }

  private base64(v: unknown): Uint8Array {
    if (typeof v !== 'string' || !BASE64.test(v) || v.replace(/=+$/, '').length % 4 === 1) {
      return this.fail('expected a base64 string');
    }
    return new Uint8Array(Buffer.from(v, 'base64'));
  }
}
