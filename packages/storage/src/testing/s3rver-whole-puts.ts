/**
 * @module testing/s3rver-whole-puts
 * Gives s3rver 3.7 the whole-object PUT that S3 guarantees. s3rver writes an object's bytes in place with a
 * streaming write and then its metadata (ETag) as a second file, so two PUTs of one key that overlap interleave
 * their chunks and can leave one writer's bytes under the other's ETag — something real S3 never shows. The
 * object-store contract asserts S3's semantics (last writer wins, whole), so the emulator is made to provide them:
 * PUTs of one key run one after another; PUTs of different keys still run concurrently.
 */

/** The part of s3rver's filesystem store this wraps. */
interface S3rverStore {
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
}

/** Serializes s3rver's PUTs per key (see the module note). Call once, right after `new S3rver(...)`. */
export function makeS3rverPutsWhole(server: object): void {
  const store = (server as { store?: S3rverStore }).store;
  if (store === undefined || typeof store.putObject !== 'function') {
    throw new Error('s3rver has no filesystem store to wrap: its internals changed; update this helper');
  }
  const original = store.putObject.bind(store);
  const tails = new Map<string, Promise<unknown>>();
  store.putObject = (object) => {
    const id = `${object.bucket}\u0000${object.key}`;
    const previous = tails.get(id) ?? Promise.resolve();
    const run = previous.then(
      () => original(object),
      () => original(object),
    );
    const tail = run.catch(() => undefined);
    tails.set(id, tail);
    void tail.then(() => {
      if (tails.get(id) === tail) tails.delete(id);
    });
    return run;
  };
}
