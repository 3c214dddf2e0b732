/**
 * @module cgroup
 * A cgroup v1 memory child for the soak: created under this process's own memory cgroup (from the
 * `N:memory:/path` line of /proc/self/cgroup), given a `memory.limit_in_bytes`, read for its counters, and removed.
 * Needs root and a writable v1 memory hierarchy (this host has one).
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The v1 memory controller's mount point. */
export const V1_MEMORY_MOUNT = '/sys/fs/cgroup/memory';

/** Counters of a v1 memory cgroup. */
export interface CgroupCounters {
  readonly usageBytes: number;
  readonly maxUsageBytes: number;
  readonly failcnt: number;
  readonly oomKill: number;
  readonly underOom: boolean;
  /** `memory.stat` `rss` (anonymous memory charged to the group) and `cache` (page cache). */
  readonly rssBytes: number;
  readonly cacheBytes: number;
}

/** A created memory cgroup. */
export interface MemoryCgroup {
  readonly path: string;
  readonly limitBytes: number;
  counters(): CgroupCounters;
  /** PIDs still in the group. */
  pids(): number[];
  /** Removes the group (it must be empty); true when it is gone. */
  remove(): boolean;
}

/** This process's v1 memory cgroup path (e.g. `/process_api/abc`), or null when there is no v1 memory line. */
export function ownV1MemoryPath(procSelfCgroup = '/proc/self/cgroup'): string | null {
  for (const line of readFileSync(procSelfCgroup, 'utf8').split('\n')) {
    const a = line.indexOf(':');
    const b = a < 0 ? -1 : line.indexOf(':', a + 1);
    if (b < 0) continue;
    if (
      line
        .slice(a + 1, b)
        .split(',')
        .includes('memory')
    )
      return line.slice(b + 1);
  }
  return null;
}

function num(file: string): number {
  return Number(readFileSync(file, 'utf8').trim());
}

function keyed(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined) out.set(k, Number(v));
  }
  return out;
}

/** Creates `<mount><own path>/<name>` with `limitBytes`; throws with the reason when that is not possible. */
export function createMemoryCgroup(name: string, limitBytes: number): MemoryCgroup {
  const own = ownV1MemoryPath();
  if (own === null) throw new Error('no cgroup v1 memory line in /proc/self/cgroup');
  const parent = join(V1_MEMORY_MOUNT, own);
  if (!existsSync(join(parent, 'memory.limit_in_bytes')))
    throw new Error(`${parent} is not a v1 memory cgroup directory`);
  const path = join(parent, name);
  mkdirSync(path);
  try {
    writeFileSync(join(path, 'memory.limit_in_bytes'), String(limitBytes));
    const readBack = num(join(path, 'memory.limit_in_bytes'));
    if (readBack !== limitBytes) throw new Error(`memory.limit_in_bytes reads ${readBack} after writing ${limitBytes}`);
  } catch (error) {
    rmdirSync(path);
    throw error;
  }
  return {
    path,
    limitBytes,
    counters() {
      const oom = keyed(join(path, 'memory.oom_control'));
      const stat = keyed(join(path, 'memory.stat'));
      return {
        usageBytes: num(join(path, 'memory.usage_in_bytes')),
        maxUsageBytes: num(join(path, 'memory.max_usage_in_bytes')),
        failcnt: num(join(path, 'memory.failcnt')),
        oomKill: oom.get('oom_kill') ?? 0,
        underOom: (oom.get('under_oom') ?? 0) !== 0,
        rssBytes: stat.get('rss') ?? 0,
        cacheBytes: stat.get('cache') ?? 0,
      };
    },
    pids() {
      return readFileSync(join(path, 'cgroup.procs'), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map(Number);
    },
    remove() {
      if (!existsSync(path)) return true;
      // Anything left behind (there should be nothing) goes back to the parent so the directory can go.
      for (const pid of this.pids()) {
        try {
          writeFileSync(join(parent, 'cgroup.procs'), String(pid));
        } catch {
          // already gone
        }
      }
      try {
        rmdirSync(path);
      } catch {
        return false;
      }
      return !existsSync(path);
    },
  };
}
