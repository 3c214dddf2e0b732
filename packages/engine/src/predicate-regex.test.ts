/**
 * @module predicate-regex.test
 * `matches`, `=~` and `!~` through the engine's compiled predicate: RE2 semantics (unanchored search, linear time),
 * the literal pre-filter, and refusals as `invalid_query`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LogQuery } from '@sluice/query';
import { parseQuerySyntax } from '@sluice/query';
import { AttrReader } from './attr-value.js';
import { QueryAbort } from './failures.js';
import { FIELD_COLUMN } from './fields.js';
import { compilePredicate, compileRegex } from './predicate-eval.js';

/** Answers of the predicate of `query` over bodies (a null body is a missing value). */
function evalBodies(query: string, bodies: readonly (string | null)[]): boolean[] {
  // The syntax parser alone: these tests check the engine's own compile, not validation's.
  const parsed = parseQuerySyntax(query);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error.message);
  if (!parsed.ok) return [];
  const compiled = compilePredicate((parsed.value.query as LogQuery).predicate);
  const row = compiled.bind({ [FIELD_COLUMN.body]: bodies }, new AttrReader());
  return bodies.map((_, i) => row(i));
}

/** The `invalid_query` message the engine raises while compiling `query`. */
function refusal(query: string): string {
  try {
    evalBodies(query, ['x']);
  } catch (e) {
    assert.ok(e instanceof QueryAbort);
    assert.equal(e.failure.kind, 'invalid_query');
    return e.failure.kind === 'invalid_query' ? e.failure.message : '';
  }
  assert.fail(`${query} should be refused`);
}

describe('regex predicates run in linear time', () => {
  test('(a+)+$ over 40 a and a ! (and 10,000 of them) is answered, false', () => {
    const started = performance.now();
    const bodies = [`${'a'.repeat(40)}!`, `${'a'.repeat(10_000)}!`, 'a'.repeat(10_000)];
    assert.deepEqual(evalBodies('matches(body, "(a+)+$")', bodies), [false, false, true]);
    assert.deepEqual(evalBodies('body =~ "(a+)+$"', bodies), [false, false, true]);
    assert.deepEqual(evalBodies('body !~ "(a+)+$"', bodies), [true, true, false]);
    // A backtracking engine never returns from the first body; a generous bound only catches a regression to one.
    assert.ok(performance.now() - started < 5_000);
  });
});

describe('regex semantics through the predicate', () => {
  test('unanchored search, anchors, alternation, classes, case-insensitive flag', () => {
    const bodies = ['GET /api/42 took 1234 ms', 'connection refused', 'ERROR disk full', null, ''];
    assert.deepEqual(evalBodies('matches(body, "^GET /api/[0-9]+")', bodies), [true, false, false, false, false]);
    assert.deepEqual(evalBodies('body =~ "timed out|refused"', bodies), [false, true, false, false, false]);
    assert.deepEqual(evalBodies('body =~ "took [0-9]{3,} ms"', bodies), [true, false, false, false, false]);
    assert.deepEqual(evalBodies('matches(body, "(?i)error")', bodies), [false, false, true, false, false]);
    // !~ needs a value: a missing body matches neither =~ nor !~.
    assert.deepEqual(evalBodies('body !~ "refused"', bodies), [true, false, true, false, true]);
  });
  test('the pre-filter literal decides nothing on its own', () => {
    const re = compileRegex('took [0-9]{3,} ms');
    assert.deepEqual(re.literals, [{ contains: 'took ', exact: false }]);
    assert.equal(re.test('took 12 ms'), false); // has the literal, fails the automaton
    assert.equal(re.test('took 123 ms'), true);
    assert.equal(re.test('nothing here'), false);
  });
});

describe('refused patterns are invalid_query', () => {
  const cases: readonly [string, RegExp][] = [
    ['matches(body, "(a)\\\\1")', /not supported at position 3: backreferences \(\\1\)/],
    ['body =~ "foo(?=bar)"', /not supported at position 3: lookahead/],
    ['body !~ "(?<=foo)bar"', /not supported at position 0: lookbehind/],
    ['body =~ "a*+"', /not supported at position 1: possessive quantifiers/],
    ['body =~ "(?>a)"', /not supported at position 0: atomic groups/],
    ['body =~ "ab)"', /invalid regular expression "ab\)" at position 2: this \) closes no group/],
    [`matches(body, "${'a'.repeat(1100)}")`, /longer than 1024 bytes/],
  ];
  for (const [query, message] of cases) {
    test(query.slice(0, 40), () => assert.match(refusal(query), message));
  }
});
