/**
 * @module json-exact
 * The one JSON parser that keeps integers exact: an integer literal outside ±(2^53−1) becomes a `bigint`, where
 * `JSON.parse` would round it to a double (u64 nanosecond times and template ids must not round). Objects have a
 * null prototype, so no key (not even `__proto__`) is special. It never throws for bad input: it returns the
 * first problem with its offset.
 *
 * Two modes:
 * - `strict` (request bodies of `/v1/query`): rejects duplicate keys and numbers that overflow a double.
 * - `json_parse` (OTLP/JSON, whose first pass is `JSON.parse`): accepts exactly what `JSON.parse` accepts and
 *   gives the same values (the last duplicate key wins, `1e400` is `Infinity`), except for the exact integers.
 */
import { err, ok, type Result } from './result.js';

/** A parsed JSON value: objects have no prototype; integers beyond ±(2^53−1) are `bigint`. */
export type JsonValue =
  null | boolean | string | number | bigint | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** Deepest array/object nesting accepted. */
export const MAX_JSON_DEPTH = 256;

/** Why a text is not accepted. */
export interface JsonSyntaxError {
  /** `too_deep`: nesting beyond {@link MAX_JSON_DEPTH}; `syntax`: anything else. */
  readonly reason: 'syntax' | 'too_deep';
  /** What is wrong, without the offset (e.g. "expected ':' in JSON object"). */
  readonly message: string;
  /** UTF-16 offset of the offending character. */
  readonly at: number;
}

/** Options of {@link parseJsonExact}. */
export interface ParseJsonExactOptions {
  /** Default `strict` (see the module comment). */
  readonly mode?: 'strict' | 'json_parse';
}

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const HEX4 = /^[0-9A-Fa-f]{4}$/;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

class Failure {
  constructor(
    readonly reason: JsonSyntaxError['reason'],
    readonly message: string,
    readonly at: number,
  ) {}
}

class Parser {
  private pos = 0;
  constructor(
    private readonly text: string,
    private readonly strict: boolean,
  ) {}

  private fail(message: string, at = this.pos): never {
    throw new Failure('syntax', message, at);
  }

  private ws(): void {
    const t = this.text;
    let c = t.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++this.pos);
  }

  document(): JsonValue {
    const v = this.value(0);
    this.ws();
    if (this.pos < this.text.length) this.fail('unexpected text after the JSON value');
    return v;
  }

  private value(depth: number): JsonValue {
    this.ws();
    const t = this.text;
    if (this.pos >= t.length) return this.fail('unexpected end of JSON');
    const c = t.charCodeAt(this.pos);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth >= MAX_JSON_DEPTH)
        throw new Failure('too_deep', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, this.pos);
      return c === 0x7b ? this.object(depth) : this.array(depth);
    }
    if (c === 0x22 /* " */) return this.string();
    if (t.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (t.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    if (t.startsWith('null', this.pos)) {
      this.pos += 4;
      return null;
    }
    return this.number();
  }

  private object(depth: number): JsonValue {
    const t = this.text;
    const o = Object.create(null) as Record<string, JsonValue>;
    this.pos++;
    this.ws();
    if (t.charCodeAt(this.pos) === 0x7d /* } */) {
      this.pos++;
      return o;
    }
    for (;;) {
      this.ws();
      if (t.charCodeAt(this.pos) !== 0x22) this.fail('expected a string key in JSON object');
      const keyAt = this.pos;
      const k = this.string();
      if (this.strict && Object.prototype.hasOwnProperty.call(o, k))
        this.fail(`duplicate JSON key ${JSON.stringify(k)}`, keyAt);
      this.ws();
      if (t.charCodeAt(this.pos) !== 0x3a /* : */) this.fail("expected ':' in JSON object");
      this.pos++;
      o[k] = this.value(depth + 1);
      this.ws();
      const next = t.charCodeAt(this.pos);
      this.pos++;
      if (next === 0x7d) return o;
      if (next !== 0x2c /* , */) this.fail("expected ',' or '}' in JSON object", this.pos - 1);
    }
  }

  private array(depth: number): JsonValue {
    const t = this.text;
    const a: JsonValue[] = [];
    this.pos++;
    this.ws();
    if (t.charCodeAt(this.pos) === 0x5d /* ] */) {
      this.pos++;
      return a;
    }
    for (;;) {
      a.push(this.value(depth + 1));
      this.ws();
      const next = t.charCodeAt(this.pos);
      this.pos++;
      if (next === 0x5d) return a;
      if (next !== 0x2c) this.fail("expected ',' or ']' in JSON array", this.pos - 1);
    }
  }

  private number(): JsonValue {
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(this.text);
    if (m === null) return this.fail('unexpected character in JSON');
    const at = this.pos;
    this.pos += m[0].length;
    const n = Number(m[0]);
    if (m[1] === undefined && m[2] === undefined) return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    if (this.strict && !Number.isFinite(n)) this.fail('JSON number out of range', at);
    return n;
  }

  private string(): string {
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    // Fast path: no escape, so the value is a slice of the text.
    for (;;) {
      const c = t.charCodeAt(i);
      if (Number.isNaN(c)) this.fail('unterminated JSON string', start);
      if (c === 0x22) {
        this.pos = i + 1;
        return t.slice(start + 1, i);
      }
      if (c === 0x5c) break;
      if (c < 0x20) this.fail('control character in JSON string', i);
      i++;
    }
    let s = t.slice(start + 1, i);
    for (;;) {
      const c = t.charCodeAt(i);
      if (Number.isNaN(c)) this.fail('unterminated JSON string', start);
      if (c === 0x22) {
        this.pos = i + 1;
        return s;
      }
      if (c < 0x20) this.fail('control character in JSON string', i);
      if (c !== 0x5c) {
        s += t[i];
        i++;
        continue;
      }
      const e = t[i + 1];
      const simple = e === undefined ? undefined : ESCAPES[e];
      if (simple !== undefined) {
        s += simple;
        i += 2;
      } else if (e === 'u' && HEX4.test(t.slice(i + 2, i + 6))) {
        s += String.fromCharCode(parseInt(t.slice(i + 2, i + 6), 16));
        i += 6;
      } else this.fail('invalid escape in JSON string', i);
    }
  }
}

/**
 * Parses JSON text, keeping integers beyond ±(2^53−1) exact as `bigint` (see the module comment for the modes).
 * Never throws for bad input.
 *
 * @example
 * parseJsonExact('{"t": 18446744073709551615}') // ok: { t: 18446744073709551615n }
 * parseJsonExact('{"a": 1, "a": 2}')            // error: duplicate JSON key "a" (at 9)
 */
export function parseJsonExact(text: string, options: ParseJsonExactOptions = {}): Result<JsonValue, JsonSyntaxError> {
  try {
    return ok(new Parser(text, (options.mode ?? 'strict') === 'strict').document());
  } catch (e) {
    if (e instanceof Failure) return err({ reason: e.reason, message: e.message, at: e.at });
    throw e;
  }
}
