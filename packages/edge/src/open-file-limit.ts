/**
 * @module open-file-limit
 * The process's soft limit on open file handles (`ulimit -n`, RLIMIT_NOFILE), read from `/proc/self/limits`
 * because Node has no getrlimit. Every socket is a file handle: the connection caps are sized from this.
 */
import { readFileSync } from 'node:fs';

/** Default location of the limits table (Linux). */
export const PROC_SELF_LIMITS = '/proc/self/limits';

/**
 * Parses the text of `/proc/<pid>/limits`: the soft "Max open files" value, or `null` when it is `unlimited` or
 * the line is missing.
 */
export function parseOpenFileLimit(limitsText: string): number | null {
  const line = limitsText.split('\n').find((l) => l.startsWith('Max open files'));
  if (line === undefined) return null;
  const soft = line.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === undefined || !/^\d+$/.test(soft)) return null;
  const n = Number(soft);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** The soft open-file limit of this process, or `null` when it cannot be read (not Linux) or is unlimited. */
export function readOpenFileLimit(path: string = PROC_SELF_LIMITS): number | null {
  try {
    return parseOpenFileLimit(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}
