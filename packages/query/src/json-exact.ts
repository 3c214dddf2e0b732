/**
 * @module json-exact
 * A small strict JSON reader for request bodies that keeps integers exact: an integer outside the safe range
 * becomes a `bigint` (u64 template ids and nanosecond times above 2^53 must not round). It rejects duplicate
 * keys (as the reference's serde parser does) and nesting deeper than {@link MAX_JSON_DEPTH}, and never throws.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';
import type { QueryError } from './errors.js';
import { queryError } from './errors.js';

/** A JSON value; objects have no prototype and integers beyond ±(2^53−1) are `bigint`. */
export type JsonValue =
  null | boolean | string | number | bigint | readonly JsonValue[] | { readonly [k: string]: JsonValue };

/** Deepest accepted array/object nesting. */
export const MAX_JSON_DEPTH = 256;

class Bad {
  constructor(
    readonly message: string,
    readonly at: number,
  ) {}
}

/** Parses JSON text exactly (see the module comment). Errors cite the offset of the offending character. */
export function parseJsonExact(text: string): Result<JsonValue, QueryError> {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const fail = (message: string): never => {
    throw new Bad(message, i);
  };
  const value = (depth: number): JsonValue => {
    ws();
    const c = text[i];
    if (c === undefined) return fail('unexpected end of JSON');
    if (c === '{' || c === '[') {
      if (depth >= MAX_JSON_DEPTH) fail(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      i++;
      ws();
      if (c === '[') {
        const arr: JsonValue[] = [];
        if (text[i] === ']') {
          i++;
          return arr;
        }
        for (;;) {
          arr.push(value(depth + 1));
          ws();
          if (text[i] === ',') i++;
          else if (text[i] === ']') {
            i++;
            return arr;
          } else fail("expected ',' or ']' in JSON array");
        }
      }
      const obj = Object.create(null) as Record<string, JsonValue>;
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a string key in JSON object');
        const keyAt = i;
        const k = str();
        if (Object.prototype.hasOwnProperty.call(obj, k)) {
          throw new Bad(`duplicate JSON key ${JSON.stringify(k)}`, keyAt);
        }
        ws();
        if (text[i] !== ':') fail("expected ':' in JSON object");
        i++;
        obj[k] = value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return obj;
        } else fail("expected ',' or '}' in JSON object");
      }
    }
    if (c === '"') return str();
    for (const [lit, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return v;
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail('unexpected character in JSON');
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const b = BigInt(m[0]);
      return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
    }
    const x = Number(m[0]);
    if (!Number.isFinite(x)) fail('JSON number out of range');
    return x;
  };
  const str = (): string => {
    const start = i;
    i++;
    let s = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Bad('unterminated JSON string', start);
      if (c === '"') {
        i++;
        return s;
      }
      if (c.charCodeAt(0) < 0x20) fail('control character in JSON string');
      if (c === '\\') {
        const e = text[i + 1];
        const simple: Record<string, string> = {
          '"': '"',
          '\\': '\\',
          '/': '/',
          b: '\b',
          f: '\f',
          n: '\n',
          r: '\r',
          t: '\t',
        };
        if (e !== undefined && simple[e] !== undefined) {
          s += simple[e];
          i += 2;
        } else if (e === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) {
          s += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else fail('invalid escape in JSON string');
        continue;
      }
      s += c;
      i++;
    }
  };
  try {
    const v = value(0);
    ws();
    if (i < text.length) fail('unexpected text after the JSON value');
    return ok(v);
  } catch (e) {
    if (e instanceof Bad) {
      return err(
        queryError(`request body is not valid JSON: ${e.message} at ${e.at}`, e.at, Math.min(e.at + 1, text.length)),
      );
    }
    throw e;
  }
}
