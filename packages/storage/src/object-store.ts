/**
 * @module object-store
 * The one object-store interface every storage consumer uses. Two implementations (local directory, S3) behave
 * identically; the shared contract suite in `testing/object-store-contract.ts` proves it.
 */

/** One entry of a listing: an object (with its size) or, when a delimiter is given, a common prefix. */
export type ListEntry =
  | { readonly kind: 'object'; readonly key: string; readonly size: number }
  | { readonly kind: 'prefix'; readonly prefix: string };

/** Options for {@link ObjectStore.list}. */
export interface ListOptions {
  /** Only keys starting with this string (may be `''`). */
  readonly prefix: string;
  /** Roll keys up to the first occurrence of this string after the prefix (normally `'/'`). */
  readonly delimiter?: string;
  /** Only keys (and prefixes) strictly greater than this one. */
  readonly startAfter?: string;
  /** Aborting stops the listing with an `AbortError` before the next page is fetched. */
  readonly signal?: AbortSignal;
}

/** Options for {@link ObjectStore.put}. */
export interface PutOptions {
  readonly signal?: AbortSignal;
}

/**
 * Options of one read or delete ({@link ObjectStore.get}, `getVersioned`, `getRange`, `head`, `delete`).
 * Aborting `signal` makes the call reject with the signal's reason as soon as the backend lets go (S3: the request
 * is cancelled; local: between and, where the file system allows it, during its file-system calls).
 */
export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** Result of {@link ObjectStore.head}. */
export interface ObjectHead {
  readonly size: number;
  /** Opaque version tag (S3 ETag; local: inode, mtime and size). Both built-in stores always set it. */
  readonly etag?: string;
}

/** An object's bytes together with the ETag of exactly those bytes (result of {@link ObjectStore.getVersioned}). */
export interface VersionedObject {
  readonly bytes: Uint8Array;
  readonly etag: string;
}

/**
 * Precondition of {@link ObjectStore.putConditional}: `{ ifNoneMatch: '*' }` publishes only if the key does not
 * exist; `{ ifMatch: etag }` only if the key exists and its current ETag equals `etag`.
 */
export type PutCondition = { readonly ifNoneMatch: '*' } | { readonly ifMatch: string };

/** Outcome of {@link ObjectStore.putConditional}: published (with the new ETag), or the precondition failed. */
export type ConditionalPutResult = { readonly status: 'ok'; readonly etag: string } | { readonly status: 'conflict' };

/**
 * A flat key → bytes store. Keys use `/` as separator, never start with `/` and contain no `.`/`..` segments.
 *
 * Invariants shared by every implementation:
 * - `put` publishes atomically: a reader sees either no object or the whole new object.
 * - `list` is lexicographic (by UTF-8 bytes / code points) and streamed page by page: breaking out of the
 *   `for await` stops further page fetches.
 * - `getRange` is the only read used on data files; `get` is for small objects (manifests, footers in tests).
 */
export interface ObjectStore {
  /** Atomically publishes `bytes` under `key` (overwriting). */
  put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<void>;
  /**
   * Compare-and-swap publish: like {@link ObjectStore.put}, but only when `condition` holds at the instant of
   * publishing; otherwise nothing changes and the result is `{status:'conflict'}` (a lost race is a value, not an
   * error). Of several concurrent conditional writers holding the same precondition, at most one gets `ok`.
   * Guarantees hold between conditional writers; a plain `put`/`delete` racing a conditional write of the same
   * key is not ordered by the local store (see its module doc). s3rver ignores the conditions entirely: tests
   * wrap it in `createCasEnforcingStore` (`@sluice/storage/testing`).
   */
  putConditional(
    key: string,
    bytes: Uint8Array,
    condition: PutCondition,
    opts?: PutOptions,
  ): Promise<ConditionalPutResult>;
  /** The whole object, or `null` when it does not exist. */
  get(key: string, opts?: CallOptions): Promise<Uint8Array | null>;
  /** The whole object and the ETag of exactly those bytes (read in one request / from one open file), or `null`. */
  getVersioned(key: string, opts?: CallOptions): Promise<VersionedObject | null>;
  /**
   * Bytes `[start, endExclusive)` of an existing object. Throws {@link ObjectNotFoundError} if the key does not
   * exist, `RangeError` if the range is not within the object and {@link TruncatedBodyError} if the backend
   * answered with fewer bytes than the range holds.
   */
  getRange(key: string, start: number, endExclusive: number, opts?: CallOptions): Promise<Uint8Array>;
  /** Size (and ETag where the backend has one), or `null` when the object does not exist. */
  head(key: string, opts?: CallOptions): Promise<ObjectHead | null>;
  /** Streams entries in lexicographic order, fetching lazily. */
  list(options: ListOptions): AsyncIterable<ListEntry>;
  /** Removes the object; deleting a missing key is not an error. */
  delete(key: string, opts?: CallOptions): Promise<void>;
}

/** Thrown by {@link ObjectStore.getRange} when the key does not exist. */
export class ObjectNotFoundError extends Error {
  override readonly name = 'ObjectNotFoundError';
  constructor(readonly key: string) {
    super(`object not found: ${key}`);
  }
}

/**
 * Thrown when an answer's body is shorter than the server announced (Content-Length) or than the range asked
 * for: the connection ended early. Unlike a `RangeError` (a range outside the object) it is worth trying again.
 */
export class TruncatedBodyError extends Error {
  override readonly name = 'TruncatedBodyError';
  constructor(
    readonly key: string,
    /** Bytes announced or asked for. */
    readonly expectedBytes: number,
    /** Bytes received. */
    readonly receivedBytes: number,
  ) {
    super(`truncated answer for ${key}: ${receivedBytes} of ${expectedBytes} bytes`);
  }
}

/** Thrown when a key is not a valid store key (empty, absolute, empty/`.`/`..` segments, NUL, backslash, `.tmp-`). */
export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError';
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`invalid object key ${JSON.stringify(key)}: ${reason}`);
  }
}

/** Marker of in-flight local writes (`<key>.tmp-<random>`); reserved in keys and ignored by listings. */
export const TMP_MARKER = '.tmp-';

/** Validates an object key; throws {@link InvalidKeyError}. */
export function assertValidKey(key: string): void {
  if (key.length === 0) throw new InvalidKeyError(key, 'empty');
  if (key.startsWith('/')) throw new InvalidKeyError(key, 'absolute');
  if (key.endsWith('/')) throw new InvalidKeyError(key, 'ends with /');
  if (key.includes('\0')) throw new InvalidKeyError(key, 'contains NUL');
  if (key.includes('\\')) throw new InvalidKeyError(key, 'contains a backslash');
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..')
      throw new InvalidKeyError(key, `bad segment ${JSON.stringify(segment)}`);
    if (segment.includes(TMP_MARKER))
      throw new InvalidKeyError(key, `segment contains the reserved ${JSON.stringify(TMP_MARKER)}`);
  }
}

/** Validates a `[start, endExclusive)` range against an object size; throws `RangeError`. */
export function assertRange(start: number, endExclusive: number, size: number): void {
  if (
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(endExclusive) ||
    start < 0 ||
    endExclusive < start ||
    endExclusive > size
  ) {
    throw new RangeError(`range [${start}, ${endExclusive}) is outside an object of ${size} bytes`);
  }
}

/** Compares two strings by Unicode code point (= UTF-8 byte order), the order S3 lists in. */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF and must sort after 0xE000–0xFFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
