import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LogQuery, Predicate, Query } from './ir.js';
import { Paths, Predicates, Stages, severityBand } from './ir.js';
import { parseQuery } from './parse-query.js';
import { parseQuerySyntax } from './parser.js';
import { printQuery } from './printer.js';
import { MAX_NESTING_DEPTH, MAX_QUERY_BYTES } from './errors.js';

function q(text: string): Query {
  const r = parseQuery(text);
  if (!r.ok) assert.fail(`${text}: ${r.error.message}`);
  return r.value;
}
const logs = (text: string): LogQuery => q(text) as LogQuery;
const pred = (text: string): Predicate => logs(text).predicate;
function bad(text: string): { message: string; start: number; end: number } {
  const r = parseQuery(text);
  assert.equal(r.ok, false, `expected ${JSON.stringify(text)} to be rejected`);
  if (r.ok) throw new Error('unreachable');
  assert.equal(r.error.kind, 'invalid_query');
  return r.error;
}

/** Every documented example statement. */
export const SECTION_2_4_EXAMPLES: readonly string[] = [
  'severity >= error',
  'service == "checkout" and severity >= warn | range(-15m, now) | limit 50',
  'trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"',
  'template_id == 42 | range(2026-06-01T00:00:00Z, 2026-06-02T00:00:00Z)',
  'resolves_to(42) | range(-7d, now) | count',
  'true | range(-1h, now) | count by template_id',
  'service == "api" | count by severity, bucket(5m)',
  'template_id == 7 | range(-1d, now) | count by param(0), bucket(1h)',
  'attr["http.route"] == "/cart" and not (resource.k8s.namespace.name == "dev")',
  'sum(attr.cost_usd) by attr.model',
  'lossy == true or confidence < 0.8 | limit 20',
  'event_name == "claude_code.api_request" | count by service',
  'contains(body, "timeout") | range(-1h, now)',
  'drift from -7d to now',
];

describe('section 2.4 examples', () => {
  for (const ex of SECTION_2_4_EXAMPLES) {
    test(`parses, validates and round-trips: ${ex}`, () => {
      const ir = q(ex);
      assert.deepStrictEqual(q(printQuery(ir)), ir);
    });
  }
  test('the stage-first example has predicate true', () => {
    assert.deepStrictEqual(logs('sum(attr.cost_usd) by attr.model').predicate, Predicates.bool(true));
  });
  test('the checkout example has the expected IR', () => {
    const ir = logs('service == "checkout" and severity >= warn | range(-15m, now) | limit 50');
    assert.deepStrictEqual(
      ir.predicate,
      Predicates.and([
        Predicates.compare(Paths.field('service'), '==', { kind: 'string', value: 'checkout' }),
        Predicates.severity('>=', { kind: 'name', name: 'warn' }),
      ]),
    );
    assert.deepStrictEqual(ir.stages, [
      Stages.range({ kind: 'relative', offsetNs: -15n * 60n * 1_000_000_000n }, { kind: 'now' }),
      Stages.limit(50n),
    ]);
  });
});

describe('predicate grammar', () => {
  test('and binds tighter than or', () => {
    const p = pred('lossy == true or flags == 1 and flags == 2');
    assert.equal(p.kind, 'or');
    assert.equal(p.kind === 'or' && p.operands[1]?.kind, 'and');
  });
  test('parentheses override precedence', () => {
    const p = pred('(lossy == true or flags == 1) and flags == 2');
    assert.equal(p.kind, 'and');
    assert.equal(p.kind === 'and' && p.operands[0]?.kind, 'or');
  });
  test('symbolic operators equal keyword operators', () => {
    assert.deepStrictEqual(
      pred('!lossy == true && flags == 1 || true'),
      pred('not lossy == true and flags == 1 or true'),
    );
  });
  test('not applies to one primary, and not not is rejected', () => {
    assert.equal(pred('not lossy == true and true').kind, 'and');
    bad('not not true');
    assert.equal(pred('not (not true)').kind, 'not');
  });
  test('true and false are predicates', () => {
    assert.deepStrictEqual(pred('false'), Predicates.bool(false));
  });
  test('every comparison operator parses on a text field', () => {
    for (const op of ['==', '!=', '<', '<=', '>', '>=', '=~', '!~']) {
      const p = pred(`body ${op} "x"`);
      assert.equal(p.kind === 'compare' && p.op, op);
    }
  });
  test('string functions take a path and a string', () => {
    for (const fn of ['contains', 'matches', 'starts_with', 'ends_with'] as const) {
      assert.deepStrictEqual(pred(`${fn}(attr.user, "a")`), Predicates.strCall(fn, Paths.attr('attr', 'user'), 'a'));
    }
  });
  test('literals: string escapes, int, float, negative number, bool, duration, timestamp', () => {
    const lit = (text: string): unknown => {
      const p = parseQuerySyntax(`attr.x == ${text}`);
      assert.ok(p.ok, text);
      const pr = (p.value.query as LogQuery).predicate;
      return pr.kind === 'compare' ? pr.value : undefined;
    };
    assert.deepStrictEqual(lit('"a\\"b\\\\c\\n\\t\\r\\u0041"'), { kind: 'string', value: 'a"b\\c\n\t\rA' });
    assert.deepStrictEqual(lit('12'), { kind: 'int', value: 12n });
    assert.deepStrictEqual(lit('0.25'), { kind: 'float', value: 0.25 });
    assert.deepStrictEqual(lit('-3'), { kind: 'int', value: -3n });
    assert.deepStrictEqual(lit('false'), { kind: 'bool', value: false });
    assert.deepStrictEqual(lit('null'), { kind: 'null' });
    assert.deepStrictEqual(lit('30s'), { kind: 'duration', ns: 30_000_000_000n });
    assert.deepStrictEqual(lit('1970-01-01T00:00:01.5+01:00'), { kind: 'timestamp', ns: -3_598_500_000_000n });
  });
  test('ts compares with a timestamp or integer nanoseconds', () => {
    q('ts >= 2026-06-01T00:00:00Z');
    q('ts < 1780000000000000000');
  });
});

