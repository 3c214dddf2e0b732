/**
 * @module object-store-factory
 * Builds the configured object store (local directory or S3) from plain settings.
 */
import { createLocalObjectStore, createS3ObjectStore, type ObjectStore } from '@sluice/storage';
import type { StorageSettings } from './sink-protocol.js';

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
