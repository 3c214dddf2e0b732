/**
 * @module status-route
 * `GET /v1/status`: the querier's live figures as one small JSON document, for the console's status strip and for
 * anyone who wants them without parsing Prometheus text (docs/console.md). The numbers are the ones the gauges
 * export (`sluice.query.pool.reserved`, `.footer_cache`, `.limit`, `sluice.query.queue.depth`,
 * `sluice.query.in_flight`, `sluice.query.tails.open`), read at the moment of the request.
 *
 * Tenant-independent and secret-free: no tenant names, no tokens, no addresses. With auth enabled it needs a
 * token granted the `query` surface (for any tenant); no tenant header is read.
 */
import type { Context, Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { StatusBody } from '@sluice/console';
import type { AccessGate, AccessRefusal } from '@sluice/edge';

/** The figures of {@link registerStatusRoute}, read at each request. */
export interface QuerierFigures {
  /** Bytes reserved on the query pool now (queries, footer caches, a compaction loan). */
  readonly poolReservedBytes: number;
  /** Of those, bytes held by the workers' footer caches. */
  readonly poolFooterCacheBytes: number;
  /** The pool's size. */
  readonly poolLimitBytes: number;
  /** Queries waiting for a permit (both lanes). */
  readonly queueDepth: number;
  /** Permits held (queries executing or sending their answer). */
  readonly inFlight: number;
  /** Live tails open. */
  readonly tailsOpen: number;
}

/** Options for {@link registerStatusRoute}. */
export interface StatusRouteOptions {
  readonly access: AccessGate;
  readonly figures: () => QuerierFigures;
  readonly version: string;
  /** Whether `/mcp` and `/v1/tail` answer, so a client knows which views it can offer. */
  readonly features: { readonly mcp: boolean; readonly tail: boolean };
  /** Whether `tenancy.default_tenant` is set (a request may omit the tenant header); its name is not given. */
  readonly defaultTenantSet: boolean;
}

/** Builds the status body from the figures now. */
export function statusBody(options: StatusRouteOptions): StatusBody {
  const f = options.figures();
  return {
    version: options.version,
    pool: {
      reserved_bytes: f.poolReservedBytes,
      footer_cache_bytes: f.poolFooterCacheBytes,
      limit_bytes: f.poolLimitBytes,
    },
    queue: { depth: f.queueDepth, in_flight: f.inFlight },
    tails: { open: f.tailsOpen },
    tenancy: { header: options.access.tenantHeader, default_tenant_set: options.defaultTenantSet },
    auth: { enabled: options.access.authEnabled },
    features: { mcp: options.features.mcp, tail: options.features.tail },
  };
}

/**
 * Registers `GET`/`HEAD /v1/status` on `app`. `refuse` answers a refused token the way the rest of the listener
 * does (401 with the Bearer challenge).
 */
export function registerStatusRoute<E extends { Bindings: HttpBindings }>(
  app: Hono<E>,
  options: StatusRouteOptions,
  refuse: (c: Context<E>, refusal: AccessRefusal) => Response,
): void {
  app.on(['GET', 'HEAD'], '/v1/status', (c) => {
    const incoming = c.env?.incoming;
    const authorization =
      incoming !== undefined
        ? (incoming.headersDistinct['authorization'] ?? [])
        : c.req.header('authorization') === undefined
          ? []
          : [c.req.header('authorization')!];
    const admitted = options.access.admitUntenanted('query', authorization);
    if (!admitted.ok) return refuse(c, admitted.error);
    const headers = { 'content-type': 'application/json', 'cache-control': 'no-store' };
    if (c.req.method === 'HEAD') return c.body(null, 200, headers);
    return c.body(JSON.stringify(statusBody(options)), 200, headers);
  });
}
