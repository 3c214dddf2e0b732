/**
 * @module local-object-store
 * {@link ObjectStore} over a local directory. `put` writes `<key>.tmp-<random>`, fsyncs it, renames it over the
 * key and fsyncs the directory, so a crash leaves either the old object, the new one, or an ignored tmp file.
 * Listing walks directories lazily (one `readdir` per directory actually entered), sorted in key order.
 *
 * ETags are `<inode>-<mtime ns>-<size>` (hex): every publish renames or links a fresh file, so a new version
 * gets a new inode/mtime. (A reused inode with the identical nanosecond mtime and size would collide; this is
 * the accepted residual risk.)
 *
 * Conditional writes (`putConditional`) — the guarantee, honestly:
 * - `ifNoneMatch: '*'`: the fsync'd tmp file is hard-linked to the key with `link(2)`, which fails with `EEXIST`
 *   if the key exists. Atomic against every other writer, in this or any other process on the same filesystem.
 * - `ifMatch: etag`: compare and rename run under a per-key lock file `<key>.tmp-cas-lock` created with `O_EXCL`
 *   (plus an in-process mutex, so same-process callers queue without polling). The key is never absent during
 *   the swap, so readers see the old or the new version. Atomic against other conditional writers in any process
 *   sharing the directory (not across NFS clients without working `O_EXCL`). A lock left by a crashed process is
 *   broken once older than `casLockStaleMs` (default 10 s; the critical section is a stat, a rename and a
 *   directory fsync); this assumes no live holder stalls that long. A plain `put` or `delete` does not take the
 *   lock, so mixing them with conditional writes of the same key is not linearizable.
 */
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { link, mkdir, open, readdir, rename, rmdir, stat, unlink, readFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyedMutex } from './keyed-mutex.js';
import type { OpenFile, ReadHandleCache } from './read-handle-cache.js';
import { createReadHandleCache } from './read-handle-cache.js';
import type {
  CallOptions,
  ConditionalPutResult,
  ListEntry,
  ListOptions,
  ObjectHead,
  ObjectStore,
  PutCondition,
  PutOptions,
  VersionedObject,
} from './object-store.js';
import {
  InvalidKeyError,
  ObjectNotFoundError,
  TMP_MARKER,
  assertRange,
  assertValidKey,
  compareKeys,
} from './object-store.js';

/** Options for {@link createLocalObjectStore}. */
export interface LocalObjectStoreOptions {
  /** Directory holding the objects (created on first put). */
  readonly root: string;
  /** Age after which another process's `ifMatch` lock file counts as abandoned and is broken (default 10,000). */
  readonly casLockStaleMs?: number;
  /** Longest wait for a held `ifMatch` lock before `putConditional` throws (default 15,000). */
  readonly casLockTimeoutMs?: number;
  /**
   * Keep read handles of immutable keys open across `getRange` calls (a query worker's data files): at most
   * `maxOpen` stay open; `immutable` says which keys are never rewritten in place. Absent: every range read opens
   * and closes the file.
   */
  readonly readHandles?: { readonly maxOpen: number; readonly immutable: (key: string) => boolean };
}

/** A local store, with how many read handles it keeps open (see {@link LocalObjectStoreOptions.readHandles}). */
export interface LocalObjectStoreHandle extends ObjectStore {
  /** Read handles open now (kept between reads, or mid-read); 0 without `readHandles`. */
  readonly openReadHandles: number;
}

/** The local ETag of a file: inode, mtime (ns) and size, in hex. */
function etagOf(st: BigIntStats): string {
  return `${st.ino.toString(16)}-${st.mtimeNs.toString(16)}-${st.size.toString(16)}`;
}

/** Suffix of the per-key lock file of `ifMatch` writes (contains {@link TMP_MARKER}, so listings skip it). */
const CAS_LOCK_SUFFIX = `${TMP_MARKER}cas-lock`;

function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
}

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);

interface WalkItem {
  readonly kind: 'object' | 'dir';
  /** Key of the object, or the directory's key with a trailing `/`. */
  readonly key: string;
  readonly path: string;
}

class LocalObjectStore implements LocalObjectStoreHandle {
  private readonly root: string;
  private readonly mutex = new KeyedMutex();
  private readonly staleMs: number;
  private readonly timeoutMs: number;
  private readonly handles: ReadHandleCache | undefined;
  private readonly immutable: (key: string) => boolean;

