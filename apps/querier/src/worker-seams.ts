/**
 * @module worker-seams
 * Test seams of the query worker, set by a test-only worker script before it imports `query-worker.js`
 * (production never sets them): `wrapStore` wraps the worker's object store, so a test can hold a scan at a
 * read deterministically instead of relying on timing.
 */
import type { ObjectStore } from '@sluice/storage';

/** Mutable seams; the defaults are the identity. */
export const workerSeams: { wrapStore: (store: ObjectStore) => ObjectStore } = {
  wrapStore: (store) => store,
};
