/**
 * @module regex-syntax-error
 * Explains a pattern RE2 refused, in our own words (packages/query/README.md, "Regular expressions"). The engine's
 * exception carries an error code and the offending text but no offset, so the position comes from our tokenizer
 * where the code says what to look for, and from the offending text otherwise. Its own message is never shown.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';
import type { RegexToken } from './regex-tokens.js';

/** Why RE2 refused a pattern: where (0-based UTF-16 offset, `undefined` for the pattern as a whole) and what. */
export interface SyntaxProblem {
  readonly position: number | undefined;
  readonly what: string;
}

/** The user's own text, cut short so one message stays one readable line. */
function shown(text: string): string {
  const chars = [...text];
  return chars.length > 24 ? `${chars.slice(0, 24).join('')}...` : text;
}

/** Offset of the first `(` that no `)` closes, and of the first `)` that closes nothing. */
function unbalanced(tokens: readonly RegexToken[]): { open?: number; close?: number } {
  const opens: number[] = [];
  let close: number | undefined;
  for (const t of tokens) {
    if (t.kind === 'open') opens.push(t.start);
    else if (t.kind === 'close' && opens.pop() === undefined && close === undefined) close = t.start;
  }
  return { open: opens[opens.length - 1], close };
}

/** Offset of `fragment` inside a character class, else anywhere, else `undefined`. */
function locate(pattern: string, tokens: readonly RegexToken[], fragment: string | null): number | undefined {
  if (fragment === null || fragment === '') return undefined;
  for (const t of tokens) {
    const at = t.kind === 'class' ? t.text.indexOf(fragment) : -1;
    if (at >= 0) return t.start + at;
  }
  const at = pattern.indexOf(fragment);
  return at >= 0 ? at : undefined;
}

// Each candidate costs one compile of a prefix (at most 1 KiB): enough for any realistic pattern, bounded for all.
const MAX_PREFIX_TRIES = 32;

/** Whether compiling `text` fails with the same code and offending text as `e`. */
function failsLike(text: string, e: RE2JSSyntaxException): boolean {
  try {
    RE2JS.compile(text);
    return false;
  } catch (again) {
    return (
      again instanceof RE2JSSyntaxException &&
      again.getDescription() === e.getDescription() &&
      again.getPattern() === e.getPattern()
    );
  }
}

/**
 * Offset of the occurrence of the offending text that RE2 stopped at. RE2 reads left to right and the text ends
 * where it stopped, so that is the first occurrence whose prefix, with its open groups closed, fails the same way
 * (an earlier identical text can be valid: `a*(*)`). Falls back to the first occurrence.
 */
function locateByPrefix(
  pattern: string,
  tokens: readonly RegexToken[],
  e: RE2JSSyntaxException,
  fragment: string | null,
): number | undefined {
  if (fragment === null || fragment === '') return undefined;
  const first = pattern.indexOf(fragment);
  let at = first;
  for (let tries = 0; at >= 0 && tries < MAX_PREFIX_TRIES; tries++, at = pattern.indexOf(fragment, at + 1)) {
    const cut = at + fragment.length;
    if (tokens.some((t) => t.start < cut && cut < t.end)) continue; // a cut inside a token is no place RE2 stops
    let depth = 0;
    for (const t of tokens) {
      if (t.end > cut) break;
      if (t.kind === 'open') depth++;
      else if (t.kind === 'close') depth--;
    }
    if (depth >= 0 && failsLike(pattern.slice(0, cut) + ')'.repeat(depth), e)) return at;
  }
  return first >= 0 ? first : undefined;
}

/** Offset of the second group named `name` (the one RE2 calls a duplicate). */
function secondNamed(tokens: readonly RegexToken[], name: string): number | undefined {
  const named = tokens.filter((t) => t.kind === 'open' && (t.text === `(?P<${name}>` || t.text === `(?<${name}>`));
  return named[1]?.start;
}

function explainSyntax(pattern: string, tokens: readonly RegexToken[], e: RE2JSSyntaxException): SyntaxProblem {
  const input = e.getPattern();
  const frag = shown(input ?? '');
  const at = locate(pattern, tokens, input);
  const stoppedAt = (): number | undefined => locateByPrefix(pattern, tokens, e, input);
  // The codes are the engine's fixed descriptions (re2js 2.10.0, pinned in package.json).
  switch (e.getDescription()) {
    case 'missing closing )':
      return { position: unbalanced(tokens).open ?? at, what: 'the group opened here has no closing )' };
    case 'unexpected )':
      return { position: unbalanced(tokens).close ?? at, what: 'this ) closes no group' };
    case 'missing closing ]':
      return {
        position: tokens.find((t) => t.kind === 'class' && !t.closed)?.start ?? at,
        what: 'the character class opened here has no closing ]',
      };
    case 'trailing backslash at end of expression':
      return { position: pattern.length - 1, what: 'the pattern ends with a lone backslash' };
    case 'invalid escape sequence':
      if (frag === '\\u' || frag === '\\c') {
        return { position: stoppedAt(), what: `the escape ${frag} is not recognised; write a code point as \\x{263A}` };
      }
      return { position: stoppedAt(), what: `the escape ${frag} is not recognised` };
    case 'invalid character class range':
      return { position: at, what: `${frag} is not a valid character range or class name` };
    case 'invalid named capture':
      return { position: stoppedAt(), what: `the group name in ${frag} is not valid (letters, digits and _ only)` };
    case 'duplicate capture group name':
      return {
        position: secondNamed(tokens, input ?? '') ?? at,
        what: `the group name ${frag} is used twice`,
      };
    case 'invalid or unsupported Perl syntax':
      return {
        position: stoppedAt(),
        what: `the group syntax ${frag} is not recognised (groups are (...), (?:...), (?P<name>...) or (?<name>...); flags are i, m, s and U)`,
      };
    case 'invalid nested repetition operator':
      return { position: stoppedAt(), what: `${frag} repeats a repetition; use one quantifier, optionally lazy (*?)` };
    case 'invalid repeat count':
      return {
        position: stoppedAt(),
        what: `the repeat count ${frag} is invalid (at most 1000, also when nested counts are multiplied, and {min,max} needs min <= max)`,
      };
    case 'missing argument to repetition operator':
      return { position: stoppedAt(), what: `the quantifier ${frag} has nothing to repeat` };
    case 'expression nests too deeply':
      return { position: undefined, what: 'it nests too deeply' };
    case 'expression too large':
      return { position: undefined, what: 'it is too large once its repetitions are expanded' };
    default:
      return { position: at, what: 'it cannot be compiled' };
  }
}

/**
 * Explains why `compile(pattern)` threw `e`. Returns `undefined` for anything that is not the regex engine's own
 * exception (a bug, which the caller rethrows).
 */
export function explainCompileError(
  pattern: string,
  tokens: readonly RegexToken[],
  e: unknown,
): SyntaxProblem | undefined {
  if (e instanceof RE2JSSyntaxException) return explainSyntax(pattern, tokens, e);
  if (e instanceof RE2JSException) return { position: undefined, what: 'it cannot be compiled' };
  return undefined;
}
