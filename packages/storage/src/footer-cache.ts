/**
 * @module footer-cache
 * Parsed Parquet footers kept across queries by one query worker (docs/design/query-governance.md, "Footer
 * cache"). Data files are immutable (UUIDv7 names, never rewritten), so a footer parsed once stays true for as long
 * as the file exists; a file that is deleted is simply never listed again and ages out.
 *
 * Memory: an entry's bytes are reserved (through the `reserve` callback, on the shared pool) before the entry is
 * retained, and released when it is evicted or cleared; a refused reservation means the footer is not kept.
 *
 * Eviction is a segmented LRU: a new entry enters a probation segment; an entry hit again moves to a protected
 * segment (at most `protectedShare` of the capacity). Room is made from probation first, so one query that scans
 * many files once churns probation and leaves the hot set in protected alone.
 */
import type { FileMetaData } from 'hyparquet';

/** Options of {@link createFooterCache}. */
export interface FooterCacheOptions {
  /** Most bytes the cache holds (0 turns it off: nothing is kept). */
  readonly capacityBytes: number;
  /** Reserves `bytes` before an entry is retained; false when refused (the entry is then not kept). */
  reserve(bytes: number): boolean;
  /** Gives back `bytes` of an evicted or cleared entry. */
  release(bytes: number): void;
  /** Share of the capacity for entries hit at least once (default 0.8). */
  readonly protectedShare?: number;
  /** Called with the key of each entry that leaves the cache. */
  onEvict?(key: string): void;
}

/** What a worker's footer cache has done, for its tests and its log line. */
export interface FooterCacheStats {
  readonly heldBytes: number;
  readonly entries: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

/** A bounded cache of parsed footers keyed by object key and size. */
export interface FooterCache {
  /** The footer of `key` (of `size` bytes) if cached; a hit promotes the entry. */
  lookup(key: string, size: number): FileMetaData | undefined;
  /**
   * Offers a footer parsed by a query. Kept only if `bytes` fits the capacity and its reservation is granted;
   * older entries are evicted first to make room. @returns whether it is now cached.
   */
  offer(key: string, size: number, metadata: FileMetaData, bytes: number): boolean;
  /** Drops every entry and releases its bytes. @returns the bytes released. */
  clear(): number;
  /** Bytes held now (all of them reserved). */
  readonly heldBytes: number;
  stats(): FooterCacheStats;
}

interface Entry {
  readonly key: string;
  readonly metadata: FileMetaData;
  readonly bytes: number;
}

/** Creates an empty cache. */
export function createFooterCache(options: FooterCacheOptions): FooterCache {
  const capacity = Math.max(0, Math.floor(options.capacityBytes));
  const protectedCap = Math.floor(capacity * (options.protectedShare ?? 0.8));
  // Maps iterate in insertion order: the first entry is the least recently used.
  const probation = new Map<string, Entry>();
  const protectedSet = new Map<string, Entry>();
  let probationBytes = 0;
  let protectedBytes = 0;
  let hits = 0;
  let misses = 0;
  let evictions = 0;
  const id = (key: string, size: number): string => `${size}:${key}`;

  const drop = (entry: Entry): void => {
    options.release(entry.bytes);
    evictions++;
    options.onEvict?.(entry.key);
  };
  const evictOne = (): boolean => {
    for (const [segment, isProtected] of [
      [probation, false],
      [protectedSet, true],
    ] as const) {
      const first = segment.entries().next();
      if (first.done === true) continue;
      const [k, entry] = first.value;
      segment.delete(k);
      if (isProtected) protectedBytes -= entry.bytes;
      else probationBytes -= entry.bytes;
      drop(entry);
      return true;
    }
    return false;
  };

  return {
    lookup(key, size) {
      const k = id(key, size);
      const inProtected = protectedSet.get(k);
      if (inProtected !== undefined) {
        protectedSet.delete(k);
        protectedSet.set(k, inProtected);
        hits++;
        return inProtected.metadata;
      }
      const entry = probation.get(k);
      if (entry === undefined) {
        misses++;
        return undefined;
      }
      hits++;
      probation.delete(k);
      probationBytes -= entry.bytes;
      protectedSet.set(k, entry);
      protectedBytes += entry.bytes;
      // Overflow of the protected segment goes back to probation's most recent end, not out of the cache.
      while (protectedBytes > protectedCap) {
        const first = protectedSet.entries().next();
        if (first.done === true) break;
        const [dk, demoted] = first.value;
        protectedSet.delete(dk);
        protectedBytes -= demoted.bytes;
        probation.set(dk, demoted);
        probationBytes += demoted.bytes;
      }
      return entry.metadata;
    },
    offer(key, size, metadata, bytes) {
      const k = id(key, size);
      if (probation.has(k) || protectedSet.has(k)) return true;
      const n = Math.ceil(bytes);
      if (!(n > 0) || n > capacity) return false;
      while (probationBytes + protectedBytes + n > capacity && evictOne());
      if (!options.reserve(n)) return false; // reserve before retain
      probation.set(k, { key, metadata, bytes: n });
      probationBytes += n;
      return true;
    },
    clear() {
      const released = probationBytes + protectedBytes;
      for (const segment of [probation, protectedSet]) {
        for (const entry of segment.values()) drop(entry);
        segment.clear();
      }
      probationBytes = 0;
      protectedBytes = 0;
      return released;
    },
    get heldBytes() {
      return probationBytes + protectedBytes;
    },
    stats() {
      return {
        heldBytes: probationBytes + protectedBytes,
        entries: probation.size + protectedSet.size,
        hits,
        misses,
        evictions,
      };
    },
  };
}
