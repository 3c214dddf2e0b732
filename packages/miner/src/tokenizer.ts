/**
 * @module tokenizer
 * Splits a string body into whitespace-separated tokens. Whitespace is Unicode whitespace (JS `\s`). Core's
 * `MinedFields` has no `separators` column, so a line can be rebuilt from its template only when its separators
 * are canonical (exactly one ASCII space between tokens, none leading or trailing); the tokenizer reports that,
 * and the miner marks non-canonical lines lossy (body kept).
 */

/** A tokenized line. */
export interface TokenizedLine {
  readonly tokens: readonly string[];
  /** True when `tokens.join(' ') === line`, i.e. the line is reconstructible from its tokens. */
  readonly canonical: boolean;
}

// Anything that makes `line.split(' ')` wrong: non-space whitespace, a double space, a leading/trailing space.
const NON_CANONICAL = /[^\S ]| {2}|^ | $/;
const WHITESPACE_RUN = /\s+/;
const EMPTY: readonly string[] = Object.freeze([]);

/**
 * Tokenizes `line` on runs of Unicode whitespace.
 *
 * @example tokenize('a  b') // { tokens: ['a', 'b'], canonical: false }
 */
export function tokenize(line: string): TokenizedLine {
  if (line.length === 0) return { tokens: EMPTY, canonical: true };
  if (!NON_CANONICAL.test(line)) return { tokens: line.split(' '), canonical: true };
  const trimmed = line.trim();
  return { tokens: trimmed.length === 0 ? EMPTY : trimmed.split(WHITESPACE_RUN), canonical: false };
}
