/**
 * @module s3-object-store
 * {@link ObjectStore} over an S3 bucket (AWS or an S3-protocol server such as s3rver). Every key is stored under
 * the configured prefix, which listings strip again. A put is one PutObject (S3 publishes whole objects only).
 * Conditional puts send `If-None-Match: *` / `If-Match: <etag>`; 412 PreconditionFailed, 409
 * ConditionalRequestConflict (a concurrent conditional write won) and, for `If-Match`, 404 (no such key) map to
 * `{status:'conflict'}`. s3rver ignores both headers (tests wrap it in `createCasEnforcingStore`).
 *
 * The client makes one attempt per call (`maxAttempts: 1`): retries belong to `createResilientObjectStore`, which
 * `createObjectStore` wraps around this store, so attempts are never multiplied. The HTTP handler still bounds the
 * connect and the wait for the answer's headers; a body shorter than announced is a {@link TruncatedBodyError}.
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
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
import { ObjectNotFoundError, TruncatedBodyError, assertRange, assertValidKey, compareKeys } from './object-store.js';

/** Options for {@link createS3ObjectStore} (mirrors the `storage.s3` config block). */
export interface S3ObjectStoreOptions {
  readonly bucket: string;
  /** Custom endpoint URL (S3-compatible servers); unset for AWS. */
  readonly endpoint?: string;
  readonly region: string;
  /** Prepended to every key (`''` for none); a missing trailing `/` is added. */
  readonly prefix: string;
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  readonly forcePathStyle: boolean;
  /** Keys per ListObjectsV2 page (1..1000, default 1000). */
  readonly listPageSize?: number;
  /** Longest wait for a connection, in ms (default 3,000; 0 = none). */
  readonly connectTimeoutMs?: number;
  /** Longest wait from sending a request to its answer's headers, in ms (default 10,000; 0 = none). */
  readonly requestTimeoutMs?: number;
}

/** An S3-backed store; `client` is exposed so callers can add SDK middleware (metrics, tests). */
export interface S3ObjectStore extends ObjectStore {
  readonly client: S3Client;
  /** Releases the client's sockets. */
  close(): void;
}

function httpStatus(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null || !('$metadata' in e)) return undefined;
  const meta = e.$metadata;
  return typeof meta === 'object' &&
    meta !== null &&
    'httpStatusCode' in meta &&
    typeof meta.httpStatusCode === 'number'
    ? meta.httpStatusCode
    : undefined;
}

function isNotFound(e: unknown): boolean {
  const name = e instanceof Error ? e.name : '';
  return name === 'NoSuchKey' || name === 'NotFound' || httpStatus(e) === 404;
}

/** The server refused a conditional write: the precondition failed or a concurrent conditional write won. */
function isConditionConflict(e: unknown): boolean {
  const name = e instanceof Error ? e.name : '';
  const status = httpStatus(e);
  return name === 'PreconditionFailed' || name === 'ConditionalRequestConflict' || status === 412 || status === 409;
}

/** Per-call SDK options carrying the caller's signal. */
function sendOptions(opts: CallOptions | undefined): { abortSignal?: AbortSignal } {
  return opts?.signal !== undefined ? { abortSignal: opts.signal } : {};
}

/** Throws {@link TruncatedBodyError} when a whole-object answer holds fewer bytes than its Content-Length. */
function assertWholeBody(key: string, bytes: Uint8Array, contentLength: number | undefined): void {
  if (contentLength !== undefined && bytes.byteLength < contentLength)
    throw new TruncatedBodyError(key, contentLength, bytes.byteLength);
}

