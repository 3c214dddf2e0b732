/**
 * @module attr-value
 * Lazy lookups into the canonical proto3-JSON attribute columns (`[{"key":…,"value":{"stringValue":…}}]`). A
 * column value is parsed only when a still-candidate row asks for it, and at most once per row and column.
 * int64 values stay exact: canonical JSON carries them as decimal strings.
 */
import { cell, type ColumnData } from './decode/string-vector.js';

/** A typed attribute value; `other` covers arrays, kvlists, bytes and empty values (never compared). */
export type AttrValue =
  | { readonly t: 's'; readonly v: string }
  | { readonly t: 'i'; readonly v: bigint }
  | { readonly t: 'd'; readonly v: number }
  | { readonly t: 'b'; readonly v: boolean }
  | { readonly t: 'o' };

const OTHER: AttrValue = Object.freeze({ t: 'o' });

function typed(value: unknown): AttrValue {
  if (typeof value !== 'object' || value === null) return OTHER;
  const o = value as Record<string, unknown>;
  if (typeof o.stringValue === 'string') return { t: 's', v: o.stringValue };
  if (typeof o.intValue === 'string' && /^-?\d+$/.test(o.intValue)) return { t: 'i', v: BigInt(o.intValue) };
  if ('doubleValue' in o) {
    const d = o.doubleValue;
    if (typeof d === 'number') return { t: 'd', v: d };
    if (d === 'NaN') return { t: 'd', v: NaN };
    if (d === 'Infinity') return { t: 'd', v: Infinity };
    if (d === '-Infinity') return { t: 'd', v: -Infinity };
    return OTHER;
  }
  if (typeof o.boolValue === 'boolean') return { t: 'b', v: o.boolValue };
  return OTHER;
}

/** Per-row-group cache of parsed attribute columns (one row at a time per column). */
export class AttrReader {
  #row = new Map<ColumnData, { row: number; list: unknown[] }>();

  /** The value of `key` in row `i` of a canonical-JSON column, or `undefined` when missing. */
  lookup(column: ColumnData, i: number, key: string): AttrValue | undefined {
    const text = cell(column, i);
    // Cheap pre-check: a key that does not occur in the text cannot be present (no parse for most misses).
    if (typeof text !== 'string' || !text.includes(JSON.stringify(key))) return undefined;
    let cached = this.#row.get(column);
    if (cached === undefined || cached.row !== i) {
      let list: unknown[] = [];
      try {
        const parsed: unknown = JSON.parse(text);
        if (Array.isArray(parsed)) list = parsed;
      } catch {
        list = [];
      }
      cached = { row: i, list };
      this.#row.set(column, cached);
    }
    for (const kv of cached.list) {
      if (typeof kv === 'object' && kv !== null && (kv as { key?: unknown }).key === key)
        return typed((kv as { value?: unknown }).value);
    }
    return undefined;
  }
}

/** Float64 of a value for `sum|min|max|avg` (try_cast; non-finite → null). */
export function attrNumber(v: AttrValue | undefined): number | null {
  if (v === undefined) return null;
  let n: number;
  if (v.t === 'i') n = Number(v.v);
  else if (v.t === 'd') n = v.v;
  else if (v.t === 's') n = v.v.trim() === '' ? NaN : Number(v.v);
  else return null;
  return Number.isFinite(n) ? n : null;
}

/** The group-key string form of a value (`null` for values without one). */
export function attrKeyString(v: AttrValue | undefined): string | null {
  if (v === undefined) return null;
  switch (v.t) {
    case 's':
      return v.v;
    case 'i':
      return v.v.toString();
    case 'd':
      return String(v.v);
    case 'b':
      return v.v ? 'true' : 'false';
    case 'o':
      return null;
  }
}
