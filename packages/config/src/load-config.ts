/**
 * @module load-config
 * {@link loadConfig}: the one configuration function that does I/O. It reads the `--config` file, if any, and
 * hands its text to `parseConfig`; a file that cannot be read is an issue like any other.
 */
import { readFile } from 'node:fs/promises';
import type { Result } from '@sluice/core';
import type { ConfigIssue } from './config-issue.js';
import type { EnvSource } from './env-substitution.js';
import { parseConfig } from './parse-config.js';
import type { SluiceConfig } from './sluice-config.js';

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** Path of the YAML config file (`--config`); omit for env-only mode. */
  readonly configPath?: string;
  /** The environment, normally `process.env`. */
  readonly env: EnvSource;
}

function describeReadError(e: unknown): string {
  const code = typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory, not a file';
    default:
      return code === '' ? 'cannot be read' : `cannot be read (${code})`;
  }
}

/**
 * Reads the config file (if `configPath` is given) and parses it; without `configPath`, env-only mode.
 * @returns the same result as `parseConfig`; a read failure is one issue with path `--config`.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<Result<SluiceConfig, ConfigIssue[]>> {
  if (options.configPath === undefined) return parseConfig({ env: options.env });
  if (options.configPath === '') {
    return { ok: false, error: [{ path: '--config', message: 'needs the path of a YAML config file' }] };
  }
  let fileText: string;
  try {
    fileText = await readFile(options.configPath, 'utf8');
  } catch (e) {
    return {
      ok: false,
      error: [{ path: '--config', message: `${JSON.stringify(options.configPath)}: ${describeReadError(e)}` }],
    };
  }
  return parseConfig({ fileText, env: options.env });
}
