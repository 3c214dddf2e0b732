/**
 * @module scalar-value
 * Coercion of one configuration value into its typed form. Values arrive as YAML scalars (string, number,
 * boolean) or, from environment variables and `${env:…}` substitution, as strings; both go through the same
 * rules here, so `"8"` from the environment and `8` from YAML mean the same thing. Unset values (`null`, `''`)
 * never reach these functions: they are normalised to "absent" first and the key's default applies.
 */
import type { Result } from '@sluice/core';

/** Bounds of an integer or decimal key. */
export interface NumberBounds {
  /** Smallest allowed value (inclusive). */
  readonly min?: number;
  /** Smallest allowed value is strictly greater than this (exclusive), e.g. `0` for `(0, 1]`. */
  readonly minExclusive?: number;
  /** Largest allowed value (inclusive). */
  readonly max?: number;
}

const INTEGER_TEXT = /^[+-]?\d+$/;
const DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Describes a raw value for an error message without dumping it: strings are quoted and shortened. */
export function describeValue(raw: unknown): string {
  if (typeof raw === 'string') {
    const short = raw.length > 40 ? `${raw.slice(0, 37)}...` : raw;
    return JSON.stringify(short);
  }
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  if (Array.isArray(raw)) return 'a list';
  if (raw === null || raw === undefined) return 'nothing';
  if (typeof raw === 'object') return 'a mapping';
  return 'an unsupported value';
}

/** Renders the allowed range for messages: `>= 1`, `between 0 and 8`, `in (0, 1]`. */
export function describeBounds(b: NumberBounds): string {
  const low = b.minExclusive !== undefined ? `(${b.minExclusive}` : b.min !== undefined ? `[${b.min}` : undefined;
  if (low !== undefined && b.max !== undefined) {
    return b.minExclusive !== undefined ? `in ${low}, ${b.max}]` : `between ${b.min} and ${b.max}`;
  }
  if (b.minExclusive !== undefined) return `> ${b.minExclusive}`;
  if (b.min !== undefined) return `>= ${b.min}`;
  if (b.max !== undefined) return `<= ${b.max}`;
  return '';
}

function withinBounds(n: number, b: NumberBounds): boolean {
  if (b.min !== undefined && n < b.min) return false;
  if (b.minExclusive !== undefined && n <= b.minExclusive) return false;
  if (b.max !== undefined && n > b.max) return false;
  return true;
}

function rangeSuffix(b: NumberBounds): string {
  const r = describeBounds(b);
  return r === '' ? '' : ` ${r}`;
}

/** A whole number within `bounds`; accepts a YAML integer or decimal digits in a string. */
export function coerceInteger(raw: unknown, bounds: NumberBounds): Result<number, string> {
  const expected = `must be an integer${rangeSuffix(bounds)}, got ${describeValue(raw)}`;
  let n: number;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && INTEGER_TEXT.test(raw.trim())) n = Number(raw.trim());
  else return { ok: false, error: expected };
  if (!Number.isSafeInteger(n) || !withinBounds(n, bounds)) return { ok: false, error: expected };
  return { ok: true, value: n };
}

/** A finite decimal number within `bounds`; accepts a YAML number or decimal text in a string. */
export function coerceDecimal(raw: unknown, bounds: NumberBounds): Result<number, string> {
  const expected = `must be a number${rangeSuffix(bounds)}, got ${describeValue(raw)}`;
  let n: number;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && DECIMAL_TEXT.test(raw.trim())) n = Number(raw.trim());
  else return { ok: false, error: expected };
  if (!Number.isFinite(n) || !withinBounds(n, bounds)) return { ok: false, error: expected };
  return { ok: true, value: n };
}

/** `true` or `false`: a YAML boolean, or the text `true` / `false` in any letter case. */
export function coerceBoolean(raw: unknown): Result<boolean, string> {
  if (typeof raw === 'boolean') return { ok: true, value: raw };
  if (typeof raw === 'string') {
    const t = raw.trim().toLowerCase();
    if (t === 'true') return { ok: true, value: true };
    if (t === 'false') return { ok: true, value: false };
  }
  return { ok: false, error: `must be true or false, got ${describeValue(raw)}` };
}

/**
 * A string. YAML numbers and booleans are accepted as their text (a bucket called `2024` needs no quotes).
 * The value is not echoed in the message, because string keys include credentials.
 */
export function coerceString(raw: unknown): Result<string, string> {
  if (typeof raw === 'string') return { ok: true, value: raw };
  if (typeof raw === 'number' || typeof raw === 'boolean') return { ok: true, value: String(raw) };
  const what = Array.isArray(raw)
    ? 'a list'
    : typeof raw === 'object' && raw !== null
      ? 'a mapping'
      : 'a non-text value';
  return { ok: false, error: `must be a string, got ${what}` };
}

/** One of `choices`, compared exactly after trimming surrounding whitespace. */
export function coerceChoice<C extends string>(raw: unknown, choices: readonly C[]): Result<C, string> {
  const text = typeof raw === 'string' ? raw.trim() : undefined;
  const hit = choices.find((c) => c === text);
  if (hit !== undefined) return { ok: true, value: hit };
  return { ok: false, error: `must be one of ${choices.join(', ')}, got ${describeValue(raw)}` };
}
