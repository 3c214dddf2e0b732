/**
 * @module local-object-store
 * {@link ObjectStore} over a local directory. `put` writes `<key>.tmp-<random>`, fsyncs it, renames it over the
 * key and fsyncs the directory, so a crash leaves either the old object, the new one, or an ignored tmp file.
 * Listing walks directories lazily (one `readdir` per directory actually entered), sorted in key order.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rmdir, stat, unlink, readFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { ListEntry, ListOptions, ObjectHead, ObjectStore, PutOptions } from './object-store.js';
import { InvalidKeyError, ObjectNotFoundError, TMP_MARKER, assertRange, assertValidKey, compareKeys } from './object-store.js';

/** Options for {@link createLocalObjectStore}. */
export interface LocalObjectStoreOptions {
  /** Directory holding the objects (created on first put). */
  readonly root: string;
}

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

class LocalObjectStore implements ObjectStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  private pathOf(key: string): string {
    assertValidKey(key);
    const p = resolve(this.root, ...key.split('/'));
    if (!p.startsWith(this.root + sep)) throw new InvalidKeyError(key, 'escapes the store root');
    return p;
  }

  async put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<void> {
    const path = this.pathOf(key);
    opts?.signal?.throwIfAborted();
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
    let published = false;
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
      opts?.signal?.throwIfAborted();
      await rename(tmp, path);
      published = true;
      await fsyncDir(dir);
    } finally {
      if (!published) await unlink(tmp).catch(() => undefined);
    }
  }

  async get(key: string): Promise<Uint8Array | null> {
    const path = this.pathOf(key);
    try {
      const buf = await readFile(path);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return null;
      throw e;
    }
  }

  async getRange(key: string, start: number, endExclusive: number): Promise<Uint8Array> {
    const path = this.pathOf(key);
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) throw new ObjectNotFoundError(key);
      throw e;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new ObjectNotFoundError(key);
      assertRange(start, endExclusive, st.size);
      const out = new Uint8Array(endExclusive - start);
      let off = 0;
      while (off < out.length) {
        const { bytesRead } = await handle.read(out, off, out.length - off, start + off);
        if (bytesRead === 0) throw new Error(`short read on ${key}`);
        off += bytesRead;
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  async head(key: string): Promise<ObjectHead | null> {
    const path = this.pathOf(key);
    try {
      const st = await stat(path);
      if (!st.isFile()) return null;
      return { size: st.size };
    } catch (e) {
      if (MISSING.has(errCode(e) ?? '')) return null;
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
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
      if (startAfter !== undefined && !startAfter.startsWith(item.key) && compareKeys(item.key, startAfter) < 0) continue;
      if (inside && rollupDirs && item.key.length > prefix.length) {
        yield item;
        continue;
      }
      yield* this.walk(item.path, item.key, prefix, startAfter, signal, rollupDirs);
    }
  }

  private async hasObject(item: WalkItem, startAfter: string | undefined, signal: AbortSignal | undefined): Promise<boolean> {
    const inner = this.walk(item.path, item.key, '', startAfter, signal, false);
    try {
      const first = await inner.next();
      return first.done !== true;
    } finally {
      await inner.return(undefined);
    }
  }
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
export function createLocalObjectStore(options: LocalObjectStoreOptions): ObjectStore {
  return new LocalObjectStore(options.root);
}
