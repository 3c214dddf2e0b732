/**
 * @module console-routes
 * Serves the web console (`@sluice/console`) at `/` and `/console/*` on the query listener when
 * `querier.ui.enabled` (docs/console.md). Files come from a table loaded at startup and are matched by exact
 * path only, so nothing outside it can be reached. The page needs no token (it holds no data); every API call it
 * makes goes through the same gate as any other client's.
 */
import type { Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { CONSOLE_ASSET_PREFIX, CONSOLE_PAGE_PATH, type ConsoleAsset } from '@sluice/console';

/**
 * The page may load only its own scripts and styles, talk only to its own origin, and not be framed: a log line
 * rendered by the console can never run as script, even if a rendering bug let markup through.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Response headers of a console file (the `ETag` lets a browser revalidate cheaply; `no-cache` makes it). */
function assetHeaders(asset: ConsoleAsset): Record<string, string> {
  return {
    'content-type': asset.contentType,
    'cache-control': 'no-cache',
    etag: asset.etag,
    'x-content-type-options': 'nosniff',
    'content-security-policy': CONSOLE_CSP,
    'referrer-policy': 'no-referrer',
  };
}

/** True when an `If-None-Match` value lists `etag` (or `*`). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/** Registers `GET`/`HEAD /` and `/console/*` on `app`, answering only paths of `assets`; the rest is 404. */
export function registerConsoleRoutes<E extends { Bindings: HttpBindings }>(
  app: Hono<E>,
  assets: ReadonlyMap<string, ConsoleAsset>,
): void {
  const answer = (path: string, method: string, ifNoneMatch: string | undefined): Response => {
    const asset = assets.get(path);
    if (asset === undefined)
      return new Response('not found\n', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });
    const headers = assetHeaders(asset);
    if (matches(ifNoneMatch, asset.etag)) return new Response(null, { status: 304, headers });
    headers['content-length'] = String(asset.body.byteLength);
    return new Response(method === 'HEAD' ? null : (asset.body as Uint8Array<ArrayBuffer>), { status: 200, headers });
  };
  app.on(['GET', 'HEAD'], [CONSOLE_PAGE_PATH, `${CONSOLE_ASSET_PREFIX}*`], (c) =>
    answer(c.req.path, c.req.method, c.req.header('if-none-match')),
  );
}