describe('paths', () => {
  test('bracket and dotted attribute paths name the same key', () => {
    assert.deepStrictEqual(pred('attr["http.route"] == "/"'), pred('attr.http.route == "/"'));
  });
  test('bracket keys may hold any text and print in bracket form', () => {
    const p = pred('resource["k-8 s: #x"] == "v"');
    assert.deepStrictEqual(
      p,
      Predicates.compare(Paths.attr('resource', 'k-8 s: #x'), '==', { kind: 'string', value: 'v' }),
    );
    assert.match(printQuery(q('resource["k-8 s"] == "v"')), /^resource\["k-8 s"\] == "v"$/);
  });
  test('keywords are allowed as dotted key segments', () => {
    assert.deepStrictEqual(
      pred('attr.and.or == "x"'),
      Predicates.compare(Paths.attr('attr', 'and.or'), '==', { kind: 'string', value: 'x' }),
    );
  });
  test('an empty bracket key is rejected', () => {
    assert.match(bad('attr[""] == "x"').message, /empty attribute key at 5/);
  });
});

describe('severity', () => {
  test('names are case-insensitive and stored lower case', () => {
    assert.deepStrictEqual(pred('severity >= WARN'), Predicates.severity('>=', { kind: 'name', name: 'warn' }));
  });
  test('integers 0-255 are accepted, 256 is not', () => {
    assert.deepStrictEqual(pred('severity > 0'), Predicates.severity('>', { kind: 'number', value: 0 }));
    q('severity == 255');
    assert.match(bad('severity == 256').message, /out of range at 12/);
  });
  test('bands span floor to floor+3', () => {
    assert.deepStrictEqual(severityBand('error'), { floor: 17, ceil: 20 });
    assert.deepStrictEqual(severityBand('trace'), { floor: 1, ceil: 4 });
    assert.deepStrictEqual(severityBand('fatal'), { floor: 21, ceil: 24 });
  });
  test('regex operators and strings are rejected on severity', () => {
    assert.match(bad('severity =~ "x"').message, /at 9: expected an ordering operator/);
    assert.match(bad('severity == "warn"').message, /at 12: expected a severity name/);
  });
});

describe('template ids', () => {
  test('u64 template ids above 2^53 stay exact', () => {
    const big = 18446744073709551615n;
    assert.deepStrictEqual(
      pred(`template_id == ${big}`),
      Predicates.compare(Paths.field('template_id'), '==', { kind: 'int', value: big }),
    );
    assert.deepStrictEqual(pred('resolves_to(9007199254740993)'), Predicates.resolvesTo(9007199254740993n));
    assert.equal(printQuery(q('resolves_to(9007199254740993)')), 'resolves_to(9007199254740993)');
  });
  test('template ids above u64 are rejected', () => {
    bad('template_id == 18446744073709551616');
    bad('resolves_to(18446744073709551616)');
  });
});

