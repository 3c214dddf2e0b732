/**
 * @module json-exact.test
 * The exact JSON parser: the same values as `JSON.parse` except exact big integers, strict-mode refusals
 * (duplicate keys, overflowing numbers), the depth cap, and a specific message and offset for each syntax error.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, parseJsonExact, type JsonValue } from './json-exact.js';

/** A prototype-free, bigint-aware rendering for comparing trees. */
function render(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : Object.is(x, -0) ? '-0' : x));
}

/** The same, with exact integers rounded as JSON.parse rounds them (the one intended difference). */
function renderRounded(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : Object.is(x, -0) ? '-0' : x));
}

function value(text: string, mode?: 'strict' | 'json_parse'): JsonValue {
  const r = parseJsonExact(text, mode === undefined ? {} : { mode });
  if (!r.ok) assert.fail(`${text}: ${r.error.message} at ${r.error.at}`);
  return r.value;
}

function failure(text: string, mode?: 'strict' | 'json_parse') {
  const r = parseJsonExact(text, mode === undefined ? {} : { mode });
  assert.ok(!r.ok, `${text} should be refused`);
  return r.error;
}

const parsesWithJsonParse = (s: string): boolean => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
};

describe('parseJsonExact', () => {
  test('gives the same values as JSON.parse, big integers aside (property)', () => {
    fc.assert(
      fc.property(fc.json({ depthSize: 'small' }), (text) => {
        for (const mode of ['strict', 'json_parse'] as const) {
          assert.equal(renderRounded(value(text, mode)), render(JSON.parse(text)));
        }
      }),
      { numRuns: 500 },
    );
  });

  test('accepts exactly what JSON.parse accepts in json_parse mode, and never throws (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json().map((j) => j.slice(0, Math.max(0, j.length - 1))),
          fc.json(),
        ),
        (text) => {
          assert.equal(parseJsonExact(text, { mode: 'json_parse' }).ok, parsesWithJsonParse(text), text);
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('integers beyond ±(2^53−1) are exact bigints; safe integers and decimals stay numbers', () => {
    assert.equal(value('18446744073709551615'), 18446744073709551615n);
    assert.equal(value('-9223372036854775808'), -9223372036854775808n);
    assert.equal(value('9007199254740993'), 9007199254740993n);
    assert.equal(value('9007199254740991'), 9007199254740991);
    assert.equal(value('-9007199254740991'), -9007199254740991);
    assert.equal(value('1.5e3'), 1500);
    assert.equal(value('12345678901234567890.5'), 12345678901234567000);
    assert.ok(Object.is(value('-0'), -0));
    const tree = value('{"a":[1,{"t":1767225600000000000123}]}') as { a: [number, { t: bigint }] };
    assert.equal(tree.a[1].t, 1767225600000000000123n);
  });

  test('objects have no prototype and __proto__ is an ordinary key', () => {
    const o = value('{"__proto__": {"polluted": true}, "constructor": 1}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(o), null);
    assert.deepEqual(Object.keys(o), ['__proto__', 'constructor']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('strict mode refuses a duplicate key at its offset; json_parse mode keeps the last, as JSON.parse does', () => {
    const e = failure('{"a": 1, "a": 2}');
    assert.deepEqual(e, { reason: 'syntax', message: 'duplicate JSON key "a"', at: 9 });
    assert.equal(render(value('{"a": 1, "a": 2}', 'json_parse')), render(JSON.parse('{"a": 1, "a": 2}')));
  });

  test('strict mode refuses a number that overflows a double; json_parse mode gives Infinity', () => {
    assert.deepEqual(failure('[1e400]'), { reason: 'syntax', message: 'JSON number out of range', at: 1 });
    assert.deepEqual(value('[1e400, -1e400]', 'json_parse'), [Infinity, -Infinity]);
  });

  test(`nesting is accepted to ${MAX_JSON_DEPTH} levels and refused as too_deep beyond`, () => {
    const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
    assert.ok(parseJsonExact(nested(MAX_JSON_DEPTH)).ok);
    for (const mode of ['strict', 'json_parse'] as const) {
      const e = failure(nested(MAX_JSON_DEPTH + 1), mode);
      assert.equal(e.reason, 'too_deep');
      assert.equal(e.message, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      assert.equal(e.at, MAX_JSON_DEPTH);
    }
  });

  test('each syntax error has a specific message and the offset of the offending character', () => {
    const cases: [string, string, number][] = [
      ['', 'unexpected end of JSON', 0],
      ['   ', 'unexpected end of JSON', 3],
      ['{"a": 1,}', 'expected a string key in JSON object', 8],
      ['{"a" 1}', "expected ':' in JSON object", 5],
      ['{"a": 1 "b": 2}', "expected ',' or '}' in JSON object", 8],
      ['[1 2]', "expected ',' or ']' in JSON array", 3],
      ['[1,]', 'unexpected character in JSON', 3],
      ['"abc', 'unterminated JSON string', 0],
      ['"a\\qb"', 'invalid escape in JSON string', 2],
      ['"a\\u12G4"', 'invalid escape in JSON string', 2],
      ['"a\nb"', 'control character in JSON string', 2],
      ['{"q": "x"} trailing', 'unexpected text after the JSON value', 11],
      ['tru', 'unexpected character in JSON', 0],
      ['\ufeff{}', 'unexpected character in JSON', 0],
      ['01', 'unexpected text after the JSON value', 1],
    ];
    for (const [text, message, at] of cases) {
      assert.deepEqual(failure(text), { reason: 'syntax', message, at }, JSON.stringify(text));
    }
  });

  test('escapes decode as JSON.parse decodes them, lone surrogates included', () => {
    const text = '"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\\ud800x"';
    assert.equal(value(text), JSON.parse(text));
  });
});
