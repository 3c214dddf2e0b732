/**
 * @module access-gate
 * The gate every request passes before anything else looks at it, the same on every surface (OTLP/HTTP,
 * OTLP/gRPC, `/v1/query`, `/mcp`, `/metrics`; later the console and the Loki API). Order, which sets the status
 * a client sees when several things are wrong (docs/security.md):
 *
 * 1. authentication (when `auth.enabled`): a bearer token whose grant lists this surface, else `unauthenticated`
 *    (401, one undifferentiated message; missing, malformed, unknown and wrong-surface tokens look alike);
 * 2. the tenant from the transport ({@link resolveTenant}), else `missing_tenant` / `invalid_tenant` (400);
 * 3. the tenant in the token's set, else `tenant_denied` (403).
 *
 * With auth disabled, step 1 and 3 admit everything and the gate is the tenant rule alone. A surface maps the
 * refusal kinds to its own statuses with one exhaustive switch.
 */
import type { Result } from '@sluice/core';
import { bearerToken, findGrant } from './bearer.js';
import type { Surface, TenantSurface } from './surface.js';
import { resolveTenant, type TenancyRule } from './tenant-rule.js';
import type { TokenGrant, TokenTable } from './token-table.js';

/** Why the gate refused a request. `message` is safe to return to the client. */
export type AccessRefusal =
  | { readonly kind: 'unauthenticated'; readonly message: string }
  | { readonly kind: 'missing_tenant'; readonly message: string }
  | { readonly kind: 'invalid_tenant'; readonly message: string }
  | { readonly kind: 'tenant_denied'; readonly message: string };

/** The kinds of {@link AccessRefusal}. */
export type AccessRefusalKind = AccessRefusal['kind'];

/** An admitted request. */
export interface AccessGrant {
  /** The tenant every read and write of this request is scoped to. */
  readonly tenant: string;
  /** Name of the token's grant, or `null` with auth disabled (for logs; never the token). */
  readonly principal: string | null;
}

/** What the gate reads from a request: the values of each header present (`[]` when absent). */
export interface RequestCredentials {
  /** `Authorization` values (gRPC: the `authorization` metadata key). */
  readonly authorization: readonly string[];
  /** Tenant header values (gRPC: the lowercase metadata key). */
  readonly tenant: readonly string[];
}

/** The gate. */
export interface AccessGate {
  /** True when `auth.enabled`: every surface but the probes needs a token. */
  readonly authEnabled: boolean;
  /** The tenant header's configured name (`tenancy.header`). */
  readonly tenantHeader: string;
  /** Value of the `WWW-Authenticate` header on every 401 (RFC 6750 §3). */
  readonly challenge: string;
  /** Admits a request to a tenant-scoped surface: authentication, then tenant, then the token's tenant set. */
  admit(surface: TenantSurface, request: RequestCredentials): Result<AccessGrant, AccessRefusal>;
  /** Admits a request to the `admin` surface (`/metrics`), which names no tenant. */
  admitAdmin(authorization: readonly string[]): Result<{ readonly principal: string | null }, AccessRefusal>;
  /**
   * Admits a request that names no tenant to a tenant-scoped surface's tenant-independent figures (the querier's
   * `/v1/status`): with auth enabled, a token granted `surface` for any tenant; no tenant header is read.
   */
  admitUntenanted(
    surface: TenantSurface,
    authorization: readonly string[],
  ): Result<{ readonly principal: string | null }, AccessRefusal>;
  /**
   * Checks a tenant named a second time inside an admitted request (an MCP tool's compatibility `tenant`
   * argument): it must equal the admitted tenant, else `tenant_denied`. A request never chooses another tenant.
   */
  confirmTenant(grant: AccessGrant, named: string): Result<void, AccessRefusal>;
}

/** Options for {@link createAccessGate}. */
export interface AccessGateOptions {
  /** The accepted tokens; `null` = auth disabled (`auth.enabled: false`). */
  readonly tokens: TokenTable | null;
  readonly tenancy: TenancyRule;
  /** `auth.protect_metrics`: with auth enabled, `/metrics` needs a token with the `admin` surface. */
  readonly protectMetrics: boolean;
}

const UNAUTHENTICATED: AccessRefusal = {
  kind: 'unauthenticated',
  message: 'a valid bearer token for this endpoint is required (Authorization: Bearer <token>)',
};

/** Creates the gate. */
export function createAccessGate(options: AccessGateOptions): AccessGate {
  const { tokens, tenancy } = options;

  const authenticate = (surface: Surface, authorization: readonly string[]): TokenGrant | null => {
    if (tokens === null) return null;
    const token = bearerToken(authorization);
    if (token === null) return null;
    const grant = findGrant(tokens, token);
    return grant !== null && grant.surfaces.has(surface) ? grant : null;
  };

  return {
    authEnabled: tokens !== null,
    tenantHeader: tenancy.header,
    challenge: 'Bearer realm="sluice"',
    admit(surface, request) {
      const grant = authenticate(surface, request.authorization);
      if (tokens !== null && grant === null) return { ok: false, error: UNAUTHENTICATED };
      const tenant = resolveTenant(request.tenant, tenancy);
      if (!tenant.ok) return tenant;
      if (grant !== null && grant.tenants !== 'all' && !grant.tenants.has(tenant.value)) {
        return {
          ok: false,
          error: {
            kind: 'tenant_denied',
            message: `this token may not use tenant ${JSON.stringify(tenant.value)}`,
          },
        };
      }
      return { ok: true, value: { tenant: tenant.value, principal: grant?.name ?? null } };
    },
    admitAdmin(authorization) {
      if (tokens === null || !options.protectMetrics) return { ok: true, value: { principal: null } };
      const grant = authenticate('admin', authorization);
      return grant === null ? { ok: false, error: UNAUTHENTICATED } : { ok: true, value: { principal: grant.name } };
    },
    admitUntenanted(surface, authorization) {
      if (tokens === null) return { ok: true, value: { principal: null } };
      const grant = authenticate(surface, authorization);
      return grant === null ? { ok: false, error: UNAUTHENTICATED } : { ok: true, value: { principal: grant.name } };
    },
    confirmTenant(grant, named) {
      if (named === grant.tenant) return { ok: true, value: undefined };
      return {
        ok: false,
        error: {
          kind: 'tenant_denied',
          message: `tenant ${JSON.stringify(named)} is not this request's tenant (${JSON.stringify(grant.tenant)}, from the ${tenancy.header} header or tenancy.default_tenant); the tenant argument cannot choose another tenant: omit it`,
        },
      };
    },
  };
}
