/**
 * @module console-assets
 * The console's files, read once at startup into memory and served only by exact URL path (docs/console.md).
 * A fixed table is what makes directory traversal impossible: no request path is ever joined to a directory, so
 * `/../package.json`, `/console/%2e%2e/…` and the like simply are not keys of it.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One servable file. */
export interface ConsoleAsset {
  readonly body: Uint8Array;
  /** `Content-Type` with its charset. */
  readonly contentType: string;
  /** A strong validator of the bytes (`"<sha256 prefix>"`), for `ETag` / `If-None-Match`. */
  readonly etag: string;
}

/** URL path of the console's page. */
export const CONSOLE_PAGE_PATH = '/';
/** URL prefix of every other console file. */
export const CONSOLE_ASSET_PREFIX = '/console/';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The package root (dist/ → ..). */
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));

function asset(path: string): ConsoleAsset {
  const body = readFileSync(path);
  const contentType = CONTENT_TYPES[extname(path)];
  if (contentType === undefined) throw new Error(`console asset of unknown type: ${path}`);
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`;
  return { body, contentType, etag };
}

/** Files of `dir` (not recursive) whose extension is servable, excluding type declarations. */
function servable(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && CONTENT_TYPES[extname(e.name)] !== undefined && !e.name.endsWith('.d.ts'))
    .map((e) => e.name)
    .sort();
}

/**
 * Reads the console: `static/index.html` at `/`, every other `static/` file at `/console/<name>`, and the compiled
 * browser modules (`dist/browser/*.js`) at `/console/js/<name>`. Throws when the package was not built (a
 * deployment bug, reported at startup rather than as a 404 later).
 */
export function loadConsoleAssets(root: string = PACKAGE_ROOT): ReadonlyMap<string, ConsoleAsset> {
  const assets = new Map<string, ConsoleAsset>();
  const staticDir = join(root, 'static');
  for (const name of servable(staticDir)) {
    const path = name === 'index.html' ? CONSOLE_PAGE_PATH : `${CONSOLE_ASSET_PREFIX}${name}`;
    assets.set(path, asset(join(staticDir, name)));
  }
  const browserDir = join(root, 'dist', 'browser');
  for (const name of servable(browserDir))
    assets.set(`${CONSOLE_ASSET_PREFIX}js/${name}`, asset(join(browserDir, name)));
  if (!assets.has(CONSOLE_PAGE_PATH)) throw new Error(`the console has no index.html under ${staticDir}`);
  return assets;
}
