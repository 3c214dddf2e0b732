import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LiteralBranch } from './regex-literal.js';
import { literalBranches, literalTest } from './regex-literal.js';
import { tokenizeRegex } from './regex-tokens.js';

const branches = (p: string): readonly LiteralBranch[] | undefined => literalBranches(tokenizeRegex(p));
/** The single branch's `contains` literal. */
const lit = (p: string): string | undefined => {
  const b = branches(p);
  return b?.length === 1 ? b[0]?.contains : undefined;
};

describe('literal pre-filter extraction', () => {
  test('a plain word is the whole pattern', () => {
    assert.deepEqual(branches('refused'), [{ contains: 'refused', exact: true }]);
    assert.equal(lit('connection reset'), 'connection reset');
  });
  test('the longest top-level run is the one to contain', () => {
    assert.deepEqual(branches('took [0-9]{3,} ms'), [{ contains: 'took ', exact: false }]);
    assert.equal(lit('a.b.longest.c'), 'longest');
  });
  test('a run right after a leading ^ is a prefix', () => {
    assert.deepEqual(branches('^GET /api/[0-9]+'), [{ prefix: 'GET /api/', exact: false }]);
    assert.deepEqual(branches('^GET'), [{ prefix: 'GET', exact: true }]);
    assert.deepEqual(branches('^a.connection refused'), [
      { prefix: 'a', contains: 'connection refused', exact: false },
    ]);
    // A longer run only when it is longer than the prefix: a second scan for little gain otherwise.
    assert.deepEqual(branches('^abc.d'), [{ prefix: 'abc', exact: false }]);
    // The first run does not start at 0 when the first character may repeat.
    assert.deepEqual(branches('^a+bc'), [{ contains: 'bc', exact: false }]);
    assert.deepEqual(branches('^(GET|PUT) /x'), [{ contains: ' /x', exact: false }]);
  });
  test('a character under a quantifier is not part of a run', () => {
    assert.equal(lit('ab+c'), 'a');
    assert.equal(lit('abc?def'), 'def');
    assert.equal(lit('xy{2}z'), 'x');
    assert.equal(branches('a*'), undefined);
    assert.equal(lit('ab*?'), 'a');
  });
  test('escaped punctuation is the character itself; other escapes end a run', () => {
    assert.deepEqual(branches('conn\\.reset'), [{ contains: 'conn.reset', exact: true }]);
    assert.equal(lit('a\\(b\\)c'), 'a(b)c');
    assert.equal(lit('took\\d+ms'), 'took');
    assert.equal(lit('i\\x41bcd'), 'bcd');
    assert.equal(branches('\\Qabc\\E'), undefined);
    assert.deepEqual(branches('\\bword\\b'), [{ contains: 'word', exact: false }]);
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
  test('top-level alternation: one branch per alternative, or none when one has no literal', () => {
    assert.deepEqual(branches('timed out|refused'), [
      { contains: 'timed out', exact: true },
      { contains: 'refused', exact: true },
    ]);
    assert.deepEqual(branches('^GET|took [0-9]+'), [
      { prefix: 'GET', exact: true },
      { contains: 'took ', exact: false },
    ]);
    assert.equal(branches('timed out|[0-9]+'), undefined);
    assert.equal(branches('timed out|'), undefined);
  });
  test('none for flags or nothing literal', () => {
    assert.equal(branches('(?i)error'), undefined);
    assert.equal(branches('error(?i)'), undefined);
    assert.equal(branches('(?i:e)rror'), undefined);
    assert.equal(branches('(?s)a.b'), undefined);
    assert.equal(branches('[0-9]+'), undefined);
    assert.equal(branches(''), undefined);
    assert.equal(branches('.*'), undefined);
    assert.equal(branches('^'), undefined);
  });
  test('code points beyond the BMP stay whole', () => {
    assert.equal(lit('😀ok'), '😀ok');
    assert.equal(lit('x😀+'), 'x');
  });
  test('the test: startsWith for a prefix, includes for the rest, any branch', () => {
    const t = literalTest(branches('^GET /x.*slow|timed out')) as (s: string) => boolean;
    assert.equal(t('GET /x is slow'), true);
    assert.equal(t('a GET /x is slow'), false);
    assert.equal(t('it timed out'), true);
    assert.equal(t('nothing'), false);
    assert.equal(literalTest(undefined), undefined);
  });
});
