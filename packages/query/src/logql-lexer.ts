/**
 * @module logql-lexer
 * Tokens of LogQL text (docs/grafana.md): punctuation and operators, identifiers, double-quoted strings (Go
 * escapes) and back-quoted raw strings, numbers, and numbers with a unit (`5m`, `1h30m`, `10KB`). `#` starts a
 * comment to the end of the line. Never throws: a bad character or an unterminated string is an error value.
 */
import { err, ok, type Result } from '@sluice/core';

/** One token; `pos` is its UTF-16 offset. */
export type LogqlToken =
  | { readonly kind: 'op'; readonly text: string; readonly pos: number }
  | { readonly kind: 'ident'; readonly text: string; readonly pos: number }
  | { readonly kind: 'string'; readonly text: string; readonly pos: number }
  | { readonly kind: 'number'; readonly text: string; readonly pos: number }
  /** A number with a unit: a duration or a byte size. */
  | { readonly kind: 'unit'; readonly text: string; readonly pos: number }
  | { readonly kind: 'end'; readonly text: ''; readonly pos: number };

// Longest first, so `|=` wins over `|` and `!=` over `!`.
const OPS = ['|=', '|~', '!=', '!~', '=~', '==', '>=', '<=', '|', '=', '>', '<', '{', '}', '(', ')', '[', ']', ','];
const ARITH = ['+', '-', '*', '/', '%', '^', ':'];
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  "'": "'",
};

function readString(text: string, start: number): Result<{ value: string; end: number }, string> {
  let out = '';
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') return ok({ value: out, end: i + 1 });
    if (c === '\n') break;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = text[i + 1];
    if (e === undefined) break;
    if (ESCAPES[e] !== undefined) {
      out += ESCAPES[e];
      i += 2;
    } else if (e === 'u' && /^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) {
      out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
      i += 6;
    } else if (e === 'x' && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 2, i + 4))) {
      out += String.fromCharCode(parseInt(text.slice(i + 2, i + 4), 16));
      i += 4;
    } else {
      return err(`unknown escape \\${e} in the string at ${start}`);
    }
  }
  return err(`unterminated string at ${start}`);
}

/** Splits LogQL text into tokens, ending with one `end` token. */
export function lexLogql(text: string): Result<LogqlToken[], string> {
  const tokens: LogqlToken[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      const s = readString(text, i);
      if (!s.ok) return s;
      tokens.push({ kind: 'string', text: s.value.value, pos: i });
      i = s.value.end;
      continue;
    }
    if (c === '`') {
      const close = text.indexOf('`', i + 1);
      if (close < 0) return err(`unterminated string at ${i}`);
      tokens.push({ kind: 'string', text: text.slice(i + 1, close), pos: i });
      i = close + 1;
      continue;
    }
    const num = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (num !== null) {
      const unit = /^(?:[0-9]+(?:\.[0-9]+)?[a-zA-Zµ]+)+/.exec(text.slice(i));
      if (unit !== null && unit[0].length > num[0].length) {
        tokens.push({ kind: 'unit', text: unit[0], pos: i });
        i += unit[0].length;
      } else {
        tokens.push({ kind: 'number', text: num[0], pos: i });
        i += num[0].length;
      }
      continue;
    }
    const ident = /^[a-zA-Z_][a-zA-Z0-9_.]*/.exec(text.slice(i));
    if (ident !== null) {
      tokens.push({ kind: 'ident', text: ident[0], pos: i });
      i += ident[0].length;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i)) ?? ARITH.find((o) => text.startsWith(o, i));
    if (op !== undefined) {
      tokens.push({ kind: 'op', text: op, pos: i });
      i += op.length;
      continue;
    }
    return err(`unexpected character ${JSON.stringify(c)} at ${i}`);
  }
  tokens.push({ kind: 'end', text: '', pos: text.length });
  return ok(tokens);
}

const DURATION_UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
  d: 86_400_000_000_000n,
  w: 604_800_000_000_000n,
  y: 31_536_000_000_000_000n,
};

/** A Prometheus-style duration (`5m`, `1h30m`, `250ms`) in ns; `null` when the text is not one. */
export function parseLogqlDuration(text: string): bigint | null {
  const parts = /^(?:[0-9]+(?:ns|us|µs|ms|s|m|h|d|w|y))+$/.test(text) ? text.match(/[0-9]+[a-zµ]+/g) : null;
  if (parts === null) return null;
  let total = 0n;
  for (const p of parts) {
    const [, n, unit] = /^([0-9]+)([a-zµ]+)$/.exec(p)!;
    total += BigInt(n!) * DURATION_UNITS[unit!]!;
  }
  return total;
}
