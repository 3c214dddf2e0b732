/**
 * @module @sluice/console
 * The web console's files for the querier to serve (docs/console.md).
 */
export { CONSOLE_ASSET_PREFIX, CONSOLE_PAGE_PATH, loadConsoleAssets, type ConsoleAsset } from './console-assets.js';
export type { StatusBody } from './status-body.js';
