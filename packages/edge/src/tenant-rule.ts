/**
 * @module tenant-rule
 * The one tenant rule of every surface: the tenant comes from the transport (the configured header, or the gRPC
 * metadata key of the same name in lower case), never from the request body or a tool argument. ASCII whitespace
 * around the value is trimmed; the value must satisfy the tenant grammar; a repeated header is refused (one
 * request maps to one tenant, and a proxy that adds the header cannot be outvoted by a client that also sent
 * one). Only an absent header falls back to `tenancy.default_tenant`: a header that is present but empty names
 * no tenant and is refused, so a proxy that failed to map its user to a tenant cannot land in the default one.
 */
import { describeTenantError, parseTenant, type Result } from '@sluice/core';

/** Tenancy settings (`tenancy.*`). */
export interface TenancyRule {
  /** Header name, e.g. `X-Sluice-Tenant` (matched case-insensitively; gRPC: the lowercase metadata key). */
  readonly header: string;
  /** Tenant of a request without the header; `null` makes the header required. */
  readonly defaultTenant: string | null;
}

/** Why the transport named no usable tenant. */
export interface TenantRefusal {
  readonly kind: 'missing_tenant' | 'invalid_tenant';
  readonly message: string;
}

const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** Resolves the tenant from the header values present on a request (`[]` when absent). */
export function resolveTenant(values: readonly string[], rule: TenancyRule): Result<string, TenantRefusal> {
  if (values.length > 1) {
    return { ok: false, error: { kind: 'invalid_tenant', message: `the ${rule.header} header must appear once` } };
  }
  const first = values[0];
  if (first === undefined) {
    if (rule.defaultTenant !== null) return { ok: true, value: rule.defaultTenant };
    return { ok: false, error: { kind: 'missing_tenant', message: `missing tenant: set the ${rule.header} header` } };
  }
  const trimmed = first.replace(EDGE_WHITESPACE, '');
  if (trimmed === '') {
    return {
      ok: false,
      error: { kind: 'missing_tenant', message: `missing tenant: the ${rule.header} header is empty` },
    };
  }
  const parsed = parseTenant(trimmed);
  if (!parsed.ok) {
    return {
      ok: false,
      error: { kind: 'invalid_tenant', message: `invalid ${rule.header} header: ${describeTenantError(parsed.error)}` },
    };
  }
  return parsed;
}
