/**
 * @module utf8
 * UTF-8 byte arithmetic on JS strings without allocating buffers on the hot path.
 */

/** UTF-8 byte length of `s` (lone surrogates count 3 bytes, as `TextEncoder` replaces them with U+FFFD). */
export function utf8ByteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** True when `s` is longer than `limit` UTF-8 bytes; O(1) for strings that are obviously short or long. */
export function exceedsUtf8Bytes(s: string, limit: number): boolean {
  if (s.length * 3 <= limit) return false;
  if (s.length > limit) return true;
  return utf8ByteLength(s) > limit;
}

/** The longest prefix of `s` whose UTF-8 encoding fits in `maxBytes` bytes, never splitting a code point. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  let n = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let w = 3;
    let units = 1;
    if (c < 0x80) w = 1;
    else if (c < 0x800) w = 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        w = 4;
        units = 2;
      }
    }
    if (n + w > maxBytes) break;
    n += w;
    i += units;
  }
  return s.slice(0, i);
}
