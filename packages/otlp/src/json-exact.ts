/**
 * @module json-exact
 * A small JSON parser used only as the slow path of OTLP/JSON decoding: it yields the same values as
 * `JSON.parse`, except that an integer literal outside the safe-integer range becomes an exact `bigint`
 * (JSON.parse would round it to a double). Objects have a null prototype. It is only run on text that
 * `JSON.parse` has already accepted, so it does not re-diagnose syntax.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';

/** Deepest array/object nesting the exact parser follows. */
export const MAX_JSON_NESTING = 256;

const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

class Parser {
  pos = 0;
  constructor(readonly text: string) {}

  ws(): void {
    const t = this.text;
    let c = t.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++this.pos);
  }

  value(depth: number): unknown {
    this.ws();
    const t = this.text;
    const c = t.charCodeAt(this.pos);
    if (c === 0x7b /* { */) {
      if (depth >= MAX_JSON_NESTING) throw new TooDeep();
      const o: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      this.pos++;
      this.ws();
      if (t.charCodeAt(this.pos) === 0x7d) {
        this.pos++;
        return o;
      }
      for (;;) {
        this.ws();
        const k = this.string();
        this.ws();
        this.pos++; // ':'
        o[k] = this.value(depth + 1);
        this.ws();
        if (t.charCodeAt(this.pos++) === 0x7d) return o; // '}' else ','
      }
    }
    if (c === 0x5b /* [ */) {
      if (depth >= MAX_JSON_NESTING) throw new TooDeep();
      const a: unknown[] = [];
      this.pos++;
      this.ws();
      if (t.charCodeAt(this.pos) === 0x5d) {
        this.pos++;
        return a;
      }
      for (;;) {
        a.push(this.value(depth + 1));
        this.ws();
        if (t.charCodeAt(this.pos++) === 0x5d) return a;
      }
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
    NUMBER.lastIndex = this.pos;
    const m = NUMBER.exec(t);
    if (m === null) throw new TooDeep(); // unreachable for text JSON.parse accepted
    this.pos += m[0].length;
    const n = Number(m[0]);
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) return BigInt(m[0]);
    return n;
  }

  string(): string {
    const t = this.text;
    const start = this.pos;
    let i = start + 1;
    let escaped = false;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 0x5c) {
        escaped = true;
        i += 2;
      } else if (c === 0x22 || Number.isNaN(c)) break;
      else i++;
    }
    this.pos = i + 1;
    return escaped ? (JSON.parse(t.slice(start, i + 1)) as string) : t.slice(start + 1, i);
  }
}

class TooDeep {}

/**
 * Parses JSON text that `JSON.parse` accepted, keeping integers beyond ±(2^53−1) exact as `bigint`.
 * Fails only when nesting exceeds {@link MAX_JSON_NESTING}.
 */
export function parseJsonExact(text: string): Result<unknown, 'too_deep'> {
  try {
    return ok(new Parser(text).value(0));
  } catch (e) {
    if (e instanceof TooDeep) return err('too_deep');
    throw e;
  }
}
