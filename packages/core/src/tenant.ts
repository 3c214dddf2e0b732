/**
 * @module tenant
 * Tenant grammar (docs/configuration.md, `tenancy`): 1–128 bytes of ASCII 0x21–0x7E except `:`, `#` and `/`; and the key encoding
 * used in storage paths (percent-encoding of every byte outside `A–Z a–z 0–9 - _ . ~`).
 */
import type { Result } from './result.js';

/** Why a tenant string was refused. */
export type TenantError = 'empty' | 'too_long' | 'invalid_character';

/** Longest tenant in bytes. */
export const MAX_TENANT_BYTES = 128;

/** Validates a tenant string (already trimmed of surrounding ASCII whitespace by the caller). */
export function parseTenant(raw: string): Result<string, TenantError> {
  if (raw.length === 0) return { ok: false, error: 'empty' };
  if (raw.length > MAX_TENANT_BYTES) return { ok: false, error: 'too_long' };
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 0x21 || c > 0x7e || c === 0x3a || c === 0x23 || c === 0x2f)
      return { ok: false, error: 'invalid_character' };
  }
  return { ok: true, value: raw };
}

/** A human message for a tenant error, naming the rule that was broken. */
export function describeTenantError(error: TenantError): string {
  switch (error) {
    case 'empty':
      return 'tenant is empty';
    case 'too_long':
      return `tenant is longer than ${MAX_TENANT_BYTES} bytes`;
    case 'invalid_character':
      return "tenant may contain only visible ASCII (0x21-0x7E) except ':', '#' and '/'";
  }
}

const UNRESERVED = /[A-Za-z0-9\-_.~]/;

/** Percent-encodes a tenant for use as a `tenant_id=<enc>` key segment (uppercase hex). */
export function encodeTenantForKey(tenant: string): string {
  let out = '';
  const bytes = new TextEncoder().encode(tenant);
  for (const b of bytes) {
    const ch = String.fromCharCode(b);
    out += b < 0x80 && UNRESERVED.test(ch) ? ch : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}
