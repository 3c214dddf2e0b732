/**
 * @module tenant
 * The query surfaces' tenant rule: the configured header (first occurrence, ASCII whitespace trimmed) or the
 * default tenant; the same grammar as ingest.
 */
import { describeTenantError, parseTenant, type Result } from '@sluice/core';
import type { QueryError } from './query-error.js';

/** Resolves a tenant from a header value (`null` when absent) or the default tenant. */
export function queryTenant(
  header: string | null,
  headerName: string,
  defaultTenant: string | null,
): Result<string, QueryError> {
  const trimmed = header?.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '') ?? '';
  if (trimmed === '') {
    if (defaultTenant !== null) return { ok: true, value: defaultTenant };
    return { ok: false, error: { kind: 'missing_tenant', message: `missing tenant: set the ${headerName} header` } };
  }
  const parsed = parseTenant(trimmed);
  if (!parsed.ok)
    return {
      ok: false,
      error: { kind: 'invalid_tenant', message: `invalid ${headerName} header: ${describeTenantError(parsed.error)}` },
    };
  return parsed;
}

/** Validates an explicit tenant argument (MCP tools). */
export function explicitTenant(value: string): Result<string, QueryError> {
  const parsed = parseTenant(value);
  if (!parsed.ok)
    return {
      ok: false,
      error: { kind: 'invalid_tenant', message: `invalid tenant: ${describeTenantError(parsed.error)}` },
    };
  return parsed;
}
