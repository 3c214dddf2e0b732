import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from './parse-query.js';
import { MAX_REGEX_PATTERN_BYTES, compileLinearRegex } from './regex.js';

/** The refusal of `pattern`, which must be refused. */
function refusal(pattern: string): { message: string; position: number } {
  const r = compileLinearRegex(pattern);
  assert.equal(r.ok, false, `${pattern} should be refused`);
  return r.ok ? { message: '', position: -1 } : r.error;
}

// Words of the regex library's own messages, which must never reach a user.
const LIBRARY_WORDS = /error parsing regexp|Perl|regexp\/syntax|missing argument|trailing backslash/;

describe('RE2 syntax: unsupported constructs are named with their position', () => {
  const cases: readonly [string, number, RegExp][] = [
    ['(a)\\1', 3, /backreferences \(\\1\) are not allowed/],
    ['(?P<x>a)b\\2', 9, /backreferences \(\\2\)/],
    ['(a)\\8', 3, /backreferences \(\\8\)/],
    ['(?<x>a)\\k<x>', 7, /backreferences \(\\k\.\.\.\)/],
    ['foo(?=bar)', 3, /lookahead \(\(\?=\.\.\.\) is not allowed/],
    ['foo(?!bar)', 3, /lookahead \(\(\?!\.\.\.\)/],
    ['(?<=foo)bar', 0, /lookbehind \(\(\?<=\.\.\.\) is not allowed/],
    ['x(?<!foo)bar', 1, /lookbehind \(\(\?<!\.\.\.\)/],
    ['a(?>bc|b)c', 1, /atomic groups/],
    ['ab*+c', 2, /possessive quantifiers \(\*\+\)/],
    ['a{2,3}+', 1, /possessive quantifiers \(\{2,3\}\+\)/],
    ['(a)?(?(1)b|c)', 4, /conditional groups/],
  ];
  for (const [pattern, position, what] of cases) {
    test(pattern, () => {
      const e = refusal(pattern);
      assert.equal(e.position, position);
      assert.match(e.message, new RegExp(`^regular expression .* is not supported at position ${position}: `));
      assert.match(e.message, what);
      assert.match(e.message, /Sluice uses RE2 syntax \(no backreferences, no lookaround\)$/);
      assert.doesNotMatch(e.message, LIBRARY_WORDS);
    });
  }
  test('the example message, word for word', () => {
    assert.equal(
      refusal('(a)\\1').message,
      'regular expression "(a)\\\\1" is not supported at position 3: backreferences (\\1) are not allowed; ' +
        'Sluice uses RE2 syntax (no backreferences, no lookaround)',
    );
  });
  test('the construct inside a character class or after an escape is literal text, not the construct', () => {
    for (const p of ['[(?=]x', '\\(?=x', '[\\\\]1', 'a\\*+', '(?:a)']) assert.ok(compileLinearRegex(p).ok, p);
  });
  test('the leftmost construct is the one reported', () => {
    assert.equal(refusal('(a)(?=b)\\1').position, 3);
  });
});

describe('RE2 syntax: malformed patterns are explained in our words, with a position', () => {
  const cases: readonly [string, number | undefined, RegExp][] = [
    ['(', 0, /the group opened here has no closing \)/],
    ['(a(b)', 0, /no closing \)/],
    ['ab)', 2, /this \) closes no group/],
    ['ab[cd', 2, /character class opened here has no closing \]/],
    ['abc\\', 3, /ends with a lone backslash/],
    ['a{2,1}', 1, /repeat count \{2,1\} is invalid/],
    ['a{1001}', 1, /repeat count \{1001\} is invalid/],
    ['((a{100}){100}){100}', 9, /repeat count \{100\} is invalid/],
    ['x**', 1, /\*\* repeats a repetition/],
    ['*', 0, /quantifier \* has nothing to repeat/],
    ['a*(*)', 3, /quantifier \* has nothing to repeat/],
    ['\\u263A', 0, /escape \\u is not recognised; write a code point as \\x\{263A\}/],
    ['ab\\yc', 2, /escape \\y is not recognised/],
    ['[z-a]', 1, /z-a is not a valid character range/],
    ['z-a[z-a]', 4, /z-a is not a valid character range/],
    ['[[:nope:]]', 1, /\[:nope:\] is not a valid character range or class name/],
    ['(?P<a>x)(?P<a>y)', 8, /group name a is used twice/],
    ['x(?P<a-b>y)', 1, /group name in \(\?P<a-b> is not valid/],
    ['(?#note)', 0, /group syntax \(\?# is not recognised/],
  ];
  for (const [pattern, position, what] of cases) {
    test(pattern, () => {
      const e = refusal(pattern);
      assert.equal(e.position, position);
      assert.match(e.message, new RegExp(`^invalid regular expression .* at position ${position}: `));
      assert.match(e.message, what);
      assert.doesNotMatch(e.message, LIBRARY_WORDS);
    });
  }
  test('a pattern too large as a whole names no position', () => {
    const e = refusal('(((a{30}){30}){30}){30}'.replace(/\{30\}/g, '{10}') + '{1000}');
    assert.doesNotMatch(e.message, LIBRARY_WORDS);
    assert.match(e.message, /^invalid regular expression /);
  });
  test(`a pattern over ${MAX_REGEX_PATTERN_BYTES} UTF-8 bytes is refused before it is compiled`, () => {
    assert.ok(compileLinearRegex('a'.repeat(MAX_REGEX_PATTERN_BYTES)).ok);
    const e = refusal('a'.repeat(MAX_REGEX_PATTERN_BYTES + 1));
    assert.match(e.message, /longer than 1024 bytes/);
    assert.match(refusal('é'.repeat(513)).message, /longer than 1024 bytes/);
  });
  test('a long pattern is cut short in the message', () => {
    const e = refusal(`${'x'.repeat(200)}(`);
    assert.ok(e.message.length < 300, e.message);
  });
});

describe('RE2 syntax: what is accepted', () => {
  test('classes, counted repeats, lazy quantifiers, named groups, flags, Unicode classes, \\Q..\\E', () => {
    for (const p of [
      '^GET /api/[0-9]+',
      'took [0-9]{3,} ms',
      'timed out|refused',
      '(?i)error',
      '(?i:err)or',
      '(?s)a.b',
      '(?P<code>[45][0-9]{2})',
      '(?<code>x)',
      'a*?b+?c??',
      '\\d+\\s\\w\\b',
      '\\pL\\p{Greek}\\PN',
      '[[:alpha:]]+',
      '\\x{263A}\\x41',
      '\\Q(a+)+$\\E',
      '\\12',
      'a{,3}',
      '',
    ]) {
      const r = compileLinearRegex(p);
      assert.ok(r.ok, r.ok ? p : `${p}: ${r.error.message}`);
    }
  });
  test('matching is an unanchored search, like RegExp.test', () => {
    const m = (p: string, s: string): boolean => {
      const r = compileLinearRegex(p);
      assert.ok(r.ok);
      return r.ok && r.value.test(s);
    };
    assert.equal(m('db (cache|miss)', 'GET / db miss 3ms'), true);
    assert.equal(m('^retry .*ok', 'retry 3 ok'), true);
    assert.equal(m('^retry', 'a retry'), false);
    assert.equal(m('http$', 'io.http'), true);
    assert.equal(m('(?i)ERROR', 'an error here'), true);
    assert.equal(m('ERROR', 'an error here'), false);
  });
  test('(a+)+$ answers at once where a backtracking engine would not', () => {
    const r = compileLinearRegex('(a+)+$');
    assert.ok(r.ok);
    if (!r.ok) return;
    assert.equal(r.value.test(`${'a'.repeat(40)}!`), false);
    assert.equal(r.value.test(`${'a'.repeat(10_000)}!`), false);
    assert.equal(r.value.test('a'.repeat(10_000)), true);
  });
});

describe('validation uses the same compiler', () => {
  test('matches(), =~ and !~ refuse the same constructs, citing the pattern position and the query position', () => {
    for (const q of ['matches(body, "(a)\\\\1")', 'body =~ "(a)\\\\1"', 'body !~ "(a)\\\\1"']) {
      const r = parseQuery(q);
      assert.equal(r.ok, false, q);
      if (!r.ok) {
        assert.equal(r.error.kind, 'invalid_query');
        assert.match(r.error.message, /is not supported at position 3: backreferences \(\\1\) are not allowed/);
        assert.match(r.error.message, /\(at 0\)$/);
      }
    }
  });
  test('a pattern V8 rejects but RE2 accepts now passes validation: (?i)', () => {
    assert.ok(parseQuery('matches(body, "(?i)error")').ok);
  });
});
