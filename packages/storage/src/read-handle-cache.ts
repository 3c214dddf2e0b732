/**
 * @module read-handle-cache
 * Open read handles of immutable local files, kept across range reads (docs/design/query-governance.md, "Footer
 * cache"): without it every range read of a data file opens, stats and closes the file. A file is opened and
 * stat'ed once; its size is kept with the handle. At most `maxOpen` handles stay open between reads, least recently
 * used closed first; a handle in the middle of a read is closed when that read ends, never under it.
 *
 * Only keys the owner declares immutable are kept (data files have UUIDv7 names and are never rewritten). A file
 * deleted while its handle is open keeps its disk space until the handle is evicted, and a read through the handle
 * still returns the file's (unchanged) bytes.
 */
import type { FileHandle } from 'node:fs/promises';

/** An open file and its size. */
export interface OpenFile {
  readonly handle: FileHandle;
  readonly size: number;
}

/** Options of {@link createReadHandleCache}. */
export interface ReadHandleCacheOptions {
  /** Most handles kept open between reads (0: every read opens and closes its own). */
  readonly maxOpen: number;
  /** Opens `path` for reading with its size; throws as `open` does. */
  readonly openFile: (path: string) => Promise<OpenFile>;
}

/** See the module comment. */
export interface ReadHandleCache {
  /** Runs `fn` with an open handle of `path`, opening it on first use. */
  use<T>(key: string, path: string, fn: (file: OpenFile) => Promise<T>): Promise<T>;
  /** Closes the handle of `key` (once idle): the key was written or deleted through this store. */
  forget(key: string): void;
  /** Handles open now (kept ones and ones mid-read). */
  readonly openCount: number;
  /** Files opened so far (a measure of what the cache saved). */
  readonly opens: number;
}

interface Slot {
  readonly file: Promise<OpenFile>;
  users: number;
  evicted: boolean;
  closed: boolean;
}

/** Creates an empty cache. */
export function createReadHandleCache(options: ReadHandleCacheOptions): ReadHandleCache {
  const { openFile } = options;
  // Insertion order is recency: the first slot is the least recently used.
  const slots = new Map<string, Slot>();
  let openCount = 0;
  let opens = 0;

  /** Closes an evicted slot's handle once nobody reads through it (exactly once). */
  const settle = (slot: Slot): void => {
    if (!slot.evicted || slot.users !== 0 || slot.closed) return;
    slot.closed = true;
    slot.file
      .then(
        (f) => {
          openCount--;
          return f.handle.close();
        },
        () => undefined,
      )
      .catch(() => undefined);
  };
  const evict = (key: string, slot: Slot): void => {
    if (slots.get(key) === slot) slots.delete(key);
    slot.evicted = true;
    settle(slot);
  };
  const trim = (): void => {
    for (const [key, slot] of slots) {
      if (slots.size <= options.maxOpen) return;
      evict(key, slot);
    }
  };

  return {
    async use(key, path, fn) {
      let slot = slots.get(key);
      if (slot === undefined) {
        opens++;
        const file = openFile(path).then((f) => {
          openCount++;
          return f;
        });
        slot = { file, users: 0, evicted: false, closed: false };
        slots.set(key, slot);
        const mine = slot;
        // A failed open is not kept: the next read tries again.
        file.catch(() => {
          if (slots.get(key) === mine) slots.delete(key);
          mine.evicted = true;
          mine.closed = true;
        });
      } else {
        slots.delete(key);
        slots.set(key, slot);
      }
      slot.users++;
      trim();
      try {
        return await fn(await slot.file);
      } finally {
        slot.users--;
        if (options.maxOpen === 0) evict(key, slot);
        else settle(slot);
      }
    },
    forget(key) {
      const slot = slots.get(key);
      if (slot !== undefined) evict(key, slot);
    },
    get openCount() {
      return openCount;
    },
    get opens() {
      return opens;
    },
  };
}
