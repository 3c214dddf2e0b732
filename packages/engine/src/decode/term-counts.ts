/**
 * @module term-counts
 * `count by t` over one term that is a u64 or dictionary column, counted straight from the decoded column
 * (docs/design/query-engine.md, "Column-at-a-time evaluation"): no per-row id array and no per-group counter
 * array, where `term-ids.ts` builds both. A u64 value below 2^16 is counted in a direct table the caller keeps
 * for the query (reserved once); larger values in a map. A key's text is made once per distinct value.
 */
import type { DictStringVector } from './string-vector.js';

/** Values below this are counted in the direct table. */
export const DIRECT_VALUES = 1 << 16;
/** Bytes of the direct table (one 32-bit counter per value below {@link DIRECT_VALUES}). */
export const DIRECT_TABLE_BYTES = DIRECT_VALUES * 4;

/** One distinct key of a counted term and its rows. */
export interface KeyCount {
  readonly text: string;
  readonly count: number;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Counts the selected rows (`sel`, or rows `0 … m − 1` for `null`) per value of a u64 column read as unsigned.
 * `table` has {@link DIRECT_VALUES} zeros on entry and is all zeros again on return.
 */
export function countU64(
  vec: BigUint64Array | BigInt64Array,
  sel: Int32Array | null,
  m: number,
  table: Int32Array,
): KeyCount[] {
  const touched: number[] = [];
  const large = new Map<bigint, number>();
  const halves = LITTLE_ENDIAN ? new Uint32Array(vec.buffer, vec.byteOffset, vec.length * 2) : undefined;
  for (let k = 0; k < m; k++) {
    const i = sel === null ? k : (sel[k] as number);
    if (halves !== undefined && halves[2 * i + 1] === 0) {
      const v = halves[2 * i] as number;
      if (v < DIRECT_VALUES) {
        const n = table[v] as number;
        if (n === 0) touched.push(v);
        table[v] = n + 1;
        continue;
      }
    }
    const v = BigInt.asUintN(64, vec[i] as bigint);
    large.set(v, (large.get(v) ?? 0) + 1);
  }
  const out: KeyCount[] = [];
  for (const v of touched) {
    out.push({ text: String(v), count: table[v] as number });
    table[v] = 0;
  }
  for (const [v, n] of large) out.push({ text: v.toString(), count: n });
  return out;
}

/**
 * Counts the selected rows per entry of a dictionary column into `counts` (one zeroed counter per entry); returns
 * the rows whose value is NULL (they belong to no group).
 */
export function countDict(vec: DictStringVector, sel: Int32Array | null, m: number, counts: Int32Array): number {
  const idx = vec.indices;
  let nulls = 0;
  for (let k = 0; k < m; k++) {
    const j = idx[sel === null ? k : (sel[k] as number)] as number;
    if (j < 0) nulls++;
    else counts[j] = (counts[j] as number) + 1;
  }
  return nulls;
}
