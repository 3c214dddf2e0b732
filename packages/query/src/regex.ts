/**
 * @module regex
 * The one place a user's pattern (`matches`, `=~`, `!~`) becomes a matcher (packages/query/README.md, "Regular
 * expressions"; docs/design/query-governance.md, "Regular expressions run in linear time"). Patterns are RE2
 * syntax and run on RE2's automaton, whose cost is linear in the text: a backtracking engine can take exponential
 * time on patterns such as `(a+)+$`, and one query could then hold a worker forever. Validation and the engine
 * both compile through here, so they accept exactly the same patterns and explain refusals the same way.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';
import { RE2JS } from 're2js';
import type { LiteralBranch } from './regex-literal.js';
import { literalBranches, literalTest } from './regex-literal.js';
import { explainCompileError } from './regex-syntax-error.js';
import { tokenizeRegex } from './regex-tokens.js';
import { findUnsupported } from './regex-unsupported.js';

/** Longest regex pattern accepted, in UTF-8 bytes (bounds compile cost and the automaton's size). */
export const MAX_REGEX_PATTERN_BYTES = 1024;

/** A compiled pattern. Matching is an unanchored search, like `RegExp.prototype.test`. */
export interface LinearRegex {
  readonly pattern: string;
  /** The literal pre-filter: per top-level alternative, what a matching text starts with or contains. */
  readonly literals: readonly LiteralBranch[] | undefined;
  /** True when some part of `s` matches: the pre-filter first, then the automaton only if it passed. */
  test(s: string): boolean;
  /** The automaton alone, without the pre-filter (for tests and benchmarks that compare the two). */
  search(s: string): boolean;
}

/**
 * Why a pattern was refused. `position` is the 0-based UTF-16 offset in the pattern of the construct at fault,
 * 0 when the fault is the pattern as a whole; `message` is user-facing and already names it.
 */
export interface RegexError {
  readonly message: string;
  readonly position: number;
}

const RE2_NOTE = 'Sluice uses RE2 syntax (no backreferences, no lookaround)';

/** The pattern as quoted in messages, cut short so a 1 KiB pattern does not swamp the reason. */
function quoted(pattern: string): string {
  const chars = [...pattern];
  return JSON.stringify(chars.length > 64 ? `${chars.slice(0, 64).join('')}...` : pattern);
}

/** Options of {@link compileLinearRegex}. */
export interface CompileRegexOptions {
  /** Longest pattern accepted, in UTF-8 bytes; {@link MAX_REGEX_PATTERN_BYTES} unless set. */
  readonly maxPatternBytes?: number;
}

/** Compiles `pattern` as RE2 syntax. Never throws for bad input. */
export function compileLinearRegex(
  pattern: string,
  options: CompileRegexOptions = {},
): Result<LinearRegex, RegexError> {
  const maxBytes = options.maxPatternBytes ?? MAX_REGEX_PATTERN_BYTES;
  if (Buffer.byteLength(pattern, 'utf8') > maxBytes) {
    return err({
      message: `regular expression is longer than ${maxBytes} bytes; use a shorter pattern or contains()`,
      position: 0,
    });
  }
  const tokens = tokenizeRegex(pattern);
  const unsupported = findUnsupported(pattern, tokens);
  if (unsupported !== undefined) {
    return err({
      message: `regular expression ${quoted(pattern)} is not supported at position ${unsupported.position}: ${unsupported.what}; ${RE2_NOTE}`,
      position: unsupported.position,
    });
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    const problem = explainCompileError(pattern, tokens, e);
    if (problem === undefined) throw e;
    const where = problem.position === undefined ? '' : ` at position ${problem.position}`;
    return err({
      message: `invalid regular expression ${quoted(pattern)}${where}: ${problem.what}; Sluice uses RE2 syntax`,
      position: problem.position ?? 0,
    });
  }
  const search = (s: string): boolean => re.test(s);
  const literals = literalBranches(tokens);
  const passes = literalTest(literals);
  let test = search;
  // When every alternative is exactly its literal, the literal tests are the answer and the automaton is not run.
  if (passes !== undefined) test = literals?.every((b) => b.exact) ? passes : (s) => passes(s) && search(s);
  return ok({ pattern, literals, test, search });
}
