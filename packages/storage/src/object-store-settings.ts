/**
 * @module object-store-settings
 * Plain-data object-store settings (structured-clone safe, so they can be posted to worker threads) and the
 * factory that builds the store they describe. Shared by the receiver's sink worker and the query workers.
 */
import { createLocalObjectStore } from './local-object-store.js';
import type { ObjectStore } from './object-store.js';
import { createS3ObjectStore } from './s3-object-store.js';

/** Object-store settings: a local directory, or an S3 bucket (path-style when `forcePathStyle`). */
export type StorageSettings =
  | { readonly backend: 'local'; readonly root: string }
  | {
      readonly backend: 's3';
      readonly bucket: string;
      readonly endpoint: string | null;
      readonly region: string;
      readonly prefix: string;
      readonly accessKeyId: string | null;
      readonly secretAccessKey: string | null;
      readonly forcePathStyle: boolean;
    };

/** Creates the object store the settings describe. */
export function createObjectStore(settings: StorageSettings): ObjectStore {
  if (settings.backend === 'local') return createLocalObjectStore({ root: settings.root });
  return createS3ObjectStore({
    bucket: settings.bucket,
    ...(settings.endpoint !== null ? { endpoint: settings.endpoint } : {}),
    region: settings.region,
    prefix: settings.prefix,
    ...(settings.accessKeyId !== null ? { accessKeyId: settings.accessKeyId } : {}),
    ...(settings.secretAccessKey !== null ? { secretAccessKey: settings.secretAccessKey } : {}),
    forcePathStyle: settings.forcePathStyle,
  });
}

/** The `storage` section of the configuration, structurally (so this package needs no config import). */
export interface StorageSection {
  readonly backend: 'local' | 's3';
  readonly local: { readonly root: string };
  readonly s3: {
    readonly bucket: string | null;
    readonly endpoint: string | null;
    readonly region: string;
    readonly prefix: string;
    readonly accessKeyId: string | null;
    readonly secretAccessKey: string | null;
    readonly forcePathStyle: boolean;
  };
}

/** Plain-data settings from the configuration's `storage` section. */
export function storageSettingsFrom(storage: StorageSection): StorageSettings {
  if (storage.backend === 'local') return { backend: 'local', root: storage.local.root };
  return {
    backend: 's3',
    bucket: storage.s3.bucket ?? '',
    endpoint: storage.s3.endpoint,
    region: storage.s3.region,
    prefix: storage.s3.prefix,
    accessKeyId: storage.s3.accessKeyId,
    secretAccessKey: storage.s3.secretAccessKey,
    forcePathStyle: storage.s3.forcePathStyle,
  };
}
