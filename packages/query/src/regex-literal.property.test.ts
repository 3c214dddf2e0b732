import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { LiteralBranch } from './regex-literal.js';
import type { LinearRegex } from './regex.js';
import { compileLinearRegex } from './regex.js';

// The pre-filter is only an optimisation: "literal, then automaton" must answer exactly what the automaton alone
// answers, for every pattern and every text.

function compiled(pattern: string): LinearRegex | undefined {
  const r = compileLinearRegex(pattern);
  return r.ok ? r.value : undefined;
}

// Texts over the characters the patterns use, plus the odd other code unit (lone surrogates included), so that
// both hits and near misses are common.
const unit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...'abcAB.{},:1 \n-/GETapi09msok'.split('')) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) },
);
const text = fc.string({ unit, maxLength: 24 });

/** `t` made to pass one branch's literal tests (when the pattern has any), so the automaton behind them runs. */
function passing(branches: readonly LiteralBranch[] | undefined, pick: number, t: string, at: number): string {
  const b = branches?.[pick % branches.length];
  if (b === undefined) return t;
  return (b.prefix ?? '') + t.slice(0, at) + (b.contains ?? '') + t.slice(at);
}

const FIXED = [
  'refused',
  'timed out|refused',
  '^GET /api/[0-9]+',
  'took [0-9]{3,} ms',
  '(?i)error',
  'conn\\.reset',
  'ab+c',
  'abc?def',
  'a{,3}',
  'a.b{2}c',
  '\\bok\\b',
  '(a|b)c:1',
  'x😀+',
  '{"k":',
  'a\\x2eb',
  '^GET',
  '^a+bc',
  '^GET|took [0-9]+',
  'x|y|^z',
];

// Random patterns from a small grammar: literals (some escaped), classes, dots, anchors, groups, alternation,
// quantifiers (greedy and lazy, counted or not) and flag groups.
const atom: fc.Arbitrary<string> = fc.letrec((tie) => ({
  atom: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'c', 'A', ':', '1', ' ', '-', '{', '}', ',') },
    { weight: 2, arbitrary: fc.constantFrom('\\.', '\\{', '\\-', '.', '[ab]', '[^a]', '\\d', '\\w', '\\s', '\\b') },
    { weight: 1, arbitrary: fc.constantFrom('^', '$', '(?i)', '(?s)', '\\x61', '\\Qa.\\E') },
    { weight: 1, arbitrary: tie('seq').map((s) => `(${s as string})`) },
    { weight: 1, arbitrary: tie('seq').map((s) => `(?:${s as string})`) },
    { weight: 1, arbitrary: tie('seq').map((s) => `(?i:${s as string})`) },
  ),
  quantified: fc
    .tuple(tie('atom'), fc.constantFrom('', '', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?'))
    .map(([a, q]) => `${a as string}${q}`),
  seq: fc
    .array(tie('quantified'), { minLength: 1, maxLength: 5 })
    .chain((parts) =>
      fc.constantFrom(0, 0, 0, 1).map((alt) => (alt ? `${parts.join('')}|${parts[0] as string}` : parts.join(''))),
    ),
})).seq as fc.Arbitrary<string>;

describe('the literal pre-filter never changes an answer', () => {
  test('fixed patterns typical of matches() queries', () => {
    for (const p of FIXED) {
      const re = compiled(p);
      assert.ok(re, p);
      if (!re) continue;
      fc.assert(
        fc.property(text, fc.nat(), fc.integer({ min: 0, max: 24 }), (t, pick, at) => {
          for (const s of [t, passing(re.literals, pick, t, at)])
            assert.equal(re.test(s), re.search(s), `${p} on ${JSON.stringify(s)}`);
        }),
        { numRuns: 300 },
      );
    }
  });
  test('random patterns', () => {
    let withLiteral = 0;
    let matched = 0;
    fc.assert(
      fc.property(atom, text, fc.nat(), fc.integer({ min: 0, max: 24 }), (p, t, pick, at) => {
        const re = compiled(p);
        fc.pre(re !== undefined);
        if (re === undefined) return;
        if (re.literals !== undefined) withLiteral++;
        for (const s of [t, passing(re.literals, pick, t, at)]) {
          const alone = re.search(s);
          if (alone) matched++;
          assert.equal(re.test(s), alone, `${p} on ${JSON.stringify(s)}`);
        }
      }),
      { numRuns: 3000 },
    );
    // Not vacuous: many patterns have a literal, and many texts match.
    assert.ok(withLiteral > 300, `only ${withLiteral} patterns had a literal`);
    assert.ok(matched > 300, `only ${matched} texts matched`);
  });
});
