/**
 * @module parse-config
 * {@link parseConfig}: configuration text and environment in, a validated {@link SluiceConfig} or every problem
 * out. Pure: no file or process access, so every rule is testable with plain values.
 *
 * File or env, never both (docs/configuration.md):
 * - With `fileText`, the file is the sole source. `SLUICE_*` variables are not read as configuration; a
 *   configuration variable that is set anyway (and not referenced by the file through `${env:…}`) is an issue,
 *   because the operator evidently expects it to apply.
 * - Without `fileText`, env-only mode: `SLUICE_*` variables only (see `env-source`).
 */
import type { z } from 'zod';
import type { Result } from '@sluice/core';
import type { ConfigIssue } from './config-issue.js';
import { sortConfigIssues } from './config-issue.js';
import { configSchema } from './config-schema.js';
import { configKeyReference, envVarName, keyNodeAt } from './config-keys.js';
import { configEnvVarsSet, readEnvTree } from './env-source.js';
import { substituteEnvReferences } from './env-substitution.js';
import type { EnvSource } from './env-substitution.js';
import { suggestKey } from './key-suggestion.js';
import { describeValue } from './scalar-value.js';
import type { SluiceConfig } from './sluice-config.js';
import { toSluiceConfig } from './to-sluice-config.js';
import { parseYamlTree } from './yaml-source.js';

/** Input of {@link parseConfig}. */
export interface ParseConfigInput {
  /** The config file's text; omit for env-only mode. An empty string is an (all-defaults) file. */
  readonly fileText?: string;
  /** The environment: `${env:…}` references in file mode, `SLUICE_*` variables in env-only mode. */
  readonly env: EnvSource;
}

function valueAt(tree: unknown, path: readonly string[]): unknown {
  let node = tree;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

function unknownKeyMessage(parent: readonly string[], key: string): string {
  const node = keyNodeAt(parent);
  const siblings = node?.kind === 'section' ? [...node.children.keys()] : [];
  const sibling = suggestKey(key, siblings);
  if (sibling !== undefined) return `unknown key (did you mean "${sibling}"?)`;
  // A known key at another depth (`receiver.group_commit_ms`): point at the full path, preferring this section.
  const lastSegment = (p: string): string => p.slice(p.lastIndexOf('.') + 1);
  const all = configKeyReference().map((k) => k.path);
  // Only an exact (or camelCase) spelling counts here: a fuzzy match across the whole tree suggests nonsense.
  const fold = (k: string): string => k.replace(/_/g, '').toLowerCase();
  const prefix = parent.length === 0 ? '' : `${parent.join('.')}.`;
  const matches = all.filter((p) => fold(lastSegment(p)) === fold(key));
  const best = matches.find((p) => p.startsWith(prefix)) ?? matches[0];
  return best === undefined ? 'unknown key' : `unknown key here (did you mean ${best}?)`;
}

function translateIssue(issue: z.core.$ZodIssue, tree: unknown): ConfigIssue[] {
  const path = issue.path.map(String);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({ path: [...path, key].join('.'), message: unknownKeyMessage(path, key) }));
    case 'invalid_type':
      if (keyNodeAt(path)?.kind === 'section') {
        return [
          { path: path.join('.'), message: `must be a mapping of keys, got ${describeValue(valueAt(tree, path))}` },
        ];
      }
      return [{ path: path.join('.'), message: 'invalid value' }];
    case 'custom':
      return [{ path: path.join('.'), message: issue.message }];
    default:
      // Every leaf and rule reports `custom` issues; anything else is a schema bug. Keep library text out.
      return [{ path: path.join('.'), message: 'invalid value' }];
  }
}

function isUnder(path: string, roots: ReadonlySet<string>): boolean {
  for (const r of roots) if (path === r || path.startsWith(`${r}.`)) return true;
  return false;
}

function validate(
  tree: unknown,
  earlier: readonly ConfigIssue[],
  skip: ReadonlySet<string>,
): Result<SluiceConfig, ConfigIssue[]> {
  const parsed = configSchema.safeParse(tree);
  if (parsed.success && earlier.length === 0) return { ok: true, value: toSluiceConfig(parsed.data) };
  const schemaIssues = parsed.success ? [] : parsed.error.issues.flatMap((i) => translateIssue(i, tree));
  const kept = schemaIssues.filter((i) => !isUnder(i.path, skip));
  return { ok: false, error: sortConfigIssues([...earlier, ...kept]) };
}

function parseFile(fileText: string, env: EnvSource): Result<SluiceConfig, ConfigIssue[]> {
  const yaml = parseYamlTree(fileText);
  if (!yaml.ok) return yaml;
  const sub = substituteEnvReferences(yaml.value, env);
  const stray = configEnvVarsSet(env)
    .filter((name) => !sub.referencedNames.has(name))
    .map((name) => ({
      path: name,
      message: `is set, but a config file was given and Sluice reads the file or the environment, never both: unset ${name}, or reference it from the file as \${env:${name}}`,
    }));
  return validate(sub.tree, [...sub.issues, ...stray], sub.unresolvedPaths);
}

let leafPathsLongestFirst: readonly string[] | undefined;

/** Restates an issue in env-only-mode terms: variable names instead of key paths, in the path and the message. */

function toEnvTerms(issue: ConfigIssue): ConfigIssue {
  const leaf = configKeyReference().some((k) => k.path === issue.path);
  let message = issue.message;
  leafPathsLongestFirst ??= configKeyReference()
    .map((k) => k.path)
    .sort((a, b) => b.length - a.length);
  for (const p of leafPathsLongestFirst) {
    if (message.includes(p)) message = message.split(p).join(envVarName(p));
  }
  return { path: leaf ? envVarName(issue.path) : issue.path, message };
}

function parseEnv(env: EnvSource): Result<SluiceConfig, ConfigIssue[]> {
  const { tree, issues } = readEnvTree(env);
  const r = validate(tree, issues, new Set());
  return r.ok ? r : { ok: false, error: sortConfigIssues(r.error.map(toEnvTerms)) };
}

/**
 * Parses and validates a configuration, reporting every problem at once.
 *
 * @param input `fileText` (file mode, with `${env:NAME}` / `${env:NAME:-default}` substitution) or no
 *   `fileText` (env-only mode, `SLUICE_*` variables); `env` in both.
 * @returns the frozen camelCase configuration, or all issues sorted by path; render them with
 *   `formatConfigIssues`.
 *
 * @example
 * ```ts
 * const r = parseConfig({ fileText: 'querier:\n  limits:\n    max_rows: ${env:MAX_ROWS:-5000}\n', env: process.env });
 * if (r.ok) r.value.querier.limits.maxRows; // 5000 unless MAX_ROWS is set
 * ```
 */
export function parseConfig(input: ParseConfigInput): Result<SluiceConfig, ConfigIssue[]> {
  return input.fileText !== undefined ? parseFile(input.fileText, input.env) : parseEnv(input.env);
}