function normalizePrefix(prefix: string): string {
  const p = prefix.replace(/^\/+/, '');
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

class S3Store implements S3ObjectStore {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly pageSize: number;

  constructor(o: S3ObjectStoreOptions) {
    this.bucket = o.bucket;
    this.prefix = normalizePrefix(o.prefix);
    this.pageSize = Math.max(1, Math.min(1000, o.listPageSize ?? 1000));
    this.client = new S3Client({
      region: o.region,
      forcePathStyle: o.forcePathStyle,
      ...(o.endpoint !== undefined ? { endpoint: o.endpoint } : {}),
      ...(o.accessKeyId !== undefined && o.secretAccessKey !== undefined
        ? { credentials: { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey } }
        : {}),
      // S3-compatible servers often reject the SDK's default flexible checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // The resilient wrapper owns retries; SDK retries inside it would multiply attempts and outlast its timeout.
      maxAttempts: 1,
      requestHandler: new NodeHttpHandler({
        connectionTimeout: o.connectTimeoutMs ?? 3_000,
        requestTimeout: o.requestTimeoutMs ?? 10_000,
        // Without it a request over its timeout only logs a warning and keeps waiting.
        throwOnRequestTimeout: true,
      }),
    });
  }

  private full(key: string): string {
    assertValidKey(key);
    return this.prefix + key;
  }

  close(): void {
    this.client.destroy();
  }

  async put(key: string, bytes: Uint8Array, opts?: PutOptions): Promise<void> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key, Body: bytes, ContentLength: bytes.byteLength }),
      opts?.signal !== undefined ? { abortSignal: opts.signal } : {},
    );
  }

  async putConditional(
    key: string,
    bytes: Uint8Array,
    condition: PutCondition,
    opts?: PutOptions,
  ): Promise<ConditionalPutResult> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    const ifMatch = 'ifMatch' in condition;
    try {
      const res = await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key,
          Body: bytes,
          ContentLength: bytes.byteLength,
          ...(ifMatch ? { IfMatch: condition.ifMatch } : { IfNoneMatch: '*' }),
        }),
        opts?.signal !== undefined ? { abortSignal: opts.signal } : {},
      );
      if (res.ETag === undefined) throw new Error(`conditional PUT of ${key} returned no ETag`);
      return { status: 'ok', etag: res.ETag };
    } catch (e) {
      if (isConditionConflict(e) || (ifMatch && isNotFound(e))) return { status: 'conflict' };
      throw e;
    }
  }

  async getVersioned(key: string, opts?: CallOptions): Promise<VersionedObject | null> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }), sendOptions(opts));
      if (res.ETag === undefined) throw new Error(`GET of ${key} returned no ETag`);
      const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
      assertWholeBody(key, bytes, res.ContentLength);
      return { bytes, etag: res.ETag };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async get(key: string, opts?: CallOptions): Promise<Uint8Array | null> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key }), sendOptions(opts));
      const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
      assertWholeBody(key, bytes, res.ContentLength);
      return bytes;
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async getRange(key: string, start: number, endExclusive: number, opts?: CallOptions): Promise<Uint8Array> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    if (endExclusive === start) {
      // HTTP has no empty range: check existence and bounds with a HEAD.
      const h = await this.head(key, opts);
      if (h === null) throw new ObjectNotFoundError(key);
      assertRange(start, endExclusive, h.size);
      return new Uint8Array(0);
    }
    assertRange(start, endExclusive, Number.MAX_SAFE_INTEGER);
    let res;
    try {
      res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key, Range: `bytes=${start}-${endExclusive - 1}` }),
        sendOptions(opts),
      );
    } catch (e) {
      if (isNotFound(e)) throw new ObjectNotFoundError(key);
      if (httpStatus(e) === 416) {
        const h = await this.head(key, opts);
        if (h === null) throw new ObjectNotFoundError(key);
        assertRange(start, endExclusive, h.size);
      }
      throw e;
    }
    const cr = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(res.ContentRange ?? '');
    if (cr === null) throw new Error(`range GET of ${key} returned no Content-Range`);
    assertRange(start, endExclusive, Number(cr[3]));
    let bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
    if (Number(cr[1]) === start && bytes.byteLength > endExclusive - start) {
      // s3rver 3.7 reads `bytes=0-0` as "from 0 to the end"; keep the requested prefix.
      bytes = bytes.subarray(0, endExclusive - start);
    }
    if (Number(cr[1]) !== start) throw new Error(`range GET of ${key} answered a different range`);
    // The range lies within the object (checked above), so fewer bytes means the answer was cut short.
    if (bytes.byteLength < endExclusive - start)
      throw new TruncatedBodyError(key, endExclusive - start, bytes.byteLength);
    return bytes;
  }

  async head(key: string, opts?: CallOptions): Promise<ObjectHead | null> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }), sendOptions(opts));
      return { size: res.ContentLength ?? 0, ...(res.ETag !== undefined ? { etag: res.ETag } : {}) };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async delete(key: string, opts?: CallOptions): Promise<void> {
    const Key = this.full(key);
    opts?.signal?.throwIfAborted();
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }), sendOptions(opts));
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
  }

  list(options: ListOptions): AsyncIterable<ListEntry> {
    return { [Symbol.asyncIterator]: () => this.pages(options) };
  }

  private async *pages(options: ListOptions): AsyncGenerator<ListEntry> {
    const { signal } = options;
    const strip = this.prefix.length;
    let token: string | undefined;
    let first = true;
    while (first || token !== undefined) {
      signal?.throwIfAborted();
      const res = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + options.prefix,
          MaxKeys: this.pageSize,
          ...(options.delimiter !== undefined && options.delimiter !== '' ? { Delimiter: options.delimiter } : {}),
          ...(first && options.startAfter !== undefined ? { StartAfter: this.prefix + options.startAfter } : {}),
          ...(token !== undefined ? { ContinuationToken: token } : {}),
        }),
        signal !== undefined ? { abortSignal: signal } : {},
      );
      first = false;
      // A page holds objects and common prefixes as two sorted lists; merge them back into key order.
      const objects: ListEntry[] = (res.Contents ?? []).flatMap((o) =>
        o.Key === undefined ? [] : [{ kind: 'object' as const, key: o.Key.slice(strip), size: o.Size ?? 0 }],
      );
      const prefixes: ListEntry[] = (res.CommonPrefixes ?? []).flatMap((p) =>
        p.Prefix === undefined ? [] : [{ kind: 'prefix' as const, prefix: p.Prefix.slice(strip) }],
      );
      let i = 0;
      let j = 0;
      while (i < objects.length || j < prefixes.length) {
        const o = objects[i];
        const p = prefixes[j];
        if (o !== undefined && (p === undefined || compareKeys(entryKey(o), entryKey(p)) < 0)) {
          i++;
          yield o;
        } else if (p !== undefined) {
          j++;
          yield p;
        }
      }
      token = res.IsTruncated === true ? res.NextContinuationToken : undefined;
    }
  }
}

function entryKey(e: ListEntry): string {
  return e.kind === 'object' ? e.key : e.prefix;
}

/**
 * An {@link ObjectStore} over an S3 bucket.
 *
 * @example
 * const store = createS3ObjectStore({ bucket: 'logs', region: 'us-east-1', prefix: 'sluice/', forcePathStyle: false });
 */
export function createS3ObjectStore(options: S3ObjectStoreOptions): S3ObjectStore {
  return new S3Store(options);
}
