/**
 * @module term-ids
 * Group terms as small per-row-group ids (docs/design/query-engine.md, "Column-at-a-time evaluation"): a
 * dictionary column's ids are its indices, a u64 column's come from its 32-bit halves (a direct table for values
 * below 2^16), anything else from the term's string key interned once per distinct value. Counting then works on
 * ids, and a key's text is built once per distinct id, not once per row.
 */
import type { DictStringVector } from './string-vector.js';

/** Ids of one term for the selected rows, in selection order (`-1` for a NULL key), and each id's key text. */
export interface TermIds {
  readonly ids: Int32Array;
  /** Number of distinct ids (ids are `0 … cardinality − 1`). */
  readonly cardinality: number;
  text(id: number): string;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const SMALL = 1 << 16;

/** Row `k` of a selection (`null` selects rows `0 … m − 1`). */
function rowOf(sel: Int32Array | null, k: number): number {
  return sel === null ? k : (sel[k] as number);
}

/** Ids of a dictionary column: its indices; the key text is the entry. */
export function dictIds(vec: DictStringVector, sel: Int32Array | null, m: number): TermIds {
  const ids = new Int32Array(m);
  const idx = vec.indices;
  for (let k = 0; k < m; k++) ids[k] = idx[rowOf(sel, k)] as number;
  return { ids, cardinality: vec.dict.length, text: (id) => vec.dict[id] as string };
}

/** Ids of a u64 column read as unsigned; the key text is the decimal value. */
export function u64Ids(vec: BigUint64Array | BigInt64Array, sel: Int32Array | null, m: number): TermIds {
  const ids = new Int32Array(m);
  const values: bigint[] = [];
  const small = new Int32Array(SMALL).fill(-1);
  const large = new Map<bigint, number>();
  const halves = LITTLE_ENDIAN ? new Uint32Array(vec.buffer, vec.byteOffset, vec.length * 2) : undefined;
  for (let k = 0; k < m; k++) {
    const i = rowOf(sel, k);
    if (halves !== undefined && halves[2 * i + 1] === 0 && (halves[2 * i] as number) < SMALL) {
      const v = halves[2 * i] as number;
      let id = small[v] as number;
      if (id < 0) {
        id = values.length;
        values.push(BigInt(v));
        small[v] = id;
      }
      ids[k] = id;
      continue;
    }
    const v = BigInt.asUintN(64, vec[i] as bigint);
    let id = large.get(v);
    if (id === undefined) {
      id = values.length;
      values.push(v);
      large.set(v, id);
    }
    ids[k] = id;
  }
  return { ids, cardinality: values.length, text: (id) => (values[id] as bigint).toString() };
}

/** Ids from any term's string key (`null` for a NULL key), interned with a one-entry cache for runs. */
export function keyIds(key: (i: number) => string | null, sel: Int32Array | null, m: number): TermIds {
  const ids = new Int32Array(m);
  const texts: string[] = [];
  const byText = new Map<string, number>();
  let lastText: string | null = null;
  let lastId = -1;
  for (let k = 0; k < m; k++) {
    const t = key(rowOf(sel, k));
    if (t === null) {
      ids[k] = -1;
      continue;
    }
    if (t !== lastText) {
      let id = byText.get(t);
      if (id === undefined) {
        id = texts.length;
        texts.push(t);
        byText.set(t, id);
      }
      lastText = t;
      lastId = id;
    }
    ids[k] = lastId;
  }
  return { ids, cardinality: texts.length, text: (id) => texts[id] as string };
}

/**
 * Ids of `bucket(w)` over a time column without NULLs (the effective time as decoded into a typed array), read as
 * unsigned. Rows are mostly time-ordered, so each row is first compared with the current bucket's bounds as two
 * 32-bit halves; only a row outside it makes BigInts (its start, and the key text via `format`, once per bucket
 * met). Reading a 64-bit element per row, as the generic path does, allocates a BigInt for every row.
 */
export function bucketIds(
  vec: BigUint64Array | BigInt64Array,
  widthNs: bigint,
  sel: Int32Array | null,
  m: number,
  format: (startNs: bigint) => string,
): TermIds {
  const ids = new Int32Array(m);
  const texts: string[] = [];
  const byStart = new Map<bigint, number>();
  const halves = new Uint32Array(vec.buffer, vec.byteOffset, vec.length * 2);
  const word = (x: bigint, high: boolean): number => Number(high ? x >> 32n : x & 0xffffffffn);
  // The current bucket [start, end) as unsigned halves; end's high half may reach 2^32 (a bucket at the top of u64).
  let startHi = 1;
  let startLo = 0;
  let endHi = 0;
  let endLo = 0;
  let id = -1;
  for (let k = 0; k < m; k++) {
    const i = rowOf(sel, k);
    const lo = LITTLE_ENDIAN ? (halves[2 * i] as number) : (halves[2 * i + 1] as number);
    const hi = LITTLE_ENDIAN ? (halves[2 * i + 1] as number) : (halves[2 * i] as number);
    const atOrAfterStart = hi > startHi || (hi === startHi && lo >= startLo);
    const beforeEnd = hi < endHi || (hi === endHi && lo < endLo);
    if (!(atOrAfterStart && beforeEnd)) {
      const ns = BigInt.asUintN(64, vec[i] as bigint);
      const start = (ns / widthNs) * widthNs;
      const end = start + widthNs;
      startHi = word(start, true);
      startLo = word(start, false);
      endHi = word(end, true);
      endLo = word(end, false);
      let known = byStart.get(start);
      if (known === undefined) {
        known = texts.length;
        texts.push(format(start));
        byStart.set(start, known);
      }
      id = known;
    }
    ids[k] = id;
  }
  return { ids, cardinality: texts.length, text: (n) => texts[n] as string };
}
