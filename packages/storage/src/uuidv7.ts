/**
 * @module uuidv7
 * RFC 9562 UUIDv7: 48-bit Unix-ms timestamp, version 7, 12 bits of sub-ms sequence (`rand_a` used as a counter),
 * variant 10, 62 random bits. Monotonic within a process: a clock that stands still or steps back keeps the
 * last timestamp and increments the counter, so lexicographic order is creation order.
 */
import { randomFillSync } from 'node:crypto';

let lastMs = -1;
let seq = 0;
const rand = new Uint8Array(8);

/** A new UUIDv7 string (lowercase, hyphenated), strictly greater than the previous one from this process. */
export function uuidv7(nowMs: number = Date.now()): string {
  let ms = Math.floor(nowMs);
  if (ms > lastMs) {
    lastMs = ms;
    randomFillSync(rand, 0, 2);
    seq = ((rand[0]! << 8) | rand[1]!) & 0x3ff; // start low in the 12-bit space so it rarely overflows
  } else {
    ms = lastMs;
    seq++;
    if (seq > 0xfff) {
      // Counter exhausted within this millisecond: borrow the next one.
      lastMs = ++ms;
      seq = 0;
    }
  }
  randomFillSync(rand);
  const b = new Uint8Array(16);
  let t = ms;
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (rand[0]! & 0x3f);
  b.set(rand.subarray(1, 8), 9);
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The millisecond timestamp embedded in a UUIDv7 string, or `null` if it is not a UUIDv7. */
export function uuidv7Timestamp(uuid: string): number | null {
  if (!UUIDV7_RE.test(uuid)) return null;
  return parseInt(uuid.slice(0, 8) + uuid.slice(9, 13), 16);
}

/** Lowercase hyphenated UUID with version 7 and variant 10. */
export const UUIDV7_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
