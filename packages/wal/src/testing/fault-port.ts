/**
 * @module testing/fault-port
 * A {@link WalFilePort} for tests that wraps the real one and (a) records the order of writes, syncs and the
 * test's own notes (acks), (b) fails a chosen call with an errno (EIO, ENOSPC; a write may first write a part),
 * and (c) models a power loss: it tracks, per file, the bytes a successful fdatasync covered and the directory
 * entries a directory fsync covered, and at the crash point builds the disk image a power cut could leave
 * (unsynced bytes dropped, kept in part, zeroed or garbled; an unsynced new file present or gone).
 *
 * The model follows Linux after a failed fdatasync: the pages that were dirty are marked clean without being
 * written, so a LATER successful fdatasync does not write them (they are "poisoned" until written again). A WAL
 * that retried its fdatasync and trusted it would therefore lose acknowledged frames in the image.
 */
import * as fs from 'node:fs';
import { basename, dirname } from 'node:path';
import { nodeFilePort } from '../file-port.js';
import type { WalFilePort } from '../file-port.js';

/** The operations of the port. */
export type PortOp = keyof WalFilePort;

/** One recorded event, in the order it happened. */
export type PortEvent =
  | { readonly kind: 'write'; readonly path: string; readonly start: number; readonly end: number }
  | { readonly kind: 'sync-start'; readonly path: string; readonly id: number }
  | { readonly kind: 'sync-end'; readonly path: string; readonly id: number; readonly ok: boolean }
  | { readonly kind: 'truncate'; readonly path: string; readonly length: number }
  | {
      readonly kind: 'note';
      readonly label: string;
      readonly path: string;
      readonly start: number;
      readonly end: number;
    };

/** A fault to inject: the `skip`+1-th call of `op` (on a path containing `pathIncludes`) fails with `errno`. */
export interface FaultRule {
  readonly op: PortOp;
  readonly errno: 'EIO' | 'ENOSPC' | 'EDQUOT';
  /** Matching calls to let through first (default 0). */
  skip?: number;
  /** Matching calls to fail (default 1). */
  times?: number;
  readonly pathIncludes?: string;
  /** For `writev`: write this many bytes of the call for real before failing (a write cut short by ENOSPC). */
  readonly partialBytes?: number;
  /**
   * For `fdatasync`: the failed writeback also tore the 4 KiB page the unsynced bytes start in, so its bytes BEFORE
   * them (synced earlier) are garbage on disk too, until the page is written and synced again.
   */
  readonly tearsPage?: boolean;
}

interface FileModel {
  /** What the file holds as seen through the page cache (completed operations). */
  shadow: Buffer;
  /** What a successful fdatasync has made durable. */
  durable: Buffer;
  /** The directory entry survives a power loss. */
  nameDurable: boolean;
  /** Unlinked, the unlink not yet covered by a directory fsync. */
  unlinked: boolean;
  /** Byte ranges a failed fdatasync marked clean without writing them: later syncs skip them until rewritten. */
  poisoned: Array<[number, number]>;
}

/** Random source in [0, 1). */
export type Random = () => number;