  constructor(options: LocalObjectStoreOptions) {
    this.root = resolve(options.root);
    this.staleMs = options.casLockStaleMs ?? 10_000;
    this.timeoutMs = options.casLockTimeoutMs ?? 15_000;
    const rh = options.readHandles;
    this.handles =
      rh !== undefined && rh.maxOpen > 0
        ? createReadHandleCache({ maxOpen: rh.maxOpen, openFile: openForRead })
        : undefined;
    this.immutable = rh?.immutable ?? (() => false);
  }

  /** Read handles open now (kept between reads, or mid-read); 0 without `readHandles`. */
  get openReadHandles(): number {
    return this.handles?.openCount ?? 0;
  }

  private pathOf(key: string): string {
    assertValidKey(key);
    const p = resolve(this.root, ...key.split('/'));
    if (!p.startsWith(this.root + sep)) throw new InvalidKeyError(key, 'escapes the store root');
    return p;
  }

  /** Writes `bytes` to a fresh fsync'd `<path>.tmp-<random>` and returns its path (removed again on failure). */
  private async writeTmp(path: string, bytes: Uint8Array): Promise<string> {
    const dir = dirname(path);
    const tmp = `${path}${TMP_MARKER}${randomBytes(6).toString('hex')}`;
    let handle;
    for (let attempt = 0; ; attempt++) {
      await mkdir(dir, { recursive: true });
      try {
        handle = await open(tmp, 'wx');
        break;
      } catch (e) {
        // A concurrent delete may have pruned the freshly made directory; make it again once.
        if (errCode(e) !== 'ENOENT' || attempt > 0) throw e;
      }
    }
    try {
      try {
        let off = 0;
        while (off < bytes.byteLength) {
          const { bytesWritten } = await handle.write(bytes, off, bytes.byteLength - off);
          off += bytesWritten;
        }
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (e) {
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
    return tmp;
  }

  async put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<void> {
    const path = this.pathOf(key);
    this.handles?.forget(key); // a kept handle would keep reading the replaced inode
    opts?.signal?.throwIfAborted();
    const tmp = await this.writeTmp(path, bytes);
    let published = false;
    try {
      opts?.signal?.throwIfAborted();
      await rename(tmp, path);
      published = true;
      await fsyncDir(dirname(path));
    } finally {
      if (!published) await unlink(tmp).catch(() => undefined);
    }
  }

  async putConditional(
    key: string,
    bytes: Uint8Array,
    condition: PutCondition,
    opts?: PutOptions,
  ): Promise<ConditionalPutResult> {
    const path = this.pathOf(key);
    this.handles?.forget(key); // a kept handle would keep reading the replaced inode
    opts?.signal?.throwIfAborted();
    const tmp = await this.writeTmp(path, bytes);
    try {
      // The published file is this very inode (link or rename), so its ETag is known before publishing.
      const etag = etagOf(await stat(tmp, { bigint: true }));
      opts?.signal?.throwIfAborted();
      if ('ifNoneMatch' in condition) {
        try {
          await link(tmp, path);
        } catch (e) {
          if (errCode(e) === 'EEXIST') return { status: 'conflict' };
          throw e;
        }
        await fsyncDir(dirname(path));
        return { status: 'ok', etag };
      }
      const expected = condition.ifMatch;
      return await this.mutex.run(path, () =>
        this.withLockFile(path, async (): Promise<ConditionalPutResult> => {
          const current = await stat(path, { bigint: true }).catch((e: unknown) => {
            if (MISSING.has(errCode(e) ?? '')) return null;
            throw e;
          });
          if (current === null || !current.isFile() || etagOf(current) !== expected) return { status: 'conflict' };
          await rename(tmp, path);
          await fsyncDir(dirname(path));
          return { status: 'ok', etag };
        }),
      );
    } finally {
      // After link() the tmp name is a second link to the published inode; after rename() it no longer exists.
      await unlink(tmp).catch(() => undefined);
    }
  }

  /** Runs `fn` holding the cross-process lock file of `path`, breaking a lock older than `casLockStaleMs`. */
  private async withLockFile<T>(path: string, fn: () => Promise<T>): Promise<T> {
    const lockPath = `${path}${CAS_LOCK_SUFFIX}`;
    const started = Date.now();
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        const h = await open(lockPath, 'wx');
        await h.close();
        break;
      } catch (e) {
        if (errCode(e) !== 'EEXIST') throw e;
      }
      const st = await stat(lockPath).catch(() => null);
      if (st !== null && Date.now() - st.mtimeMs > this.staleMs) {
        // Abandoned by a crashed holder: move it aside (only one breaker's rename succeeds) and retry at once.
        const aside = `${lockPath}-stale-${randomBytes(4).toString('hex')}`;
        if (
          await rename(lockPath, aside).then(
            () => true,
            () => false,
          )
        )
          await unlink(aside).catch(() => undefined);
        continue;
      }
      if (Date.now() - started > this.timeoutMs)
        throw new Error(`timed out after ${this.timeoutMs} ms waiting for the lock of ${path}`);
      await sleep(delay);
    }
    try {
      return await fn();
    } finally {
      await unlink(lockPath).catch(() => undefined);
    }
  }

  async get(key: string, opts?: CallOptions): Promise<Uint8Array | null> {
    const path = this.pathOf(key);
    const signal = opts?.signal;
    signal?.throwIfAborted();
    try {
      const buf = await readFile(path, signal !== undefined ? { signal } : {});
      signal?.throwIfAborted();
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return null;
      throw e;
    }
  }

  async getVersioned(key: string, opts?: CallOptions): Promise<VersionedObject | null> {
    const path = this.pathOf(key);
    const signal = opts?.signal;
    signal?.throwIfAborted();
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return null;
      throw e;
    }
    try {
      // One open file: the ETag and the bytes describe the same inode even if the key is replaced meanwhile.
      signal?.throwIfAborted();
      const st = await handle.stat({ bigint: true });
      if (!st.isFile()) return null;
      const buf = await handle.readFile(signal !== undefined ? { signal } : {});
      signal?.throwIfAborted();
      return { bytes: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength), etag: etagOf(st) };
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return null;
      throw e;
    } finally {
      await handle.close();
    }
  }

  async getRange(key: string, start: number, endExclusive: number, opts?: CallOptions): Promise<Uint8Array> {
    const path = this.pathOf(key);
    const signal = opts?.signal;
    signal?.throwIfAborted();
    const read = (file: OpenFile): Promise<Uint8Array> => readRange(file, key, start, endExclusive, signal);
    try {
      if (this.handles !== undefined && this.immutable(key)) return await this.handles.use(key, path, read);
      const file = await openForRead(path);
      try {
        return await read(file);
      } finally {
        await file.handle.close();
      }
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) throw new ObjectNotFoundError(key);
      throw e;
    }
  }

  async head(key: string, opts?: CallOptions): Promise<ObjectHead | null> {
    const path = this.pathOf(key);
    opts?.signal?.throwIfAborted();
    try {
      const st = await stat(path, { bigint: true });
      opts?.signal?.throwIfAborted();
      if (!st.isFile()) return null;
      return { size: Number(st.size), etag: etagOf(st) };
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return null;
      throw e;
    }
  }

  async delete(key: string, opts?: CallOptions): Promise<void> {
    const path = this.pathOf(key);
    this.handles?.forget(key); // a kept handle would keep reading the replaced inode
    opts?.signal?.throwIfAborted();
    try {
      await unlink(path);
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return;
      throw e;
    }
    // Prune now-empty parent directories so listings with a delimiter do not show empty prefixes.
    for (let dir = dirname(path); dir.startsWith(this.root + sep); dir = dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
    }
  }

  list(options: ListOptions): AsyncIterable<ListEntry> {
    return { [Symbol.asyncIterator]: () => this.listEntries(options) };
  }

  private async *listEntries(options: ListOptions): AsyncGenerator<ListEntry> {
    const { prefix, delimiter, startAfter, signal } = options;
    const slashRollup = delimiter === '/';
    const otherDelimiter = delimiter !== undefined && delimiter !== '' && !slashRollup ? delimiter : undefined;
    let lastPrefix: string | undefined;
    for await (const item of this.walk(this.root, '', prefix, startAfter, signal, slashRollup)) {
      if (item.kind === 'dir') {
        // A directory wholly inside the prefix is one common prefix: emit it if it holds an object after startAfter.
        if (await this.hasObject(item, startAfter, signal)) yield { kind: 'prefix', prefix: item.key };
        continue;
      }
      if (otherDelimiter !== undefined) {
        const at = item.key.indexOf(otherDelimiter, prefix.length);
        if (at >= 0) {
          const p = item.key.slice(0, at + otherDelimiter.length);
          if (p !== lastPrefix) {
            lastPrefix = p;
            yield { kind: 'prefix', prefix: p };
          }
          continue;
        }
      }
      const st = await stat(item.path).catch((e: unknown) => {
        if (MISSING.has(errCode(e) ?? '')) return null; // deleted while listing
        throw e;
      });
      if (st?.isFile()) yield { kind: 'object', key: item.key, size: st.size };
    }
  }

  /**
   * Walks `dir` (whose key prefix is `base`) in key order, reading each directory only when it is reached,
   * yielding files whose key starts with `prefix` and sorts after `startAfter`. With `rollupDirs`, a directory
   * wholly inside the prefix is yielded as one `dir` item instead of being entered.
   */
  private async *walk(
    dir: string,
    base: string,
    prefix: string,
    startAfter: string | undefined,
    signal: AbortSignal | undefined,
    rollupDirs: boolean,
  ): AsyncGenerator<WalkItem> {
    signal?.throwIfAborted();
    let names;
    try {
      names = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return;
      throw e;
    }
    const items: WalkItem[] = [];
    for (const d of names) {
      if (d.name.includes(TMP_MARKER)) continue;
      if (d.isDirectory()) items.push({ kind: 'dir', key: `${base}${d.name}/`, path: join(dir, d.name) });
      else if (d.isFile()) items.push({ kind: 'object', key: `${base}${d.name}`, path: join(dir, d.name) });
    }
    // A directory's keys all start with `name/`, so sorting directories as `name/` gives key order.
    items.sort((a, b) => compareKeys(a.key, b.key));
    for (const item of items) {
      if (item.kind === 'object') {
        if (!item.key.startsWith(prefix)) continue;
        if (startAfter !== undefined && compareKeys(item.key, startAfter) <= 0) continue;
        yield item;
        continue;
      }
      const inside = item.key.startsWith(prefix);
      if (!inside && !prefix.startsWith(item.key)) continue;
      // Every key below sorts before startAfter: skip the directory without reading it.
      if (startAfter !== undefined && !startAfter.startsWith(item.key) && compareKeys(item.key, startAfter) < 0)
        continue;
      if (inside && rollupDirs && item.key.length > prefix.length) {
        yield item;
        continue;
      }
      yield* this.walk(item.path, item.key, prefix, startAfter, signal, rollupDirs);
    }
  }

  private async hasObject(
    item: WalkItem,
    startAfter: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    const inner = this.walk(item.path, item.key, '', startAfter, signal, false);
    try {
      const first = await inner.next();
      return first.done !== true;
    } finally {
      await inner.return(undefined);
    }
  }
}

/** Opens `path` for reading with its size; a directory reads as missing (`EISDIR`). */
async function openForRead(path: string): Promise<OpenFile> {
  const handle = await open(path, 'r');
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
    return { handle, size: st.size };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/** Bytes `[start, endExclusive)` of an open file, by positioned reads. */
async function readRange(
  file: OpenFile,
  key: string,
  start: number,
  endExclusive: number,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  assertRange(start, endExclusive, file.size);
  const out = new Uint8Array(endExclusive - start);
  let off = 0;
  while (off < out.length) {
    signal?.throwIfAborted();
    const { bytesRead } = await file.handle.read(out, off, out.length - off, start + off);
    if (bytesRead === 0) throw new Error(`short read on ${key}`);
    off += bytesRead;
  }
  signal?.throwIfAborted();
  return out;
}

async function fsyncDir(dir: string): Promise<void> {
  const h = await open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}

/**
 * An {@link ObjectStore} over the directory `root`. Keys map to paths below it and can never escape it.
 *
 * @example
 * const store = createLocalObjectStore({ root: './data' });
 * await store.put('data/x.parquet', bytes);
 */
export function createLocalObjectStore(options: LocalObjectStoreOptions): LocalObjectStoreHandle {
  return new LocalObjectStore(options);
}
