import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { CmpOp, GroupTerm, Literal, OrdOp, Path, Predicate, Query, ScalarField, Stage, TimeSpec } from './ir.js';
import { Paths, Predicates, Queries, SCALAR_FIELDS, SEVERITY_NAMES, Stages } from './ir.js';
import { parseQuerySyntax } from './parser.js';
import { parseQuery } from './parse-query.js';
import { printQuery } from './printer.js';
import { parseRequestBody } from './request-body.js';
import { MAX_TIMESTAMP_NS, MIN_TIMESTAMP_NS } from './time-text.js';

const S = 1_000_000_000n;
const U64 = 2n ** 64n - 1n;
// Any UTF-16 code unit, lone surrogates and control characters included.
const anyString = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  maxLength: 12,
});
const ident = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,6}$/);
const attrKey = fc.oneof(
  fc.array(ident, { minLength: 1, maxLength: 3 }).map((a) => a.join('.')),
  anyString.filter((s) => s.length > 0),
);
const attrPath: fc.Arbitrary<Path> = fc
  .tuple(fc.constantFrom('resource' as const, 'attr' as const), attrKey)
  .map(([s, k]) => Paths.attr(s, k));
const scalarPath: fc.Arbitrary<Path> = fc.oneof(
  fc.constantFrom(...SCALAR_FIELDS).map((f: ScalarField) => Paths.field(f)),
  attrPath,
);
const anyPath: fc.Arbitrary<Path> = fc.oneof(scalarPath, fc.constant(Paths.field('severity')));
const durationNs = fc.bigInt(0n, 10n ** 10n).map((n) => n * S);
const literal: fc.Arbitrary<Literal> = fc.oneof(
  anyString.map((value) => ({ kind: 'string' as const, value })),
  fc.bigInt(-U64, U64).map((value) => ({ kind: 'int' as const, value })),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({ kind: 'float' as const, value })),
  fc.boolean().map((value) => ({ kind: 'bool' as const, value })),
  fc.constant({ kind: 'null' as const }),
  durationNs.map((ns) => ({ kind: 'duration' as const, ns })),
  fc.bigInt(MIN_TIMESTAMP_NS, MAX_TIMESTAMP_NS).map((ns) => ({ kind: 'timestamp' as const, ns })),
);
const ordOp = fc.constantFrom<OrdOp>('==', '!=', '<', '<=', '>', '>=');
const cmpOp = fc.constantFrom<CmpOp>('==', '!=', '<', '<=', '>', '>=', '=~', '!~');
const leaf: fc.Arbitrary<Predicate> = fc.oneof(
  fc.boolean().map(Predicates.bool),
  fc
    .tuple(
      ordOp,
      fc.oneof(
        fc.constantFrom(...SEVERITY_NAMES).map((name) => ({ kind: 'name' as const, name })),
        fc.integer({ min: 0, max: 255 }).map((value) => ({ kind: 'number' as const, value })),
      ),
    )
    .map(([op, l]) => Predicates.severity(op, l)),
  fc.tuple(scalarPath, cmpOp, literal).map(([p, op, v]) => Predicates.compare(p, op, v)),
  fc
    .tuple(
      fc.constantFrom('contains' as const, 'matches' as const, 'starts_with' as const, 'ends_with' as const),
      anyPath,
      anyString,
    )
    .map(([f, p, s]) => Predicates.strCall(f, p, s)),
  fc.bigInt(0n, U64).map(Predicates.resolvesTo),
);
const predicate: fc.Arbitrary<Predicate> = fc.letrec<{ p: Predicate }>((tie) => ({
  p: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('p'), { minLength: 2, maxLength: 3 }).map(Predicates.and),
    fc.array(tie('p'), { minLength: 2, maxLength: 3 }).map(Predicates.or),
    tie('p').map(Predicates.not),
  ),
})).p;
const time: fc.Arbitrary<TimeSpec> = fc.oneof(
  fc.constant({ kind: 'now' as const }),
  fc.bigInt(-(10n ** 10n), 10n ** 10n).map((n) => ({ kind: 'relative' as const, offsetNs: n * S })),
  fc.bigInt(MIN_TIMESTAMP_NS, MAX_TIMESTAMP_NS).map((ns) => ({ kind: 'absolute' as const, ns })),
);
const term: fc.Arbitrary<GroupTerm> = fc.oneof(
  anyPath.map((path) => ({ kind: 'path' as const, path })),
  fc.integer({ min: 0, max: 0xffff_ffff }).map((index) => ({ kind: 'param' as const, index })),
  durationNs.map((widthNs) => ({ kind: 'bucket' as const, widthNs })),
);
const by = fc.array(term, { maxLength: 3 });
const stage: fc.Arbitrary<Stage> = fc.oneof(
  fc.tuple(time, time).map(([a, b]) => Stages.range(a, b)),
  fc.bigInt(0n, U64).map(Stages.limit),
  by.map(Stages.count),
  fc
    .tuple(fc.constantFrom('sum' as const, 'min' as const, 'max' as const, 'avg' as const), anyPath, by)
    .map(([f, p, b]) => Stages.aggregate(f, p, b)),
  fc.tuple(ident, fc.boolean()).map(([k, d]) => Stages.sort(k, d)),
  fc.array(anyPath, { minLength: 1, maxLength: 3 }).map(Stages.project),
  fc.constant(Stages.render()),
);
export const queryArb: fc.Arbitrary<Query> = fc.oneof(
  { weight: 5, arbitrary: fc.tuple(predicate, fc.array(stage, { maxLength: 4 })).map(([p, s]) => Queries.logs(p, s)) },
  { weight: 1, arbitrary: fc.tuple(time, time).map(([a, b]) => Queries.drift(a, b)) },
);

