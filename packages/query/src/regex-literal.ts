/**
 * @module regex-literal
 * The literal pre-filter of a regex match (packages/query/README.md, "Regular expressions"): a substring that every
 * match must contain, so a row without it is rejected by `String.prototype.includes` before the regex engine runs.
 * Finding none is always correct, so the rules are deliberately narrow; `regex-literal.property.test.ts` checks
 * that the pre-filter never changes an answer.
 */
import type { RegexToken } from './regex-tokens.js';

/** A literal every match contains. `whole` is true when the pattern is nothing but that literal. */
export interface RequiredLiteral {
  readonly literal: string;
  readonly whole: boolean;
}

// Escaped ASCII punctuation is the character itself in RE2; other escapes (\d, \x41, \n, \b, \Q...) are classes,
// code points written another way or assertions, and end the literal run instead.
const ESCAPED_PUNCT_RE = /^\\[!-/:-@[-`{-~]$/;

function literalChar(t: RegexToken): string | undefined {
  if (t.kind === 'char') return t.text;
  if (t.kind === 'escape' && ESCAPED_PUNCT_RE.test(t.text)) return t.text.slice(1);
  return undefined;
}

/**
 * The longest run of literal characters at the top level of the pattern, or `undefined` when none is safe.
 * Gives up on any flag group (`(?i)` would make the run case-insensitive) and on any top-level `|` (no run is
 * then common to every match). Groups, classes, escapes other than punctuation, anchors and `.` end a run; a
 * character followed by a quantifier is not part of one, since it may repeat or be absent.
 */
export function requiredLiteral(tokens: readonly RegexToken[]): RequiredLiteral | undefined {
  if (tokens.some((t) => t.kind === 'flags' || (t.kind === 'open' && /^\(\?[imsU-]/.test(t.text)))) {
    return undefined;
  }
  let best = '';
  let run = '';
  let whole = true;
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as RegexToken;
    if (depth > 0) {
      if (t.kind === 'open') depth++;
      else if (t.kind === 'close') depth--;
      continue;
    }
    if (t.kind === 'alt') return undefined;
    const c = literalChar(t);
    if (c !== undefined && tokens[i + 1]?.kind !== 'repeat') {
      run += c;
      continue;
    }
    whole = false;
    if (run.length > best.length) best = run;
    run = '';
    if (t.kind === 'open') depth++;
  }
  if (run.length > best.length) best = run;
  return best === '' ? undefined : { literal: best, whole };
}
