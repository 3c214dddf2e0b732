/**
 * @module object-store-settings
 * Plain-data object-store settings (structured-clone safe, so they can be posted to worker threads) and the
 * factory that builds the store they describe, its calls bounded by `createResilientObjectStore`. Shared by the
 * receiver's sink worker, the query workers and the compactor.
 */
import { isUuidV7FileName, parseDataKey } from './keys.js';
import { createLocalObjectStore } from './local-object-store.js';
import { createResilientObjectStore } from './resilient-object-store.js';
import type { ResiliencePolicy, ResilientObjectStore, StorageRetryEvent } from './resilient-object-store.js';
import { createS3ObjectStore } from './s3-object-store.js';

/**
 * Object-store settings: a local directory, or an S3 bucket (path-style when `forcePathStyle`), each with the
 * bounds of its calls (`storage.local.*` / `storage.s3.*` in the configuration).
 */
export type StorageSettings =
  | {
      readonly backend: 'local';
      readonly root: string;
      /** Longest one call may take, in ms; 0 = no bound. Local calls are never retried. */
      readonly requestTimeoutMs: number;
    }
  | {
      readonly backend: 's3';
      readonly bucket: string;
      readonly endpoint: string | null;
      readonly region: string;
      readonly prefix: string;
      readonly accessKeyId: string | null;
      readonly secretAccessKey: string | null;
      readonly forcePathStyle: boolean;
      /** Longest wait for a connection, in ms. */
      readonly connectTimeoutMs: number;
      /** Longest one attempt may take, send to last byte, in ms. */
      readonly requestTimeoutMs: number;
      /** Attempts of one call on transient failures. */
      readonly maxAttempts: number;
      /** Back-off cap before the second attempt, in ms (doubling, full jitter). */
      readonly retryBaseMs: number;
      /** Largest back-off, in ms. */
      readonly retryMaxMs: number;
    };

/** Callbacks of a store built by {@link createObjectStore} (functions cannot travel in the settings). */
export interface ObjectStoreHooks {
  /** Hears of every retry (the query worker uses it to tell storage trouble at a deadline). */
  readonly onRetry?: (event: StorageRetryEvent) => void;
  /** Local backend: keep read handles of data files open across range reads, at most this many (see `max_open_files`). */
  readonly maxOpenDataFiles?: number;
}

/**
 * The call bounds for `settings`. A local store gets one attempt: its calls fail for reasons a retry does not
 * fix, and on a hung NFS mount every retry would leave one more blocked thread-pool call behind.
 */
export function storageCallPolicy(settings: StorageSettings): ResiliencePolicy {
  if (settings.backend === 'local')
    return { requestTimeoutMs: settings.requestTimeoutMs, maxAttempts: 1, retryBaseMs: 0, retryMaxMs: 0 };
  return {
    requestTimeoutMs: settings.requestTimeoutMs,
    maxAttempts: settings.maxAttempts,
    retryBaseMs: settings.retryBaseMs,
    retryMaxMs: settings.retryMaxMs,
  };
}

/**
 * Creates the object store the settings describe, with every call bounded by {@link storageCallPolicy}. An S3
 * store keeps its `close()` (releases the client's sockets).
 */
export function createObjectStore(settings: StorageSettings, hooks?: ObjectStoreHooks): ResilientObjectStore {
  const policy = {
    ...storageCallPolicy(settings),
    ...(hooks?.onRetry !== undefined ? { onRetry: hooks.onRetry } : {}),
  };
  if (settings.backend === 'local')
    return createResilientObjectStore(
      createLocalObjectStore({
        root: settings.root,
        ...(hooks?.maxOpenDataFiles !== undefined
          ? // Data files have UUIDv7 names and are never rewritten in place (docs/design/storage-format.md).
            { readHandles: { maxOpen: hooks.maxOpenDataFiles, immutable: isImmutableDataKey } }
          : {}),
      }),
      policy,
    );
  const s3 = createS3ObjectStore({
    bucket: settings.bucket,
    ...(settings.endpoint !== null ? { endpoint: settings.endpoint } : {}),
    region: settings.region,
    prefix: settings.prefix,
    ...(settings.accessKeyId !== null ? { accessKeyId: settings.accessKeyId } : {}),
    ...(settings.secretAccessKey !== null ? { secretAccessKey: settings.secretAccessKey } : {}),
    forcePathStyle: settings.forcePathStyle,
    connectTimeoutMs: settings.connectTimeoutMs,
    requestTimeoutMs: settings.requestTimeoutMs,
  });
  return createResilientObjectStore(s3, policy);
}

/** A data file key with a UUIDv7 name: written once, never rewritten in place. */
function isImmutableDataKey(key: string): boolean {
  const parts = parseDataKey(key);
  return parts !== null && isUuidV7FileName(parts.file);
}

/** The `storage` section of the configuration, structurally (so this package needs no config import). */
export interface StorageSection {
  readonly backend: 'local' | 's3';
  readonly local: { readonly root: string; readonly requestTimeoutMs: number };
  readonly s3: {
    readonly bucket: string | null;
    readonly endpoint: string | null;
    readonly region: string;
    readonly prefix: string;
    readonly accessKeyId: string | null;
    readonly secretAccessKey: string | null;
    readonly forcePathStyle: boolean;
    readonly connectTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly maxAttempts: number;
    readonly retryBaseMs: number;
    readonly retryMaxMs: number;
  };
}

/** Plain-data settings from the configuration's `storage` section. */
export function storageSettingsFrom(storage: StorageSection): StorageSettings {
  if (storage.backend === 'local')
    return { backend: 'local', root: storage.local.root, requestTimeoutMs: storage.local.requestTimeoutMs };
  const s3 = storage.s3;
  return {
    backend: 's3',
    bucket: s3.bucket ?? '',
    endpoint: s3.endpoint,
    region: s3.region,
    prefix: s3.prefix,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: s3.forcePathStyle,
    connectTimeoutMs: s3.connectTimeoutMs,
    requestTimeoutMs: s3.requestTimeoutMs,
    maxAttempts: s3.maxAttempts,
    retryBaseMs: s3.retryBaseMs,
    retryMaxMs: s3.retryMaxMs,
  };
}
