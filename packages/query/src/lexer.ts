/**
 * @module lexer
 * Turns query text into tokens (packages/query/README.md, "Grammar"). A query is one line: a newline or any other
 * control character outside a string literal is an error, which is what keeps queries embeddable in YAML. The only
 * whitespace is the space character.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';
import type { QueryError } from './errors.js';
import { queryError } from './errors.js';
import { DURATION_UNIT_NS, parseTimestamp } from './time-text.js';

/** Token classes. `sym` covers operators and punctuation. */
export type TokenKind = 'ident' | 'int' | 'float' | 'duration' | 'timestamp' | 'string' | 'sym' | 'eof';

/** One token. `text` is the source text; `str` the decoded string literal; `ns` a duration or timestamp. */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly str?: string;
  readonly ns?: bigint;
}

const SYMBOLS2 = ['==', '!=', '<=', '>=', '=~', '!~', '&&', '||'];
const SYMBOLS1 = '<>!|()[],.-';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isLetter = (c: string | undefined): boolean =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
const isIdentChar = (c: string | undefined): boolean => isLetter(c) || isDigit(c) || c === '_';

/** Describes a character for an error message (control characters by code point). */
export function describeChar(c: string): string {
  const cp = c.codePointAt(0) ?? 0;
  return cp < 0x20 || cp === 0x7f ? `control character U+${cp.toString(16).toUpperCase().padStart(4, '0')}` : `'${c}'`;
}

/** Tokenizes `text`; the last token is always `eof`. */
export function lex(text: string): Result<readonly Token[], QueryError> {
  const out: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    if (c === ' ') {
      i++;
      continue;
    }
    const start = i;
    const cp = c.charCodeAt(0);
    if (cp < 0x20 || cp === 0x7f) {
      return err(
        queryError(`${describeChar(c)} at ${i}: a query is a single line without control characters`, i, i + 1),
      );
    }
    if (isLetter(c)) {
      while (i < n && isIdentChar(text[i])) i++;
      out.push({ kind: 'ident', text: text.slice(start, i), start, end: i });
      continue;
    }
    if (isDigit(c)) {
      if (/^\d{4}-\d/.test(text.slice(i, i + 6))) {
        const m = /^[0-9A-Za-z:.+-]+/.exec(text.slice(i)) as RegExpExecArray;
        const cand = m[0];
        const ts = parseTimestamp(cand);
        if (!ts.ok) return err(queryError(`invalid timestamp '${cand}' at ${i}: ${ts.reason}`, i, i + cand.length));
        i += cand.length;
        out.push({ kind: 'timestamp', text: cand, start, end: i, ns: ts.ns });
        continue;
      }
      while (i < n && isDigit(text[i])) i++;
      let kind: TokenKind = 'int';
      if (text[i] === '.' && isDigit(text[i + 1])) {
        i++;
        while (i < n && isDigit(text[i])) i++;
        kind = 'float';
      }
      const u = text[i];
      if (
        kind === 'int' &&
        (u === 's' || u === 'm' || u === 'h' || u === 'd' || u === 'w') &&
        !isIdentChar(text[i + 1])
      ) {
        i++;
        const ns = BigInt(text.slice(start, i - 1)) * DURATION_UNIT_NS[u];
        out.push({ kind: 'duration', text: text.slice(start, i), start, end: i, ns });
        continue;
      }
      if (isIdentChar(u)) {
        let j = i;
        while (j < n && isIdentChar(text[j])) j++;
        const bad = text.slice(start, j);
        return err(
          queryError(
            `invalid number '${bad}' at ${start}: durations are an integer followed by one of s, m, h, d, w`,
            start,
            j,
          ),
        );
      }
      out.push({ kind, text: text.slice(start, i), start, end: i });
      continue;
    }
    if (c === '"') {
      const r = lexString(text, i);
      if (!r.ok) return r;
      out.push(r.value);
      i = r.value.end;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (SYMBOLS2.includes(two)) {
      out.push({ kind: 'sym', text: two, start, end: i + 2 });
      i += 2;
      continue;
    }
    if (SYMBOLS1.includes(c)) {
      out.push({ kind: 'sym', text: c, start, end: i + 1 });
      i++;
      continue;
    }
    const hint = c === '=' ? " (did you mean '=='?)" : c === '&' ? " (did you mean '&&'?)" : '';
    const ch = String.fromCodePoint(text.codePointAt(i) ?? cp);
    return err(queryError(`unexpected character ${describeChar(ch)} at ${i}${hint}`, i, i + ch.length));
  }
  out.push({ kind: 'eof', text: '', start: n, end: n });
  return ok(out);
}

function lexString(text: string, start: number): Result<Token, QueryError> {
  let i = start + 1;
  let s = '';
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      return ok({ kind: 'string', text: text.slice(start, i + 1), start, end: i + 1, str: s });
    }
    if (c === '\\') {
      const e = text[i + 1];
      switch (e) {
        case '"':
          s += '"';
          break;
        case '\\':
          s += '\\';
          break;
        case 'n':
          s += '\n';
          break;
        case 't':
          s += '\t';
          break;
        case 'r':
          s += '\r';
          break;
        case 'u': {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9A-Fa-f]{4}$/.test(hex)) {
            return err(queryError(`invalid escape at ${i}: \\u needs exactly four hex digits`, i, i + 2 + hex.length));
          }
          s += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          continue;
        }
        default:
          return err(
            queryError(
              `invalid escape at ${i}: strings allow \\" \\\\ \\n \\t \\r and \\uXXXX`,
              i,
              Math.min(i + 2, text.length),
            ),
          );
      }
      i += 2;
      continue;
    }
    s += c;
    i++;
  }
  return err(queryError(`unterminated string starting at ${start}`, start, text.length));
}
