/**
 * @module tenant-resolver
 * Resolves the tenant of an export from the configured header (HTTP) or metadata key (gRPC, lowercase),
 * falling back to `tenancy.default_tenant`. A repeated header is refused: one export maps to one tenant.
 */
import { describeTenantError, parseTenant, type Result } from '@sluice/core';

/** Tenancy settings the resolver needs. */
export interface TenancyOptions {
  /** Header name, e.g. `X-Sluice-Tenant` (matched case-insensitively). */
  readonly header: string;
  /** Used when the header is absent; `null` makes the header required. */
  readonly defaultTenant: string | null;
}

/**
 * Resolves a tenant from the header values present on a request (`[]` when absent).
 * Returns a user-facing message on failure.
 */
export function resolveTenant(values: readonly string[], options: TenancyOptions): Result<string, string> {
  if (values.length === 0) {
    if (options.defaultTenant !== null) return { ok: true, value: options.defaultTenant };
    return { ok: false, error: `missing tenant: set the ${options.header} header` };
  }
  if (values.length > 1) return { ok: false, error: `the ${options.header} header must appear once` };
  const trimmed = values[0]!.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  const parsed = parseTenant(trimmed);
  if (!parsed.ok) return { ok: false, error: `invalid ${options.header} header: ${describeTenantError(parsed.error)}` };
  return parsed;
}
