/**
 * @module config-issue
 * The one error type of configuration loading, {@link ConfigIssue}, and its rendering as a single startup error.
 * Every problem found in one pass is an issue; nothing is thrown for a bad configuration.
 */

/**
 * One configuration problem.
 *
 * `path` is where the problem is:
 * - file mode: the dotted snake_case key path (`receiver.wal.group_commit_ms`);
 * - env-only mode: the environment variable's name (`SLUICE_RECEIVER_WAL_GROUP_COMMIT_MS`);
 * - `--config` for a config file that could not be read;
 * - `''` for the configuration as a whole: a YAML syntax error (the message has the line), no role enabled.
 *
 * `message` says what is wrong and, where one exists, the remedy. It never contains parser or library text, and
 * never echoes the value of a credential key.
 */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** Options of {@link formatConfigIssues}. */
export interface FormatConfigIssuesOptions {
  /** Where the configuration came from, e.g. the config file's path or `environment`; named in the heading. */
  readonly source?: string;
}

/**
 * Renders issues as one multi-line startup error: a heading that counts the problems, then one line per issue.
 *
 * @example
 * ```text
 * invalid configuration in sluice.yaml (2 problems):
 *   - querier.limits.max_concurrent_queries: must be an integer >= 1, got 0
 *   - receiver.wal.group_comit_ms: unknown key (did you mean "group_commit_ms"?)
 * ```
 */
export function formatConfigIssues(issues: readonly ConfigIssue[], options: FormatConfigIssuesOptions = {}): string {
  const where = options.source !== undefined ? ` in ${options.source}` : '';
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  const lines = issues.map((i) => `  - ${i.path === '' ? i.message : `${i.path}: ${i.message}`}`);
  return [`invalid configuration${where} (${count}):`, ...lines].join('\n');
}

/** Orders issues by path (whole-configuration issues first) so output is stable and related keys sit together. */
export function sortConfigIssues(issues: readonly ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
