import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { requiredLiteral } from './regex-literal.js';
import { tokenizeRegex } from './regex-tokens.js';

const lit = (p: string): string | undefined => requiredLiteral(tokenizeRegex(p))?.literal;
const whole = (p: string): boolean | undefined => requiredLiteral(tokenizeRegex(p))?.whole;

describe('required literal extraction', () => {
  test('a plain word is the whole pattern', () => {
    assert.equal(lit('refused'), 'refused');
    assert.equal(whole('refused'), true);
    assert.equal(lit('connection reset'), 'connection reset');
  });
  test('the longest top-level run wins', () => {
    assert.equal(lit('^GET /api/[0-9]+'), 'GET /api/');
    assert.equal(lit('took [0-9]{3,} ms'), 'took ');
    assert.equal(lit('a.b.longest.c'), 'longest');
    assert.equal(whole('^GET /api/[0-9]+'), false);
  });
  test('a character under a quantifier is not part of a run', () => {
    assert.equal(lit('ab+c'), 'a');
    assert.equal(lit('abc?def'), 'def');
    assert.equal(lit('xy{2}z'), 'x');
    assert.equal(lit('a*'), undefined);
    assert.equal(lit('ab*?'), 'a');
  });
  test('escaped punctuation is the character itself; other escapes end a run', () => {
    assert.equal(lit('conn\\.reset'), 'conn.reset');
    assert.equal(whole('conn\\.reset'), true);
    assert.equal(lit('a\\(b\\)c'), 'a(b)c');
    assert.equal(lit('took\\d+ms'), 'took');
    assert.equal(lit('i\\x41bcd'), 'bcd');
    assert.equal(lit('\\Qabc\\E'), undefined);
    assert.equal(lit('\\bword\\b'), 'word');
    assert.equal(whole('\\bword\\b'), false);
  });
  test('a brace that is no repeat count is literal', () => {
    assert.equal(lit('a{,3}'), 'a{,3}');
    assert.equal(lit('{"k":'), '{"k":');
  });
  test('groups and classes end a run and are skipped whole', () => {
    assert.equal(lit('user (alice|bob) logged'), ' logged');
    assert.equal(lit('db-[0-2] timed'), ' timed');
    assert.equal(lit('(a(b)c)+tail'), 'tail');
  });
  test('none for top-level alternation, flags, or nothing literal', () => {
    assert.equal(lit('timed out|refused'), undefined);
    assert.equal(lit('(?i)error'), undefined);
    assert.equal(lit('error(?i)'), undefined);
    assert.equal(lit('(?i:e)rror'), undefined);
    assert.equal(lit('(?s)a.b'), undefined);
    assert.equal(lit('[0-9]+'), undefined);
    assert.equal(lit(''), undefined);
    assert.equal(lit('.*'), undefined);
  });
  test('code points beyond the BMP stay whole', () => {
    assert.equal(lit('😀ok'), '😀ok');
    assert.equal(lit('x😀+'), 'x');
  });
});
