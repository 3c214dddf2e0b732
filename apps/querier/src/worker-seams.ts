/**
 * @module worker-seams
 * Test seams of the query worker, set by a test-only worker script before it imports `query-worker.js`
 * (production never sets them): `createStore` builds the worker's bounded store (a test can put a fault-injecting
 * store under the retrying wrapper), and `wrapStore` wraps it, so a test can hold a scan at a read
 * deterministically instead of relying on timing.
 */
import type { ObjectStore, ObjectStoreHooks, StorageSettings } from '@sluice/storage';
import { createObjectStore } from '@sluice/storage';

/** Mutable seams; the defaults are production's. */
export const workerSeams: {
  createStore: (settings: StorageSettings, hooks: ObjectStoreHooks) => ObjectStore;
  wrapStore: (store: ObjectStore) => ObjectStore;
} = {
  createStore: (settings, hooks) => createObjectStore(settings, hooks),
  wrapStore: (store) => store,
};
