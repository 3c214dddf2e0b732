/**
 * @module regex-literal
 * The literal pre-filter of a regex match (packages/query/README.md, "Regular expressions"): plain-string tests that
 * every matching text passes, so a row that fails them is rejected by `startsWith`/`includes` before the regex
 * engine runs. Finding none is always correct, so the rules are deliberately narrow;
 * `regex-literal.property.test.ts` checks that the pre-filter never changes an answer.
 */
import type { RegexToken } from './regex-tokens.js';

/**
 * What every match of one top-level alternative needs: the text starts with `prefix` (the literal right after a
 * leading `^`) and contains `contains` (the longest other literal run). At least one is set. `exact` is true when
 * the alternative is nothing but that literal, so passing the tests is the answer.
 */
export interface LiteralBranch {
  readonly prefix?: string;
  readonly contains?: string;
  readonly exact: boolean;
}

// Escaped ASCII punctuation is the character itself in RE2; other escapes (\d, \x41, \n, \b, \Q...) are classes,
// code points written another way or assertions, and end a literal run instead.
const ESCAPED_PUNCT_RE = /^\\[!-/:-@[-`{-~]$/;

function literalChar(t: RegexToken): string | undefined {
  if (t.kind === 'char') return t.text;
  if (t.kind === 'escape' && ESCAPED_PUNCT_RE.test(t.text)) return t.text.slice(1);
  return undefined;
}

/** Splits the tokens at top-level `|`; groups are kept whole inside their alternative. */
function alternatives(tokens: readonly RegexToken[]): RegexToken[][] {
  const out: RegexToken[][] = [[]];
  let depth = 0;
  for (const t of tokens) {
    if (t.kind === 'open') depth++;
    else if (t.kind === 'close') depth--;
    if (depth === 0 && t.kind === 'alt') out.push([]);
    else (out[out.length - 1] as RegexToken[]).push(t);
  }
  return out;
}

/**
 * The literal runs of one alternative, in order. A run is ended by anything but a literal character: groups
 * (skipped whole), classes, escapes other than punctuation, anchors, `.`; a character followed by a quantifier
 * is in no run, since it may repeat or be absent. `startsAt0` says the first run begins right after a leading `^`.
 */
function runsOf(tokens: readonly RegexToken[]): { runs: string[]; startsAt0: boolean; single: boolean } {
  const runs: string[] = [];
  let run = '';
  let depth = 0;
  let breaks = 0;
  let firstRunAt = -1;
  const end = (): void => {
    if (run !== '') runs.push(run);
    run = '';
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as RegexToken;
    if (depth > 0) {
      if (t.kind === 'open') depth++;
      else if (t.kind === 'close') depth--;
      continue;
    }
    const c = literalChar(t);
    if (c !== undefined && tokens[i + 1]?.kind !== 'repeat') {
      if (firstRunAt < 0) firstRunAt = i;
      run += c;
      continue;
    }
    breaks++;
    end();
    if (t.kind === 'open') depth++;
  }
  end();
  const anchored = tokens[0]?.kind === 'meta' && tokens[0].text === '^';
  const startsAt0 = anchored && firstRunAt === 1;
  // One run and nothing else (a leading `^` aside): the alternative is exactly that literal.
  const single = runs.length === 1 && breaks === (anchored ? 1 : 0);
  return { runs, startsAt0, single };
}

function branchOf(tokens: readonly RegexToken[]): LiteralBranch | undefined {
  const { runs, startsAt0, single } = runsOf(tokens);
  const prefix = startsAt0 ? runs[0] : undefined;
  const rest = startsAt0 ? runs.slice(1) : runs;
  const longest = rest.reduce<string | undefined>(
    (a, r) => (a === undefined || r.length > a.length ? r : a),
    undefined,
  );
  // A run no longer than the prefix adds a scan for little selectivity.
  const contains = longest !== undefined && longest.length > (prefix?.length ?? 0) ? longest : undefined;
  if (prefix === undefined && contains === undefined) return undefined;
  return { ...(prefix !== undefined && { prefix }), ...(contains !== undefined && { contains }), exact: single };
}

/**
 * The pre-filter of a pattern: one {@link LiteralBranch} per top-level alternative (a text that matches passes at
 * least one), or `undefined` when some alternative has no literal or the pattern sets a flag (`(?i)` would make
 * the literals case-insensitive; any flag group gives up, to stay simple).
 */
export function literalBranches(tokens: readonly RegexToken[]): readonly LiteralBranch[] | undefined {
  if (tokens.some((t) => t.kind === 'flags' || (t.kind === 'open' && /^\(\?[imsU-]/.test(t.text)))) {
    return undefined;
  }
  const out: LiteralBranch[] = [];
  for (const alt of alternatives(tokens)) {
    const b = branchOf(alt);
    if (b === undefined) return undefined;
    out.push(b);
  }
  return out;
}

/** The test a text must pass to possibly match: `undefined` when there is no pre-filter. */
export function literalTest(branches: readonly LiteralBranch[] | undefined): ((s: string) => boolean) | undefined {
  if (branches === undefined) return undefined;
  const one = (b: LiteralBranch): ((s: string) => boolean) => {
    const { prefix, contains } = b;
    if (prefix !== undefined && contains !== undefined) return (s) => s.startsWith(prefix) && s.includes(contains);
    if (prefix !== undefined) return (s) => s.startsWith(prefix);
    return (s) => s.includes(contains as string);
  };
  const tests = branches.map(one);
  if (tests.length === 1) return tests[0];
  return (s) => tests.some((t) => t(s));
}
