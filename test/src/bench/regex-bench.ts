/**
 * Regex matching cost: V8's backtracking `RegExp.test` against RE2 (`compileLinearRegex` from @sluice/query, the
 * matcher behind `matches`, `=~` and `!~`), with and without the literal pre-filter, over BENCH_ROWS (default
 * 1,000,000) bodies of the query bench's corpus (test/src/helpers/query-corpus.ts). Only the match calls are timed:
 * no Parquet, no server. Prints ms per 1 M rows and each RE2 column's ratio to V8.
 *
 * Run: `npx tsc -b test && node test/dist/bench/regex-bench.js`. Env: BENCH_ROWS, BENCH_RUNS (timed runs per
 * cell after one warm-up, default 3; the median is reported). Not part of the test suite.
 */
import { pathToFileURL } from 'node:url';
import type { LiteralBranch } from '@sluice/query';
import { compileLinearRegex } from '@sluice/query';
import { corpusRecords } from '../helpers/query-corpus.js';
import { median } from './bench-corpus.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

/** A pattern as `matches()` takes it, and the same search as a V8 RegExp (V8 has no inline `(?i)`). */
const PATTERNS: readonly { readonly name: string; readonly re2: string; readonly v8: RegExp }[] = [
  { name: 'literal word', re2: 'timed', v8: /timed/ },
  { name: 'alternation', re2: 'timed out|refused', v8: /timed out|refused/ },
  { name: 'prefix-anchored', re2: '^GET /api/[0-9]+', v8: /^GET \/api\/[0-9]+/ },
  { name: 'class + quantifier', re2: 'took [0-9]{3,} ms', v8: /took [0-9]{3,} ms/ },
  { name: 'case-insensitive', re2: '(?i)error', v8: /error/i },
];

/** Median ms of counting the bodies `test` accepts; the count must be the same every run. */
function time(bodies: readonly string[], test: (s: string) => boolean): { ms: number; hits: number } {
  const once = (): { ms: number; hits: number } => {
    const t0 = performance.now();
    let hits = 0;
    for (const b of bodies) if (test(b)) hits++;
    return { ms: performance.now() - t0, hits };
  };
  const warm = once();
  const runs = Array.from({ length: RUNS }, once);
  if (runs.some((r) => r.hits !== warm.hits)) throw new Error('match counts differ between runs');
  return { ms: median(runs.map((r) => r.ms)), hits: warm.hits };
}

/** The pre-filter in short: `^GET` starts with GET, `"took "` contains it, `|` between alternatives. */
function describeLiterals(literals: readonly LiteralBranch[] | undefined): string {
  if (literals === undefined) return '-';
  const one = (b: LiteralBranch): string =>
    [
      b.prefix === undefined ? '' : `^${JSON.stringify(b.prefix)}`,
      b.contains === undefined ? '' : JSON.stringify(b.contains),
    ]
      .filter((x) => x !== '')
      .join(' ') + (b.exact ? ' (exact)' : '');
  return literals.map(one).join(' | ');
}

/** Runs the comparison over `rows` corpus bodies and prints the table (also called by `npm run bench:governance`). */
export function runRegexBench(rows = ROWS): void {
  const ROWS = rows;
  const bodies = corpusRecords(0, ROWS).map((r) => (r.body as { value: string }).value);
  const per1M = (ms: number): number => (ms * 1_000_000) / ROWS;
  console.log(`${ROWS} bodies, median of ${RUNS} runs; ms per 1 M rows (ratio to V8)\n`);
  const header = ['pattern', 'literal', 'hits', 'V8 RegExp', 'RE2 alone', 'RE2 + literal'];
  const table: string[][] = [];
  for (const p of PATTERNS) {
    const compiled = compileLinearRegex(p.re2);
    if (!compiled.ok) throw new Error(`${p.re2}: ${compiled.error.message}`);
    const re = compiled.value;
    const v8 = time(bodies, (s) => p.v8.test(s));
    const alone = time(bodies, (s) => re.search(s));
    const filtered = time(bodies, (s) => re.test(s));
    if (alone.hits !== v8.hits || filtered.hits !== v8.hits) throw new Error(`${p.re2}: engines disagree`);
    const cell = (ms: number): string => `${per1M(ms).toFixed(0)} (${(ms / v8.ms).toFixed(1)}x)`;
    table.push([
      `${p.name}: ${p.re2}`,
      describeLiterals(re.literals),
      String(v8.hits),
      per1M(v8.ms).toFixed(0),
      cell(alone.ms),
      cell(filtered.ms),
    ]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of table) console.log(line(r));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) runRegexBench();
