/**
 * @module time-window
 * The per-row window test `fromNs <= t < toNs` on a time column (u64 nanoseconds, NULL never inside). On a
 * decoded BigInt64Array it compares the 32-bit halves as unsigned numbers, so no BigInt is made per row.
 */
import type { TimeWindow } from '@sluice/query';
import { cellReader, type ColumnData } from './string-vector.js';

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** `true` when row `i`'s time lies in `[window.fromNs, window.toNs)`. */
export function windowTest(column: ColumnData | undefined, window: TimeWindow): (i: number) => boolean {
  const { fromNs, toNs } = window;
  if (
    LITTLE_ENDIAN &&
    (column instanceof BigInt64Array || column instanceof BigUint64Array) &&
    fromNs >= 0n &&
    fromNs <= 0xffffffffffffffffn &&
    toNs >= 0n
  ) {
    const h = new Uint32Array(column.buffer, column.byteOffset, column.length * 2);
    const fh = Number(fromNs >> 32n);
    const fl = Number(fromNs & 0xffffffffn);
    // toNs may be 2^64 (an open end): then every value is below it.
    const open = toNs > 0xffffffffffffffffn;
    const th = Number((toNs >> 32n) & 0xffffffffn);
    const tl = Number(toNs & 0xffffffffn);
    return (i) => {
      const vh = h[2 * i + 1] as number;
      const vl = h[2 * i] as number;
      if (vh < fh || (vh === fh && vl < fl)) return false;
      return open || vh < th || (vh === th && vl < tl);
    };
  }
  const at = cellReader(column);
  return (i) => {
    const e = at(i);
    if (typeof e !== 'bigint') return false;
    const ns = BigInt.asUintN(64, e);
    return ns >= fromNs && ns < toNs;
  };
}
