/**
 * @module bearer
 * Reads an `Authorization: Bearer <token>` credential (RFC 6750) and finds its grant. The presented token is
 * hashed (SHA-256) and compared with every stored hash in constant time, without stopping at a match, so neither
 * the comparison nor the position of the matching entry shows in the response time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TokenGrant, TokenTable } from './token-table.js';

// RFC 6750 §2.1: "Bearer" 1*SP b64token; the scheme is case-insensitive (RFC 9110 §11.1).
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of an `Authorization` header, or `null` when absent, repeated or not a bearer credential. */
export function bearerToken(values: readonly string[]): string | null {
  if (values.length !== 1) return null;
  const m = BEARER.exec(values[0]!);
  return m === null ? null : m[1]!;
}

/** SHA-256 of a token's UTF-8 bytes: what a token file stores (`printf %s "$TOKEN" | sha256sum`). */
export function hashToken(token: string): Uint8Array {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The grant whose hash matches `token`, or `null`. Every stored hash is compared, in constant time each. */
export function findGrant(table: TokenTable, token: string): TokenGrant | null {
  const presented = hashToken(token);
  let found: TokenGrant | null = null;
  for (const grant of table.grants) {
    // Both sides are 32 bytes, so timingSafeEqual never throws; the loop always runs to the end.
    const equal = timingSafeEqual(presented, grant.sha256);
    if (equal && found === null) found = grant;
  }
  return found;
}
