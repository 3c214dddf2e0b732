/**
 * @module memory-source
 * Reads the process's real memory limit (docs/deployment.md, "Sizing the query memory pool"): the cgroup v2 walk (`memory.max` and
 * `memory.high` of the leaf and every ancestor up to the mount root), the cgroup v1 `memory.limit_in_bytes`, and
 * `MemTotal`. Hybrid hosts list both a `0::` line and a v1 memory line; both are read and the smaller limit
 * wins, so a v1 limit is never lost because a `0::` line exists. Paths are injectable so tests use fixture trees;
 * no test reads the host's real files. Missing files are expected (ancestors, the root); malformed ones are noted
 * and ignored, never fatal.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Injectable file locations (defaults: the real ones). */
export interface MemorySourcePaths {
  /** Default `/proc/self/cgroup`. */
  readonly procSelfCgroup?: string;
  /** The cgroup mount root. Default `/sys/fs/cgroup`. */
  readonly cgroupRoot?: string;
  /** Default `/proc/meminfo`. */
  readonly procMeminfo?: string;
}

/** A cgroup memory limit and the file it came from. */
export interface CgroupLimit {
  readonly version: 'v2' | 'v1';
  /** The limit in bytes (exact). */
  readonly limitBytes: bigint;
  /** The file that set it, e.g. `/sys/fs/cgroup/system.slice/memory.high`. */
  readonly file: string;
}

/** What a {@link MemorySource} found. */
export interface MemoryReading {
  /** The tightest cgroup v2 limit on the walk, if any. */
  readonly cgroupV2: CgroupLimit | undefined;
  /** The cgroup v1 memory limit, if one is set (the unlimited sentinel is not a limit). */
  readonly cgroupV1: CgroupLimit | undefined;
  /** The smaller of the two (v2 on a tie). */
  readonly cgroup: CgroupLimit | undefined;
  /** `MemTotal` in bytes, if readable. */
  readonly memTotalBytes: bigint | undefined;
  /** Inputs that were unreadable or malformed and therefore ignored, for the startup log. */
  readonly notes: readonly string[];
}

/** A reader of the memory limit; `read()` is synchronous (startup only). */
export interface MemorySource {
  readonly paths: Readonly<Required<MemorySourcePaths>>;
  read(): MemoryReading;
}

/**
 * A v1 `memory.limit_in_bytes` at or above 2^62 is "unlimited": the kernel reports the page-rounded i64::MAX
 * (9223372036854771712 with 4 KiB pages, 9223372036854710272 with 64 KiB pages), and no real limit is that large.
 */
export const V1_UNLIMITED_THRESHOLD = 1n << 62n;

/**
 * Creates a source over `paths` (each defaulting to the real location).
 * @example
 * createMemorySource({ procSelfCgroup: `${tmp}/proc/self/cgroup`, cgroupRoot: `${tmp}/sys/fs/cgroup`,
 *   procMeminfo: `${tmp}/proc/meminfo` })
 */
export function createMemorySource(paths: MemorySourcePaths = {}): MemorySource {
  const resolved = Object.freeze({
    procSelfCgroup: paths.procSelfCgroup ?? '/proc/self/cgroup',
    cgroupRoot: paths.cgroupRoot ?? '/sys/fs/cgroup',
    procMeminfo: paths.procMeminfo ?? '/proc/meminfo',
  });
  return { paths: resolved, read: () => readMemory(resolved) };
}

interface CgroupLine {
  readonly controllers: readonly string[];
  readonly path: string;
  readonly unified: boolean;
}

function readMemory(paths: Readonly<Required<MemorySourcePaths>>): MemoryReading {
  const notes: string[] = [];
  const lines = parseProcSelfCgroup(readText(paths.procSelfCgroup, notes) ?? '');
  const v2Line = lines.find((l) => l.unified);
  const v1Line = lines.find((l) => !l.unified && l.controllers.includes('memory'));
  const cgroupV2 = v2Line ? readV2(paths.cgroupRoot, v2Line.path, notes) : undefined;
  const cgroupV1 = v1Line ? readV1(paths.cgroupRoot, v1Line.path, notes) : undefined;
  let cgroup = cgroupV2;
  if (cgroupV1 && (!cgroup || cgroupV1.limitBytes < cgroup.limitBytes)) cgroup = cgroupV1;
  return { cgroupV2, cgroupV1, cgroup, memTotalBytes: readMemTotal(paths.procMeminfo, notes), notes };
}