const reparse = (text: string): Query => {
  const r = parseQuerySyntax(text);
  if (!r.ok) throw new Error(`${text}\n${r.error.message}`);
  return r.value.query;
};

// Control characters, YAML line breaks, BOM, and the sequences that start YAML comments/keys or trail spaces.
function unsafeFor(t: string): string | undefined {
  for (const ch of t) {
    const c = ch.charCodeAt(0);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0xfeff)
      return `U+${c.toString(16)}`;
  }
  return [': ', ' #'].find((seq) => t.includes(seq)) ?? (t.endsWith(' ') ? 'trailing space' : undefined);
}

describe('printer round trip (property)', () => {
  test('random IR → print → parse is deep-equal to the IR', () => {
    fc.assert(
      fc.property(queryArb, (q) => assert.deepStrictEqual(reparse(printQuery(q)), q)),
      { numRuns: 1500 },
    );
  });
  test('parse → print → parse → print is idempotent', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        const once = printQuery(reparse(printQuery(q)));
        assert.equal(printQuery(reparse(once)), once);
      }),
      { numRuns: 500 },
    );
  });
  test('printed text is one YAML-safe line', () => {
    fc.assert(
      fc.property(queryArb, (q) => {
        const t = printQuery(q);
        assert.match(t, /^[A-Za-z(]/);
        assert.equal(unsafeFor(t), undefined, t);
      }),
      { numRuns: 1000 },
    );
  });
  test('alternative spellings print canonically', () => {
    const r = parseQuery('! lossy == true && (flags == 1 || flags == 2) | range(-60m, now) | sort ts asc');
    assert.ok(r.ok);
    if (r.ok)
      assert.equal(printQuery(r.value), 'not lossy == true and (flags == 1 or flags == 2) | range(-1h, now) | sort ts');
  });
});

const VOCAB = [
  'severity',
  'service',
  'body',
  'attr',
  'resource',
  '.',
  '[',
  ']',
  '"x"',
  '"a b"',
  '==',
  '!=',
  '>=',
  '<',
  '=~',
  'and',
  'or',
  'not',
  '!',
  '&&',
  '||',
  '(',
  ')',
  'true',
  'false',
  '|',
  'count',
  'by',
  'param(0)',
  'bucket(5m)',
  'limit',
  '5',
  '1.5',
  '-',
  'range',
  ',',
  'now',
  '-1h',
  '2026-01-01T00:00:00Z',
  'warn',
  'error',
  'template_id',
  'sum',
  'sort',
  'desc',
  'project',
  'drift',
  'from',
  'to',
  'contains',
  'resolves_to',
  'null',
  '30s',
  'ts',
  'lossy',
  'confidence',
];
const tokenSoup = fc.array(fc.constantFrom(...VOCAB), { maxLength: 14 }).map((a) => a.join(' '));

describe('parser robustness (property)', () => {
  test('random strings never throw from parse or parseRequestBody', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'binary', maxLength: 64 }), tokenSoup),
        fc.constantFrom('application/json', 'text/plain'),
        (s, ct) => {
          const r = parseQuery(s);
          if (!r.ok) {
            assert.equal(r.error.kind, 'invalid_query');
            assert.ok(r.error.start >= 0 && r.error.end >= r.error.start && r.error.end <= s.length);
          }
          parseRequestBody(ct, s);
        },
      ),
      { numRuns: 3000 },
    );
  });
  test('whatever token soup parses, prints to a fixed point', () => {
    fc.assert(
      fc.property(tokenSoup, (s) => {
        const r = parseQuerySyntax(s);
        if (!r.ok) return;
        const p1 = printQuery(r.value.query);
        assert.deepStrictEqual(reparse(p1), r.value.query);
        assert.equal(printQuery(reparse(p1)), p1);
      }),
      { numRuns: 3000 },
    );
  });
});