describe('stages', () => {
  test('range, limit, count, aggregates, sort, project, render parse', () => {
    const ir = parseQuerySyntax(
      'true | range(2026-01-01T00:00:00Z, -1h) | count by service, resource.host.name, param(2), bucket(30s) | ' +
        'avg(attr.ms) by attr["x.y"] | min(attr.a) | max(attr.b) | sum(attr.c) | sort count desc | sort ts asc | sort ts | ' +
        'project body, attr.user | render | limit 5',
    );
    assert.ok(ir.ok);
    const kinds = (ir.value.query as LogQuery).stages.map((s) => (s.kind === 'aggregate' ? s.fn : s.kind));
    assert.deepStrictEqual(kinds, [
      'range',
      'count',
      'avg',
      'min',
      'max',
      'sum',
      'sort',
      'sort',
      'sort',
      'project',
      'render',
      'limit',
    ]);
    const st = (ir.value.query as LogQuery).stages;
    assert.deepStrictEqual(st[6], Stages.sort('count', true));
    assert.deepStrictEqual(st[7], Stages.sort('ts', false));
    assert.deepStrictEqual(st[8], Stages.sort('ts', false));
  });
  test('durations: s m h d w', () => {
    const ir = logs('true | count by bucket(1w)');
    assert.deepStrictEqual(ir.stages[0], Stages.count([{ kind: 'bucket', widthNs: 604_800_000_000_000n }]));
    assert.equal(printQuery(ir), 'true | count by bucket(7d)');
  });
  test('param and bucket outside a by-list are parse errors', () => {
    bad('param(0) == "x"');
    bad('true | bucket(5m)');
  });
  test('drift takes no stages', () => {
    assert.match(bad('drift from -7d to now | limit 5').message, /unexpected token '\|' at 22/);
  });
});

describe('syntax errors cite the token and its position', () => {
  const cases: [string, RegExp, number][] = [
    ['service == "x" | count by', /^unexpected end of query at 25: expected a group term/, 25],
    ['by == 1', /^unexpected token 'by' at 0: expected a field/, 0],
    ['service = "x"', /^unexpected character '=' at 8 \(did you mean '=='\?\)/, 8],
    ['service == "x', /^unterminated string starting at 11/, 11],
    ['service == "x" and', /^unexpected end of query at 18/, 18],
    ['(service == "x"', /^unexpected end of query at 15: expected '\)'/, 15],
    ['service == "x" | frobnicate', /^unexpected token 'frobnicate' at 17: expected a stage/, 17],
    ['true | range(now-1h, now)', /^unexpected token '-' at 16: relative times are written -1h/, 16],
    ['true | count by bucket(5ms)', /^invalid number '5ms' at 23/, 23],
    ['service == "x"\n| limit 5', /^control character U\+000A at 14: a query is a single line/, 14],
    ['service == "x" | limit -1', /^unexpected token '-' at 23: expected a row count/, 23],
    ['ts > 2026-13-01T00:00:00Z', /^invalid timestamp '2026-13-01T00:00:00Z' at 5: month out of range/, 5],
    ['body == "\\q"', /^invalid escape at 9/, 9],
    ['service == "x" service', /^unexpected token 'service' at 15: expected '\|'/, 15],
    ['contains(severity, "x")', /contains\(\) applies to text/, 0],
  ];
  for (const [text, re, start] of cases) {
    test(`rejects ${JSON.stringify(text)}`, () => {
      const e = bad(text);
      assert.match(e.message, re);
      assert.equal(e.start, start);
      assert.ok(e.end >= e.start);
      assert.doesNotMatch(e.message, /Error|at .*\.js|\n/);
    });
  }
});

describe('input bounds', () => {
  test(`text over ${MAX_QUERY_BYTES} bytes is rejected`, () => {
    const e = bad(`body == "${'x'.repeat(MAX_QUERY_BYTES)}"`);
    assert.match(e.message, /the limit is 16384 bytes/);
  });
  test('a multi-byte query is measured in UTF-8 bytes', () => {
    bad(`body == "${'é'.repeat(MAX_QUERY_BYTES / 2)}"`);
  });
  test(`nesting ${MAX_NESTING_DEPTH} deep is accepted, one more is rejected`, () => {
    q(`${'('.repeat(MAX_NESTING_DEPTH)}true${')'.repeat(MAX_NESTING_DEPTH)}`);
    const e = bad(`${'('.repeat(MAX_NESTING_DEPTH + 1)}true${')'.repeat(MAX_NESTING_DEPTH + 1)}`);
    assert.match(e.message, /nesting deeper than 64 levels at 64/);
  });
  test('adversarial deep nesting within the byte cap does not overflow the stack', () => {
    const e = bad('('.repeat(16000));
    assert.match(e.message, /nesting deeper/);
    bad('not ('.repeat(3000));
  });
  test('a long flat chain of or parses without recursion limits', () => {
    const text = Array.from({ length: 1500 }, () => 'true').join(' or ');
    assert.equal(pred(text).kind, 'or');
  });
});
