/**
 * @module byte-range-source
 * A random-access view of one stored file: the only way the reader touches data-file bytes. Backed by range
 * GETs on an {@link ObjectStore} (S3 `Range:` requests, local positioned reads) or, in tests, by bytes in memory.
 */
import type { ObjectStore } from './object-store.js';
import { assertRange } from './object-store.js';

/** A file of known length that can be read by byte range. */
export interface ByteRangeSource {
  readonly byteLength: number;
  /** Bytes `[start, endExclusive)`. */
  read(start: number, endExclusive: number): Promise<Uint8Array>;
}

/**
 * A source over `key` in `store`, whose size the caller already knows (from a listing or `head`). Every read
 * passes `signal` on, so a query's storage waits end at its deadline instead of outliving it.
 */
export function sourceFromStore(store: ObjectStore, key: string, size: number, signal?: AbortSignal): ByteRangeSource {
  const opts = signal !== undefined ? { signal } : undefined;
  return {
    byteLength: size,
    read: (start, endExclusive) => store.getRange(key, start, endExclusive, opts),
  };
}

/** A source over bytes already in memory (tests, freshly encoded files). */
export function sourceFromBytes(bytes: Uint8Array): ByteRangeSource {
  return {
    byteLength: bytes.byteLength,
    read: (start, endExclusive) => {
      assertRange(start, endExclusive, bytes.byteLength);
      return Promise.resolve(bytes.slice(start, endExclusive));
    },
  };
}

/** A source wrapper that counts requests and bytes (what the reader reports as `bytesRead`). */
export interface CountingSource extends ByteRangeSource {
  readonly bytesRead: number;
  readonly requests: number;
}

/** Wraps `source` so every read is counted. */
export function countingSource(source: ByteRangeSource): CountingSource {
  let bytesRead = 0;
  let requests = 0;
  return {
    byteLength: source.byteLength,
    get bytesRead() {
      return bytesRead;
    },
    get requests() {
      return requests;
    },
    async read(start, endExclusive) {
      requests++;
      const out = await source.read(start, endExclusive);
      bytesRead += out.byteLength;
      return out;
    },
  };
}