/** `hierarchy-ID:controller-list:path` per line; the path may itself contain `:`. */
function parseProcSelfCgroup(text: string): CgroupLine[] {
  const out: CgroupLine[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const a = line.indexOf(':');
    const b = a < 0 ? -1 : line.indexOf(':', a + 1);
    if (b < 0) continue;
    const id = line.slice(0, a);
    const controllers = line.slice(a + 1, b);
    const path = line.slice(b + 1);
    out.push({
      controllers: controllers === '' ? [] : controllers.split(','),
      path,
      unified: id === '0' && controllers === '',
    });
  }
  return out;
}

/** Path segments below the mount; `..` above the namespace root (a process outside it) stops at the root. */
function segmentsOf(path: string): string[] {
  const stack: string[] = [];
  for (const s of path.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') stack.pop();
    else stack.push(s);
  }
  return stack;
}

/**
 * The v2 hierarchy is mounted at the root on a unified host and at `<root>/unified` on a hybrid one; the
 * `cgroup.controllers` file tells them apart.
 */
function v2Mount(root: string): string {
  if (exists(join(root, 'cgroup.controllers'))) return root;
  const unified = join(root, 'unified');
  if (exists(join(unified, 'cgroup.controllers'))) return unified;
  return root;
}

function readV2(root: string, path: string, notes: string[]): CgroupLimit | undefined {
  const mount = v2Mount(root);
  const segments = segmentsOf(path);
  let best: CgroupLimit | undefined;
  for (let depth = segments.length; depth >= 0; depth--) {
    const dir = join(mount, ...segments.slice(0, depth));
    for (const name of ['memory.max', 'memory.high']) {
      const file = join(dir, name);
      const value = readLimitFile(file, notes, true);
      if (value !== undefined && (!best || value < best.limitBytes)) best = { version: 'v2', limitBytes: value, file };
    }
  }
  return best;
}

function readV1(root: string, path: string, notes: string[]): CgroupLimit | undefined {
  const mount = join(root, 'memory');
  // A v1 container without a cgroup namespace sees its own cgroup at the mount root, not at `path`.
  let file = join(mount, ...segmentsOf(path), 'memory.limit_in_bytes');
  if (!exists(file)) file = join(mount, 'memory.limit_in_bytes');
  const value = readLimitFile(file, notes, false);
  if (value === undefined || value >= V1_UNLIMITED_THRESHOLD) return undefined;
  return { version: 'v1', limitBytes: value, file };
}

/** A limit file: decimal bytes, or (v2) the literal `max`. Absent → undefined silently; malformed → noted. */
function readLimitFile(file: string, notes: string[], allowMax: boolean): bigint | undefined {
  const text = readText(file, notes);
  if (text === undefined) return undefined;
  const value = text.trim();
  if (allowMax && value === 'max') return undefined;
  if (!/^\d{1,20}$/.test(value)) {
    notes.push(`ignored ${file}: not a byte count (${JSON.stringify(value.slice(0, 40))})`);
    return undefined;
  }
  return BigInt(value);
}

function readMemTotal(file: string, notes: string[]): bigint | undefined {
  const text = readText(file, notes);
  if (text === undefined) return undefined;
  const m = /^MemTotal:\s*(\d{1,20})\s*kB\s*$/m.exec(text);
  if (!m?.[1]) {
    notes.push(`ignored ${file}: no MemTotal line in kB`);
    return undefined;
  }
  return BigInt(m[1]) * 1024n;
}

function readText(file: string, notes: string[]): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') notes.push(`could not read ${file}: ${code ?? 'error'}`);
    return undefined;
  }
}

function exists(file: string): boolean {
  return existsSync(file);
}
