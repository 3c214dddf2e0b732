/**
 * @module regex-unsupported
 * Finds the backtracking-only constructs that other regex dialects accept and RE2 does not (packages/query/README.md,
 * "Regular expressions"). RE2 rejects them too, but with a message about the symptom ("invalid escape sequence")
 * rather than the cause; naming the construct tells the user what to rewrite.
 */
import type { RegexToken } from './regex-tokens.js';

/** The first unsupported construct: where it starts (0-based UTF-16 offset) and what it is, in our words. */
export interface UnsupportedConstruct {
  readonly position: number;
  readonly what: string;
}

// A single digit 1-9 after a backslash is a backreference elsewhere; RE2 reads `\1` followed by another octal
// digit as an octal escape (and accepts it), so only the forms RE2 refuses are reported here.
const BACKREFERENCE_RE = /^\\(?:[1-9](?![0-7])|[89]|k[<{']|g)/;

function describe(pattern: string, t: RegexToken): string | undefined {
  switch (t.kind) {
    case 'escape':
      // `\k<name>` tokenizes as `\k`: look at the pattern past the token.
      if (BACKREFERENCE_RE.test(pattern.slice(t.start, t.start + 3))) {
        const shown = t.text.length === 2 && /[kg]/.test(t.text[1] as string) ? `${t.text}...` : t.text;
        return `backreferences (${shown}) are not allowed`;
      }
      return undefined;
    case 'open':
      if (t.text.startsWith('(?=') || t.text.startsWith('(?!')) {
        return `lookahead (${t.text}...) is not allowed`;
      }
      if (t.text.startsWith('(?<=') || t.text.startsWith('(?<!')) {
        return `lookbehind (${t.text}...) is not allowed`;
      }
      if (t.text.startsWith('(?>')) return 'atomic groups ((?>...)) are not allowed';
      if (t.text.startsWith('(?(')) return 'conditional groups ((?(...)...)) are not allowed';
      return undefined;
    case 'repeat':
      if (t.possessive) return `possessive quantifiers (${t.text}) are not allowed`;
      return undefined;
    default:
      return undefined;
  }
}

/** The leftmost construct in `pattern` (split into `tokens`) that RE2 cannot run, or `undefined` when none is. */
export function findUnsupported(pattern: string, tokens: readonly RegexToken[]): UnsupportedConstruct | undefined {
  for (const t of tokens) {
    const what = describe(pattern, t);
    if (what !== undefined) return { position: t.start, what };
  }
  return undefined;
}
