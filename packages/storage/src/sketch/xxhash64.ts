/**
 * @module sketch/xxhash64
 * XXH64 with seed 0 on 32-bit halves (no BigInt on the hot path): the hash of the trace and span id filters, as
 * of Parquet's own bloom filters (docs/design/storage-format.md, "Row-group filters"). A BigInt
 * version costs microseconds per value; this one costs tens of nanoseconds, so a 65,536-row group's trace and
 * span ids hash in a few milliseconds.
 */

// The five XXH64 primes as [high, low] 32-bit halves.
const P1H = 0x9e3779b1;
const P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d;
const P2L = 0x27d4eb4f;
const P3H = 0x165667b1;
const P3L = 0x9e3779f9;
const P4H = 0x85ebca77;
const P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f;
const P5L = 0x165667c5;

/** A 64-bit hash as two unsigned 32-bit halves. */
export interface Hash64 {
  hi: number;
  lo: number;
}

// The accumulator and an operand live in module scope: every step below works on them in place.
let hH = 0;
let hL = 0;

/** (hH, hL) = (hH, hL) × (bh, bl) mod 2^64. */
function mul(bh: number, bl: number): void {
  const a0 = hL & 0xffff;
  const a1 = hL >>> 16;
  const b0 = bl & 0xffff;
  const b1 = bl >>> 16;
  const p00 = a0 * b0;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  const lo = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  const hi = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(hH, bl) + Math.imul(hL, bh);
  hH = hi >>> 0;
  hL = lo;
}

/** (hH, hL) += (bh, bl) mod 2^64. */
function add(bh: number, bl: number): void {
  const lo = (hL + bl) >>> 0;
  hH = (hH + bh + (lo < hL ? 1 : 0)) >>> 0;
  hL = lo;
}

/** Rotates (hH, hL) left by r (1..31). */
function rotl(r: number): void {
  const hi = ((hH << r) | (hL >>> (32 - r))) >>> 0;
  hL = ((hL << r) | (hH >>> (32 - r))) >>> 0;
  hH = hi;
}

/** XXH64's `round(0, lane)`: lane × P2, rotl 31, × P1; leaves the result in (hH, hL). */
function roundZero(laneH: number, laneL: number): void {
  hH = laneH;
  hL = laneL;
  mul(P2H, P2L);
  rotl(31);
  mul(P1H, P1L);
}

function readU32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/**
 * XXH64 (seed 0) of `bytes[start, end)`, written into `out`. Inputs of 32 bytes or more take the four-lane path;
 * trace ids (16) and span ids (8) take the short one.
 */
export function xxhash64Into(bytes: Uint8Array, start: number, end: number, out: Hash64): Hash64 {
  const len = end - start;
  let at = start;
  if (len >= 32) {
    // Four lanes: v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1.
    const v = [0, 0, 0, 0, 0, 0, 0, 0];
    hH = P1H;
    hL = P1L;
    add(P2H, P2L);
    v[0] = hH;
    v[1] = hL;
    v[2] = P2H;
    v[3] = P2L;
    v[4] = 0;
    v[5] = 0;
    hH = ~P1H >>> 0;
    hL = ~P1L >>> 0;
    add(0, 1);
    v[6] = hH;
    v[7] = hL;
    while (at + 32 <= end) {
      for (let k = 0; k < 4; k++) {
        // acc = rotl(acc + lane × P2, 31) × P1
        const laneL = readU32(bytes, at);
        const laneH = readU32(bytes, at + 4);
        at += 8;
        hH = laneH;
        hL = laneL;
        mul(P2H, P2L);
        add(v[2 * k]!, v[2 * k + 1]!);
        rotl(31);
        mul(P1H, P1L);
        v[2 * k] = hH;
        v[2 * k + 1] = hL;
      }
    }
    // h = rotl(v1,1) + rotl(v2,7) + rotl(v3,12) + rotl(v4,18)
    let sH = 0;
    let sL = 0;
    const rots = [1, 7, 12, 18];
    for (let k = 0; k < 4; k++) {
      hH = v[2 * k]!;
      hL = v[2 * k + 1]!;
      rotl(rots[k]!);
      const rH = hH;
      const rL = hL;
      hH = sH;
      hL = sL;
      add(rH, rL);
      sH = hH;
      sL = hL;
    }
    for (let k = 0; k < 4; k++) {
      // mergeRound: h ^= round(0, v); h = h × P1 + P4
      roundZero(v[2 * k]!, v[2 * k + 1]!);
      hH = (sH ^ hH) >>> 0;
      hL = (sL ^ hL) >>> 0;
      mul(P1H, P1L);
      add(P4H, P4L);
      sH = hH;
      sL = hL;
    }
    hH = sH;
    hL = sL;
  } else {
    hH = P5H;
    hL = P5L;
  }
  add(0, len);
  while (at + 8 <= end) {
    const accH = hH;
    const accL = hL;
    roundZero(readU32(bytes, at + 4), readU32(bytes, at));
    hH = (accH ^ hH) >>> 0;
    hL = (accL ^ hL) >>> 0;
    rotl(27);
    mul(P1H, P1L);
    add(P4H, P4L);
    at += 8;
  }
  if (at + 4 <= end) {
    const accH = hH;
    const accL = hL;
    hH = 0;
    hL = readU32(bytes, at);
    mul(P1H, P1L);
    hH = (accH ^ hH) >>> 0;
    hL = (accL ^ hL) >>> 0;
    rotl(23);
    mul(P2H, P2L);
    add(P3H, P3L);
    at += 4;
  }
  while (at < end) {
    const accH = hH;
    const accL = hL;
    hH = 0;
    hL = bytes[at]!;
    mul(P5H, P5L);
    hH = (accH ^ hH) >>> 0;
    hL = (accL ^ hL) >>> 0;
    rotl(11);
    mul(P1H, P1L);
    at += 1;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hL = (hL ^ (hH >>> 1)) >>> 0;
  mul(P2H, P2L);
  const sh = hH;
  hL = (hL ^ ((hL >>> 29) | (sh << 3))) >>> 0;
  hH = (sh ^ (sh >>> 29)) >>> 0;
  mul(P3H, P3L);
  hL = (hL ^ hH) >>> 0;
  out.hi = hH;
  out.lo = hL;
  return out;
}
