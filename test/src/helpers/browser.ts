/**
 * @module browser
 * The headless Chromium the console's tests drive: Debian's `chromium` (or `SLUICE_CHROMIUM`) through
 * playwright-core, never a downloaded browser. Missing it is a loud skip on a workstation and a failure under
 * `CI=true` (`.ci/run` installs it).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Where the browser is looked for, first hit wins. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The browser's path, or `null` when there is none. */
export function chromiumPath(): string | null {
  const configured = process.env['SLUICE_CHROMIUM'];
  if (configured !== undefined && configured !== '') return existsSync(configured) ? configured : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/**
 * Why the browser tests cannot run here, or `null` when they can; throws under `CI=true`, where a missing browser
 * is a broken CI image, not a reason to skip.
 */
export function browserSkipReason(): string | null {
  if (chromiumPath() !== null) return null;
  const why =
    'NO CHROMIUM: the console browser test did not run. Install it (apt-get install -y chromium) or set SLUICE_CHROMIUM.';
  if (process.env['CI'] === 'true') throw new Error(`${why} CI=true requires it.`);
  console.error(`\n!!! ${why}\n`);
  return why;
}

/** Starts headless Chromium (no sandbox: CI containers run as root). */
export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (executablePath === null) throw new Error('chromium not found');
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}
