/**
 * @module surface
 * The surfaces a bearer token can be granted. Each listener endpoint belongs to exactly one surface, and a token
 * authenticates a request only on the surfaces it lists (see docs/security.md).
 */

/** A group of endpoints a token may call. */
export type Surface =
  /** OTLP/HTTP `POST /v1/logs` and OTLP/gRPC `LogsService/Export`. */
  | 'ingest'
  /** `POST /v1/query`. */
  | 'query'
  /** The MCP endpoint `/mcp`. */
  | 'mcp'
  /** Operator endpoints without a tenant: `/metrics` on every HTTP listener. */
  | 'admin';

/** Every surface, in documentation order. */
export const SURFACES: readonly Surface[] = ['ingest', 'query', 'mcp', 'admin'];

/** Surfaces whose requests name a tenant (every surface but `admin`). */
export type TenantSurface = Exclude<Surface, 'admin'>;

/** Narrows a string to a {@link Surface}. */
export function isSurface(value: string): value is Surface {
  return (SURFACES as readonly string[]).includes(value);
}
