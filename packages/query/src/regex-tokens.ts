/**
 * @module regex-tokens
 * A shallow tokenizer for RE2 pattern text (packages/query/README.md, "Regular expressions"). It does not decide
 * whether a pattern is valid — RE2 does that — it only finds where each atom, group and quantifier starts and ends,
 * so that error messages can cite a position and the literal pre-filter can see the pattern's top-level shape.
 */

/**
 * Token classes:
 * - `char`: one literal code point (including `]`, `}` and a `{` that does not start a repeat count);
 * - `meta`: `.`, `^` or `$`;
 * - `escape`: a backslash sequence (`\.`, `\d`, `\x{41}`, `\p{Greek}`, `\Q...\E`, …);
 * - `class`: a bracketed character class, `closed` false when the pattern ends inside it;
 * - `open`: `(`, `(?:`, `(?P<name>`, `(?i:` or another `(?` prefix (`prefix` holds the text after `(`);
 * - `flags`: a bare flag group such as `(?i)`, which opens nothing;
 * - `close`: `)`;
 * - `alt`: `|`;
 * - `repeat`: `*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}`, with its lazy `?` or possessive `+` suffix.
 */
export type RegexTokenKind = 'char' | 'meta' | 'escape' | 'class' | 'open' | 'flags' | 'close' | 'alt' | 'repeat';

/** One token: `start`/`end` are UTF-16 offsets into the pattern, half-open; `text` is the source text. */
export interface RegexToken {
  readonly kind: RegexTokenKind;
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** `class` only: false when the pattern ends before the closing `]`. */
  readonly closed?: boolean;
  /** `repeat` only: a trailing `+` (possessive, which RE2 rejects). */
  readonly possessive?: boolean;
}

// The same shape RE2 accepts as a repeat count; anything else after `{` is a literal brace.
const REPEAT_COUNT_RE = /^\{[0-9]+(?:,[0-9]*)?\}/;
const OCTAL_RE = /^[0-7]{1,3}/;
const FLAGS_RE = /^\(\?[imsU-]*([:)])/;

/** Index just past the `}` that closes a `{` at `i`, or the end of the pattern when none does. */
function pastBrace(p: string, i: number): number {
  const close = p.indexOf('}', i);
  return close < 0 ? p.length : close + 1;
}

/** End of the escape sequence whose backslash is at `i`. */
function escapeEnd(p: string, i: number): number {
  const c = p[i + 1];
  if (c === undefined) return i + 1;
  switch (c) {
    case 'Q': {
      const e = p.indexOf('\\E', i + 2);
      return e < 0 ? p.length : e + 2;
    }
    case 'x':
      if (p[i + 2] === '{') return pastBrace(p, i + 2);
      return Math.min(p.length, i + 4);
    case 'p':
    case 'P':
      if (p[i + 2] === '{') return pastBrace(p, i + 2);
      return Math.min(p.length, i + 3);
    default: {
      const octal = OCTAL_RE.exec(p.slice(i + 1, i + 4));
      if (octal) return i + 1 + octal[0].length;
      return i + 1 + String.fromCodePoint(p.codePointAt(i + 1) as number).length;
    }
  }
}

/** End of the character class whose `[` is at `i`, and whether a `]` closed it. */
function classEnd(p: string, i: number): { end: number; closed: boolean } {
  let j = i + 1;
  if (p[j] === '^') j++;
  if (p[j] === ']') j++; // a `]` first in the class is a literal
  while (j < p.length) {
    const c = p[j];
    if (c === ']') return { end: j + 1, closed: true };
    if (c === '\\') {
      j = escapeEnd(p, j);
    } else if (c === '[' && p[j + 1] === ':') {
      const close = p.indexOf(':]', j + 2);
      j = close < 0 ? j + 1 : close + 2;
    } else {
      j++;
    }
  }
  return { end: p.length, closed: false };
}

/** End of the `(` prefix at `i` and whether it is a bare flag group. */
function groupPrefix(p: string, i: number): { end: number; kind: 'open' | 'flags' } {
  if (p[i + 1] !== '?') return { end: i + 1, kind: 'open' };
  const rest = p.slice(i);
  const flags = FLAGS_RE.exec(rest);
  if (flags) return { end: i + flags[0].length, kind: flags[1] === ')' ? 'flags' : 'open' };
  // Lookaround, atomic and other `(?` forms: the prefix is what names the construct. Lookbehind is tried
  // before named groups, which `(?<=a)b>` would otherwise look like.
  const other = /^\(\?(?:<[=!]|[=!>#(])/.exec(rest);
  if (other) return { end: i + other[0].length, kind: 'open' };
  const named = /^\(\?P?<[^>]*>/.exec(rest);
  if (named) return { end: i + named[0].length, kind: 'open' };
  return { end: i + 2, kind: 'open' };
}

/** Splits `pattern` into tokens. Never throws; unbalanced or unknown syntax still yields tokens. */
export function tokenizeRegex(pattern: string): RegexToken[] {
  const out: RegexToken[] = [];
  const p = pattern;
  const push = (kind: RegexTokenKind, start: number, end: number, extra?: Partial<RegexToken>): void => {
    out.push({ kind, start, end, text: p.slice(start, end), ...extra });
  };
  let i = 0;
  while (i < p.length) {
    const c = p[i] as string;
    switch (c) {
      case '\\':
        push('escape', i, escapeEnd(p, i));
        break;
      case '[': {
        const { end, closed } = classEnd(p, i);
        push('class', i, end, { closed });
        break;
      }
      case '(': {
        const { end, kind } = groupPrefix(p, i);
        push(kind, i, end);
        break;
      }
      case ')':
        push('close', i, i + 1);
        break;
      case '|':
        push('alt', i, i + 1);
        break;
      case '.':
      case '^':
      case '$':
        push('meta', i, i + 1);
        break;
      case '*':
      case '+':
      case '?':
      case '{': {
        const count = c === '{' ? REPEAT_COUNT_RE.exec(p.slice(i)) : null;
        if (c === '{' && count === null) {
          push('char', i, i + 1);
          break;
        }
        let end = i + (count ? count[0].length : 1);
        const suffix = p[end];
        if (suffix === '?' || suffix === '+') end++;
        push('repeat', i, end, { possessive: suffix === '+' });
        break;
      }
      default:
        push('char', i, i + String.fromCodePoint(p.codePointAt(i) as number).length);
    }
    i = (out[out.length - 1] as RegexToken).end;
  }
  return out;
}
