/**
 * @module testing/cas-enforcing-store
 * An {@link ObjectStore} wrapper that enforces `putConditional` preconditions in-process. s3rver (the only local
 * S3 on Node 20) accepts `If-None-Match`/`If-Match` and ignores them, so compare-and-swap code is tested against
 * s3rver through this wrapper: per key, a mutex serialises conditional writes, plain puts and deletes issued
 * through the wrapper, and the precondition is checked with `head` before the inner write.
 * Only writers sharing one wrapper instance are serialised (tests create one wrapper per store and share it).
 */
import { KeyedMutex } from '../keyed-mutex.js';
import type { ConditionalPutResult, ObjectStore } from '../object-store.js';

/**
 * Wraps `inner` so that conditional writes made through the result honour their preconditions even when the
 * backend ignores them. Reads and listings pass straight through.
 *
 * @example
 * const store = createCasEnforcingStore(createS3ObjectStore({ ...s3rverOptions }));
 * await store.putConditional('k', bytes, { ifNoneMatch: '*' }); // { status: 'ok', etag }
 * await store.putConditional('k', bytes, { ifNoneMatch: '*' }); // { status: 'conflict' }
 */
export function createCasEnforcingStore(inner: ObjectStore): ObjectStore {
  const mutex = new KeyedMutex();
  return {
    put: (key, bytes, opts) => mutex.run(key, () => inner.put(key, bytes, opts)),
    putConditional: (key, bytes, condition, opts) =>
      mutex.run(key, async (): Promise<ConditionalPutResult> => {
        const current = await inner.head(key, opts);
        const holds =
          'ifMatch' in condition ? current !== null && current.etag === condition.ifMatch : current === null;
        if (!holds) return { status: 'conflict' };
        return inner.putConditional(key, bytes, condition, opts);
      }),
    get: (key, opts) => inner.get(key, opts),
    getVersioned: (key, opts) => inner.getVersioned(key, opts),
    getRange: (key, start, endExclusive, opts) => inner.getRange(key, start, endExclusive, opts),
    head: (key, opts) => inner.head(key, opts),
    list: (options) => inner.list(options),
    delete: (key, opts) => mutex.run(key, () => inner.delete(key, opts)),
  };
}
