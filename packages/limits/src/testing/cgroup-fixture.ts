/**
 * @module cgroup-fixture
 * Builds a temporary tree that mimics `/proc` and `/sys/fs/cgroup` (fixture directories in a
 * tempdir), and a memory source pointed at it. No test reads the host's real files.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createMemorySource } from '../memory-source.js';
import type { MemorySource } from '../memory-source.js';

/** A fixture tree on disk. */
export interface CgroupFixture {
  readonly root: string;
  readonly source: MemorySource;
  /** Path of `rel` inside the fixture. */
  path(rel: string): string;
  remove(): void;
}

/** `MemTotal` lines for meminfo fixtures. */
export function meminfo(kib: number): string {
  return `MemTotal:       ${kib} kB\nMemFree:         1000 kB\nMemAvailable:    2000 kB\n`;
}

/**
 * Writes `files` (paths relative to the fixture root, e.g. `proc/self/cgroup`, `sys/fs/cgroup/memory.max`) and
 * returns a source over `proc/self/cgroup`, `sys/fs/cgroup` and `proc/meminfo` inside it.
 */
export function cgroupFixture(files: Readonly<Record<string, string>>): CgroupFixture {
  const root = mkdtempSync(join(tmpdir(), 'sluice-cgroup-'));
  for (const [rel, text] of Object.entries(files)) {
    const file = join(root, rel);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  mkdirSync(join(root, 'sys/fs/cgroup'), { recursive: true });
  const source = createMemorySource({
    procSelfCgroup: join(root, 'proc/self/cgroup'),
    cgroupRoot: join(root, 'sys/fs/cgroup'),
    procMeminfo: join(root, 'proc/meminfo'),
  });
  return { root, source, path: (rel) => join(root, rel), remove: () => rmSync(root, { recursive: true, force: true }) };
}
