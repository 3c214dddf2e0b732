/**
 * @module masker.test
 * Token classification, tokenization, UTF-8 helpers and template rendering.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PARAM_TYPE } from '@sluice/core';
import { LITERAL, LITERAL_WITH_DIGIT, classifyToken } from './masker.js';
import { renderTemplate } from './template.js';
import { tokenize } from './tokenizer.js';
import { truncateUtf8, utf8ByteLength } from './utf8.js';

void describe('classifyToken', () => {
  const cases: [string, number][] = [
    ['42', PARAM_TYPE.NUM],
    ['-3.5e7', PARAM_TYPE.NUM],
    ['192.168.0.1', PARAM_TYPE.IP],
    ['256.1.1.1', LITERAL_WITH_DIGIT],
    ['123e4567-e89b-12d3-a456-426614174000', PARAM_TYPE.UUID],
    ['0x1F', PARAM_TYPE.HEX],
    ['4bf92f3577b34da6a3ce929d0e0e4736', PARAM_TYPE.HEX],
    ['deadbeefdeadbeef', LITERAL],
    ['2024-05-01T10:00:00.123Z', PARAM_TYPE.TS],
    ['2024-05-01', PARAM_TYPE.TS],
    ['10:00:01', PARAM_TYPE.TS],
    ['db-7', LITERAL_WITH_DIGIT],
    ['12ms', LITERAL_WITH_DIGIT],
    ['hello', LITERAL],
    ['<*>', PARAM_TYPE.STR],
    ['x'.repeat(257), PARAM_TYPE.OVERFLOW],
    ['é'.repeat(129), PARAM_TYPE.OVERFLOW], // 258 UTF-8 bytes, 129 UTF-16 units
    ['é'.repeat(128), LITERAL], // exactly 256 bytes
  ];
  for (const [token, want] of cases) {
    void test(`classifies ${JSON.stringify(token.length > 20 ? `${token.slice(0, 8)}…(${token.length})` : token)} as ${want}`, () => {
      assert.equal(classifyToken(token, 256), want);
    });
  }
});

void describe('tokenize', () => {
  void test('single-space lines are canonical; any other whitespace is not', () => {
    assert.deepEqual(tokenize('a b c'), { tokens: ['a', 'b', 'c'], canonical: true });
    assert.deepEqual(tokenize(''), { tokens: [], canonical: true });
    assert.deepEqual(tokenize(' a'), { tokens: ['a'], canonical: false });
    assert.deepEqual(tokenize('a\u00a0b\n'), { tokens: ['a', 'b'], canonical: false });
    assert.deepEqual(tokenize('   '), { tokens: [], canonical: false });
  });

  void test('canonical ⇔ the tokens joined by one space give back the line (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\t', '\u3000', '\n') }), (line) => {
        const { tokens, canonical } = tokenize(line);
        assert.equal(canonical, tokens.join(' ') === line);
        for (const t of tokens) assert.ok(t.length > 0 && !/\s/.test(t));
      }),
    );
  });
});

void describe('utf8', () => {
  void test('byte length and truncation agree with TextEncoder and never split a code point (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(40), (s, max) => {
        const enc = new TextEncoder();
        assert.equal(utf8ByteLength(s), enc.encode(s).length);
        const cut = truncateUtf8(s, max);
        assert.ok(s.startsWith(cut));
        assert.ok(enc.encode(cut).length <= max);
        const next = s.codePointAt(cut.length);
        if (next !== undefined) assert.ok(enc.encode(cut + String.fromCodePoint(next)).length > max);
      }),
    );
  });
});

void describe('renderTemplate', () => {
  void test('substitutes params at <*> in order and rejects a count mismatch', () => {
    const p = (value: string) => ({ typeTag: PARAM_TYPE.STR, value });
    assert.equal(renderTemplate('a <*> c <*>', [p('b'), p('d')]), 'a b c d');
    assert.equal(renderTemplate(['<*>'], [p('x')]), 'x');
    assert.equal(renderTemplate('', []), '');
    assert.throws(() => renderTemplate('a <*>', []), RangeError);
    assert.throws(() => renderTemplate('a', [p('x')]), RangeError);
  });
});
