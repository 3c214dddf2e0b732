/**
 * @module config-keys
 * The key reference, derived from the schema: every leaf key's dotted snake_case path, its env-only-mode
 * variable (`SLUICE_` + the path's segments joined by `_`, upper case), its default and its constraint.
 * Documentation tests check the configuration reference against this list.
 */
import { configSchema } from './config-schema.js';
import { keyTreeOf } from './schema-builders.js';
import type { KeyNode } from './schema-builders.js';

/** Prefix of every env-only-mode variable. */
export const ENV_PREFIX = 'SLUICE_';

/** One leaf key of the configuration. */
export interface ConfigKeyInfo {
  /** Dotted snake_case path, e.g. `querier.limits.max_concurrent_queries`. */
  readonly path: string;
  /** Env-only-mode variable, e.g. `SLUICE_QUERIER_LIMITS_MAX_CONCURRENT_QUERIES`. */
  readonly envName: string;
  /** Default value; `null` means unset (the key's description says what unset means). */
  readonly defaultValue: string | number | boolean | null;
  /** What the value must be, e.g. `integer >= 1`. */
  readonly constraint: string;
  /** What the key controls, with its unit. */
  readonly description: string;
  /** A credential: give it as an `${env:NAME}` reference rather than a literal. */
  readonly secret: boolean;
}

/** The env-only-mode variable of a dotted key path: `receiver.wal.group_commit_ms` → `SLUICE_RECEIVER_WAL_GROUP_COMMIT_MS`. */
export function envVarName(path: string): string {
  return ENV_PREFIX + path.split('.').join('_').toUpperCase();
}

/** The schema's key tree (computed once). */
export const CONFIG_KEY_TREE: KeyNode = keyTreeOf(configSchema);

function collect(node: KeyNode, prefix: readonly string[], out: ConfigKeyInfo[]): void {
  if (node.kind === 'leaf') {
    const path = prefix.join('.');
    out.push({ path, envName: envVarName(path), ...node.meta });
    return;
  }
  for (const [key, child] of node.children) collect(child, [...prefix, key], out);
}

const REFERENCE: readonly ConfigKeyInfo[] = (() => {
  const out: ConfigKeyInfo[] = [];
  collect(CONFIG_KEY_TREE, [], out);
  return Object.freeze(out.map((k) => Object.freeze(k)));
})();

/** Every leaf key with its env variable, default, constraint and description, in schema order. */
export function configKeyReference(): readonly ConfigKeyInfo[] {
  return REFERENCE;
}

/** Every leaf key path (dotted snake_case), in schema order. Details per key: {@link configKeyReference}. */
export function configKeyPaths(): string[] {
  return REFERENCE.map((k) => k.path);
}

/** The key tree node at a dotted path (`''` = the root), or `undefined` when no such key or section exists. */
export function keyNodeAt(path: readonly string[]): KeyNode | undefined {
  let node: KeyNode | undefined = CONFIG_KEY_TREE;
  for (const segment of path) {
    if (node === undefined || node.kind !== 'section') return undefined;
    node = node.children.get(segment);
  }
  return node;
}
