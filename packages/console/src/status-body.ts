/**
 * @module status-body
 * The JSON body of `GET /v1/status` (docs/console.md), in one place for the querier that sends it and the console
 * that reads it. Types only: the browser build imports its declaration, so nothing here may need Node.
 */

/** The body of `GET /v1/status` (snake_case, like every other answer of the query listener). */
export interface StatusBody {
  readonly version: string;
  readonly pool: { readonly reserved_bytes: number; readonly footer_cache_bytes: number; readonly limit_bytes: number };
  readonly queue: { readonly depth: number; readonly in_flight: number };
  readonly tails: { readonly open: number };
  readonly tenancy: { readonly header: string; readonly default_tenant_set: boolean };
  readonly auth: { readonly enabled: boolean };
  readonly features: { readonly mcp: boolean; readonly tail: boolean };
}