/** A seeded PRNG (mulberry32) so a failing run replays from its seed. */
export function seededRandom(seed: number): Random {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const errnoError = (errno: string, op: string, path: string): NodeJS.ErrnoException => {
  const e: NodeJS.ErrnoException = new Error(`${errno}: injected fault, ${op} '${path}'`);
  e.code = errno;
  e.syscall = op;
  e.path = path;
  return e;
};

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** The faulting, recording, power-loss-modelling port. */
export class FaultPort implements WalFilePort {
  /** Every write, sync, truncate and note, in order. */
  readonly events: PortEvent[] = [];
  private readonly rules: FaultRule[] = [];
  private readonly files = new Map<string, FileModel>();
  private readonly fds = new Map<number, string>();
  private syncIds = 0;
  private calls = 0;
  private crashAtCall = Infinity;
  private image: Map<string, Buffer> | null = null;
  private crashedResolve: (() => void) | null = null;
  /** Resolves when the crash point is reached. */
  readonly crashed: Promise<void>;

  constructor(
    private readonly random: Random = Math.random,
    private readonly real: WalFilePort = nodeFilePort,
  ) {
    this.crashed = new Promise((resolve) => (this.crashedResolve = resolve));
  }

  /** Fails matching calls as the rule says. */
  inject(rule: FaultRule): void {
    this.rules.push({ ...rule, skip: rule.skip ?? 0, times: rule.times ?? 1 });
  }

  /** Calls not yet failed by an injected rule. */
  pendingFaults(): number {
    return this.rules.filter((r) => (r.times ?? 0) > 0).length;
  }

  /** Cuts the power when the `n`-th call (from 1, counting every operation) is made: it and all later never return. */
  crashAtCallNumber(n: number): void {
    this.crashAtCall = n;
  }

  /** Operations called so far. */
  callCount(): number {
    return this.calls;
  }

  /** Records a test event (an ack of the frame at [`start`, `end`) in `path`) in the same order as the I/O. */
  note(label: string, path: string, start: number, end: number): void {
    if (this.image === null) this.events.push({ kind: 'note', label, path, start, end });
  }

  /** After a crash: closes the real descriptors the WAL left open (its calls never return any more). */
  async releaseDescriptors(): Promise<void> {
    for (const fd of this.fds.keys()) await this.real.close(fd).catch(() => undefined);
    this.fds.clear();
  }

  /** The disk image at the crash point: file name → contents. Throws before the crash. */
  crashImage(): Map<string, Buffer> {
    if (this.image === null) throw new Error('no crash yet');
    return this.image;
  }

  /** Cuts the power now. */
  crashNow(): void {
    if (this.image !== null) return;
    this.image = this.buildImage();
    this.crashedResolve?.();
  }

  /** Writes the crash image into `dir` (which must exist and be empty). */
  writeImage(dir: string): void {
    for (const [name, bytes] of this.crashImage()) fs.writeFileSync(`${dir}/${name}`, bytes);
  }

  // ---- the port -------------------------------------------------------------------------------------------

  open(path: string, flags: string, mode?: number): Promise<number> {
    return this.call('open', path, async () => {
      const existed = fs.existsSync(path);
      const fd = await this.real.open(path, flags, mode);
      return {
        value: fd,
        apply: () => {
          this.fds.set(fd, path);
          const known = this.files.get(path);
          if (!existed || known === undefined || known.unlinked) {
            // A file this port did not create was recovered by openWal (synced, directory synced): durable.
            const content = existed ? fs.readFileSync(path) : Buffer.alloc(0);
            this.files.set(path, {
              shadow: Buffer.from(content),
              durable: Buffer.from(content),
              nameDurable: existed,
              unlinked: false,
              poisoned: [],
            });
          }
        },
      };
    });
  }

  writev(fd: number, buffers: readonly Uint8Array[], position: number): Promise<number> {
    const path = this.pathOf(fd);
    return this.call(
      'writev',
      path,
      async () => {
        const n = await this.real.writev(fd, buffers, position);
        return { value: n, apply: () => this.applyWrite(path, buffers, position, n) };
      },
      async (rule) => {
        // A write cut short: part of it lands for real (and in the page cache) before the error.
        const part = Math.min(
          rule.partialBytes ?? 0,
          buffers.reduce((a, b) => a + b.length, 0),
        );
        if (part > 0) {
          const n = await this.real.writev(
            fd,
            [Buffer.concat(buffers.map((b) => Buffer.from(b))).subarray(0, part)],
            position,
          );
          if (this.image === null) this.applyWrite(path, buffers, position, n);
        }
      },
    );
  }

  read(fd: number, buffer: Uint8Array, position: number): Promise<number> {
    return this.call('read', this.pathOf(fd), async () => ({
      value: await this.real.read(fd, buffer, position),
      apply: () => undefined,
    }));
  }

  fdatasync(fd: number): Promise<void> {
    const path = this.pathOf(fd);
    const id = ++this.syncIds;
    return this.call(
      'fdatasync',
      path,
      async () => {
        this.events.push({ kind: 'sync-start', path, id });
        // What this sync covers: what had been written when it started, less the poisoned pages.
        const covered = this.covered(this.model(path));
        await this.real.fdatasync(fd);
        return {
          value: undefined,
          apply: () => {
            this.model(path).durable = covered;
            this.events.push({ kind: 'sync-end', path, id, ok: true });
          },
        };
      },
      (rule) => {
        this.events.push({ kind: 'sync-start', path, id });
        this.poisonDirty(path, rule.tearsPage === true);
        this.events.push({ kind: 'sync-end', path, id, ok: false });
        return Promise.resolve();
      },
    );
  }

  ftruncate(fd: number, length: number): Promise<void> {
    const path = this.pathOf(fd);
    return this.call('ftruncate', path, async () => {
      await this.real.ftruncate(fd, length);
      return {
        value: undefined,
        apply: () => {
          const m = this.model(path);
          const next = Buffer.alloc(length);
          m.shadow.copy(next, 0, 0, Math.min(length, m.shadow.length));
          m.shadow = next;
          m.poisoned = m.poisoned.map(([a, b]): [number, number] => [a, Math.min(b, length)]).filter(([a, b]) => a < b);
          this.events.push({ kind: 'truncate', path, length });
        },
      };
    });
  }

  close(fd: number): Promise<void> {
    const path = this.pathOf(fd);
    return this.call('close', path, async () => {
      await this.real.close(fd);
      return { value: undefined, apply: () => this.fds.delete(fd) };
    });
  }

  unlinkIfExists(path: string): Promise<boolean> {
    return this.call('unlinkIfExists', path, async () => {
      const removed = await this.real.unlinkIfExists(path);
      return {
        value: removed,
        apply: () => {
          const m = this.files.get(path);
          if (m !== undefined) m.unlinked = true;
        },
      };
    });
  }

  fsyncDir(dir: string): Promise<void> {
    return this.call('fsyncDir', dir, async () => {
      await this.real.fsyncDir(dir);
      return {
        value: undefined,
        apply: () => {
          for (const [path, m] of this.files) {
            if (dirname(path) !== dir) continue;
            if (m.unlinked) this.files.delete(path);
            else m.nameDurable = true;
          }
        },
      };
    });
  }

  // ---- internals ------------------------------------------------------------------------------------------

  /**
   * Runs one operation: the crash point (never returns), an injected fault (`onFault`, then the errno error),
   * or the real call, whose model update (`apply`) happens only if the power is still on when it completes.
   */
  private async call<T>(
    op: PortOp,
    path: string,
    run: () => Promise<{ value: T; apply: () => void }>,
    onFault?: (rule: FaultRule) => Promise<void>,
  ): Promise<T> {
    if (this.image !== null) return never<T>();
    this.calls++;
    if (this.calls >= this.crashAtCall) {
      this.crashNow();
      return never<T>();
    }
    const rule = this.rules.find(
      (r) => r.op === op && (r.pathIncludes === undefined || path.includes(r.pathIncludes)) && (r.times ?? 0) > 0,
    );
    if (rule !== undefined) {
      if ((rule.skip ?? 0) > 0) rule.skip = (rule.skip ?? 0) - 1;
      else {
        rule.times = (rule.times ?? 1) - 1;
        await onFault?.(rule);
        if (this.image !== null) return never<T>();
        throw errnoError(rule.errno, op, path);
      }
    }
    const { value, apply } = await run();
    if (this.image !== null) return never<T>();
    apply();
    return value;
  }

  private pathOf(fd: number): string {
    const path = this.fds.get(fd);
    if (path === undefined) throw new Error(`fault port: unknown fd ${fd}`);
    return path;
  }

  private model(path: string): FileModel {
    const m = this.files.get(path);
    if (m === undefined) throw new Error(`fault port: no model of ${path}`);
    return m;
  }

  private applyWrite(path: string, buffers: readonly Uint8Array[], position: number, n: number): void {
    const m = this.model(path);
    const bytes = Buffer.concat(buffers.map((b) => Buffer.from(b))).subarray(0, n);
    if (position + n > m.shadow.length) {
      const grown = Buffer.alloc(position + n);
      m.shadow.copy(grown);
      m.shadow = grown;
    }
    bytes.copy(m.shadow, position);
    // Written again: dirty again, so the next sync writes these bytes.
    const end = position + n;
    m.poisoned = m.poisoned.flatMap(([a, b]): Array<[number, number]> => {
      if (b <= position || a >= end) return [[a, b]];
      const out: Array<[number, number]> = [];
      if (a < position) out.push([a, position]);
      if (b > end) out.push([end, b]);
      return out;
    });
    this.events.push({ kind: 'write', path, start: position, end });
  }

  /** The shadow as a sync would persist it now: poisoned ranges keep what the disk held before. */
  private covered(m: FileModel): Buffer {
    const out = Buffer.from(m.shadow);
    for (const [a, b] of m.poisoned) {
      for (let i = a; i < b && i < out.length; i++) out[i] = i < m.durable.length ? m.durable[i]! : 0;
    }
    return out;
  }

  /**
   * After a failed sync: every byte not yet durable is marked clean without having been written; with `tear`, the
   * durable bytes of the page the dirt starts in become garbage on disk as well (and stay so until rewritten).
   */
  private poisonDirty(path: string, tear: boolean): void {
    const m = this.model(path);
    let from = 0;
    while (from < m.shadow.length && from < m.durable.length && m.shadow[from] === m.durable[from]) from++;
    if (tear) {
      const page = from - (from % 4096);
      const durable = Buffer.from(m.durable);
      for (let i = page; i < from && i < durable.length; i++) durable[i] = Math.floor(this.random() * 256);
      m.durable = durable;
      from = page;
    }
    if (from < m.shadow.length) m.poisoned.push([from, m.shadow.length]);
  }

  private buildImage(): Map<string, Buffer> {
    const image = new Map<string, Buffer>();
    for (const [path, m] of this.files) {
      // An entry not covered by a directory fsync may or may not survive (created or unlinked alike).
      if (!m.nameDurable && this.random() < 0.5) continue;
      if (m.unlinked && m.nameDurable && this.random() < 0.5) continue;
      image.set(basename(path), this.tornContent(m));
    }
    return image;
  }

  /** The durable bytes, then what a power cut may have left of the rest. */
  private tornContent(m: FileModel): Buffer {
    const base = m.durable;
    const cur = this.covered(m);
    const extendsBase = cur.length >= base.length && cur.subarray(0, base.length).equals(base);
    if (!extendsBase) return Buffer.from(this.random() < 0.5 ? base : cur);
    const extra = cur.subarray(base.length);
    const r = Math.floor(this.random() * (extra.length + 1));
    const mode = Math.floor(this.random() * 4);
    if (mode === 0) return Buffer.from(base); // the unsynced bytes are gone (truncated)
    if (mode === 1) return Buffer.concat([base, extra.subarray(0, r)]); // some of them made it
    if (mode === 2) return Buffer.concat([base, Buffer.alloc(r)]); // extended, never written: zeroes
    const junk = Buffer.alloc(r);
    for (let i = 0; i < r; i++) junk[i] = Math.floor(this.random() * 256);
    return Buffer.concat([base, junk]); // garbage
  }
}
