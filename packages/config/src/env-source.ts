/**
 * @module env-source
 * Env-only mode: builds the configuration tree from `SLUICE_*` variables. Every leaf key has exactly one
 * variable, `SLUICE_` + its path joined by `_` in upper case (`SLUICE_QUERIER_LIMITS_MAX_CONCURRENT_QUERIES`).
 * Values are literal strings (no `${env:…}` substitution), typed by the schema; an empty value means unset.
 *
 * A `SLUICE_*` variable that names no key is an issue (a typo must not silently fall back to a default), except
 * the variables in {@link isNonConfigEnvVar}, which belong to tooling rather than to the configuration.
 */
import type { ConfigIssue } from './config-issue.js';
import { ENV_PREFIX, configKeyReference } from './config-keys.js';
import type { EnvSource } from './env-substitution.js';
import { suggestKey } from './key-suggestion.js';

/** Prefixes of `SLUICE_*` variables that are not configuration (test and soak tooling). */
export const NON_CONFIG_ENV_PREFIXES: readonly string[] = ['SLUICE_TEST_'];

/** Exact `SLUICE_*` variable names that are not configuration. */
export const NON_CONFIG_ENV_NAMES: readonly string[] = ['SLUICE_KILL_CYCLES'];

/** True for a `SLUICE_*` variable that tooling uses and configuration ignores (`SLUICE_TEST_*`, `SLUICE_KILL_CYCLES`). */
export function isNonConfigEnvVar(name: string): boolean {
  return NON_CONFIG_ENV_NAMES.includes(name) || NON_CONFIG_ENV_PREFIXES.some((p) => name.startsWith(p));
}

let envToPath: ReadonlyMap<string, readonly string[]> | undefined;

/** Variable name → key path segments, built once from the key reference. */
export function envNameToPath(): ReadonlyMap<string, readonly string[]> {
  if (envToPath === undefined) {
    const m = new Map<string, readonly string[]>();
    for (const k of configKeyReference()) m.set(k.envName, k.path.split('.'));
    envToPath = m;
  }
  return envToPath;
}

/** The `SLUICE_*` configuration variables set (non-empty) in `env`, known ones only. */
export function configEnvVarsSet(env: EnvSource): string[] {
  const known = envNameToPath();
  return Object.keys(env)
    .filter((name) => known.has(name) && env[name] !== undefined && env[name] !== '')
    .sort();
}

function setAt(tree: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = tree;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (typeof next === 'object' && next !== null) node = next as Record<string, unknown>;
    else {
      const created: Record<string, unknown> = {};
      node[segment] = created;
      node = created;
    }
  }
  const last = path[path.length - 1];
  if (last !== undefined) node[last] = value;
}

/** The env-only-mode tree plus an issue for every unknown `SLUICE_*` variable. */
export function readEnvTree(env: EnvSource): {
  readonly tree: Record<string, unknown>;
  readonly issues: ConfigIssue[];
} {
  const known = envNameToPath();
  const tree: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith(ENV_PREFIX)) continue;
    const value = env[name];
    if (value === undefined) continue;
    const path = known.get(name);
    if (path !== undefined) {
      setAt(tree, path, value === '' ? undefined : value);
      continue;
    }
    if (isNonConfigEnvVar(name)) continue;
    const guess = suggestKey(name, known.keys());
    issues.push({
      path: name,
      message: `unknown variable: no configuration key has this name${guess === undefined ? '' : ` (did you mean ${guess}?)`}`,
    });
  }
  return { tree, issues };
}
