/**
 * @module object-store.test
 * Runs the object-store contract against the local directory store and against S3 (s3rver on 127.0.0.1), plus
 * backend-specific checks (tmp files, abort, prefix handling). The S3 store makes one attempt per call and s3rver
 * now and then answers concurrent PUTs of one key with a 500, so its runs go through `createResilientObjectStore`,
 * as every production store does (`createObjectStore`).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createLocalObjectStore } from './local-object-store.js';
import type { ListEntry, ObjectStore } from './object-store.js';
import { createResilientObjectStore } from './resilient-object-store.js';
import { createS3ObjectStore } from './s3-object-store.js';
import type { S3ObjectStore } from './s3-object-store.js';
import { createCasEnforcingStore } from './testing/cas-enforcing-store.js';
import { runObjectStoreContract } from './testing/object-store-contract.js';
import { startS3rver } from './testing/s3rver-harness.js';
import type { S3rverHandle } from './testing/s3rver-harness.js';

async function collect(store: ObjectStore, prefix: string, delimiter?: string): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const e of store.list({ prefix, ...(delimiter !== undefined ? { delimiter } : {}) })) out.push(e);
  return out;
}

function s3Store(s3: S3rverHandle, prefix: string): S3ObjectStore {
  return createS3ObjectStore({
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    prefix,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
  });
}

/**
 * Retries what s3rver gets wrong under concurrency: while PUTs of one key race, its PUTs and listings may answer
 * 500 for as long as the writes take, so the window covered (up to ~3 s of back-off) is wider than production's.
 */
function bounded(store: ObjectStore): ObjectStore {
  return createResilientObjectStore(store, {
    requestTimeoutMs: 30_000,
    maxAttempts: 6,
    retryBaseMs: 100,
    retryMaxMs: 1_000,
  });
}

/** Counts ListObjectsV2 requests through an SDK middleware. */
function countLists(store: S3ObjectStore): () => number {
  let n = 0;
  store.client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'ListObjectsV2Command') n++;
      return next(args);
    },
    { step: 'initialize', name: 'sluiceCountLists' },
  );
  return () => n;
}

runObjectStoreContract('local directory', async () => {
  const root = await mkdtemp(join(tmpdir(), 'sluice-local-store-'));
  return {
    store: createLocalObjectStore({ root }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

runObjectStoreContract('S3 (s3rver) behind createResilientObjectStore', async () => {
  const s3 = await startS3rver();
  const store = s3Store(s3, 'contract');
  return {
    store: bounded(store),
    listRequests: countLists(store),
    pageSize: 1000,
    enforcesConditionalWrites: false,
    async cleanup() {
      store.close();
      await s3.close();
    },
  };
});

runObjectStoreContract('S3 (s3rver) behind createCasEnforcingStore and createResilientObjectStore', async () => {
  const s3 = await startS3rver();
  const inner = s3Store(s3, 'cas');
  return {
    store: bounded(createCasEnforcingStore(inner)),
    listRequests: countLists(inner),
    pageSize: 1000,
    async cleanup() {
      inner.close();
      await s3.close();
    },
  };
});

describe('local object store specifics', () => {
  let root: string;
  let store: ObjectStore;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-local-'));
    store = createLocalObjectStore({ root });
  });
  after(() => rm(root, { recursive: true, force: true }));

  test('a leftover <key>.tmp-<random> file (crashed writer) is neither listed nor readable as an object', async () => {
    await store.put('p/a.parquet', new Uint8Array([1]));
    await writeFile(join(root, 'p', 'b.parquet.tmp-deadbeef'), new Uint8Array([2, 3]));
    assert.deepEqual(await collect(store, 'p/'), [{ kind: 'object', key: 'p/a.parquet', size: 1 }]);
  });

  test('put leaves no temporary file behind, and an aborted put publishes nothing', async () => {
    await store.put('q/x', new Uint8Array(10));
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(store.put('q/y', new Uint8Array(10), { signal: ac.signal }), { name: 'AbortError' });
    assert.deepEqual(await readdir(join(root, 'q')), ['x']);
    assert.equal(await store.get('q/y'), null);
  });

  test('keys sort by UTF-8 bytes across directory boundaries (`a.txt` < `a/…` < `a0`, `z` < `é`)', async () => {
    for (const k of ['o/a/b', 'o/a.txt', 'o/a0', 'o/é', 'o/z', 'o/a/c/d']) await store.put(k, new Uint8Array(1));
    const keys = (await collect(store, 'o/')).map((e) => (e.kind === 'object' ? e.key : e.prefix));
    assert.deepEqual(keys, ['o/a.txt', 'o/a/b', 'o/a/c/d', 'o/a0', 'o/z', 'o/é']);
    const rolled = (await collect(store, 'o/', '/')).map((e) => (e.kind === 'object' ? e.key : `[${e.prefix}]`));
    assert.deepEqual(rolled, ['o/a.txt', '[o/a/]', 'o/a0', 'o/z', 'o/é']);
    const deep = (await collect(store, '', '/')).map((e) => (e.kind === 'object' ? e.key : `[${e.prefix}]`));
    assert.ok(deep.includes('[o/]'), 'a prefix with objects only in deeper directories is still rolled up');
  });

  test('ifMatch writers in separate store instances (as in separate processes) are serialised by the lock file', async () => {
    const instances = Array.from({ length: 6 }, () => createLocalObjectStore({ root }));
    await store.put('lock/m', new Uint8Array([0]));
    const base = await store.getVersioned('lock/m');
    const results = await Promise.all(
      instances.map((s, i) => s.putConditional('lock/m', new Uint8Array([i + 1]), { ifMatch: base?.etag ?? '' })),
    );
    const winners = results.flatMap((r, i) => (r.status === 'ok' ? [i] : []));
    assert.equal(winners.length, 1);
    assert.deepEqual(await store.get('lock/m'), new Uint8Array([winners[0]! + 1]));
    assert.deepEqual(await readdir(join(root, 'lock')), ['m'], 'no lock or tmp file is left behind');
  });

  test('a held ifMatch lock makes the writer wait; an abandoned (stale) lock is broken', async () => {
    const short = createLocalObjectStore({ root, casLockStaleMs: 60_000, casLockTimeoutMs: 50 });
    await store.put('lock/held', new Uint8Array([1]));
    const v = await store.getVersioned('lock/held');
    const lockPath = join(root, 'lock', 'held.tmp-cas-lock');
    await writeFile(lockPath, '');
    await assert.rejects(
      short.putConditional('lock/held', new Uint8Array([2]), { ifMatch: v?.etag ?? '' }),
      /timed out/,
    );
    assert.deepEqual(await store.get('lock/held'), new Uint8Array([1]), 'nothing published while the lock is held');
    const breaker = createLocalObjectStore({ root, casLockStaleMs: 0, casLockTimeoutMs: 5_000 });
    await new Promise((r) => setTimeout(r, 5));
    const r = await breaker.putConditional('lock/held', new Uint8Array([3]), { ifMatch: v?.etag ?? '' });
    assert.equal(r.status, 'ok');
    assert.deepEqual(await store.get('lock/held'), new Uint8Array([3]));
  });

  test('an empty directory (e.g. left by a crash) is not listed as a common prefix', async () => {
    await mkdir(join(root, 'r', 'empty'), { recursive: true });
    await store.put('r/file', new Uint8Array(1));
    assert.deepEqual(await collect(store, 'r/', '/'), [{ kind: 'object', key: 'r/file', size: 1 }]);
  });
});

describe('S3 object store specifics', () => {
  let s3: S3rverHandle;
  before(async () => {
    s3 = await startS3rver();
  });
  after(() => s3.close());

  test('the configured prefix is prepended on write and stripped from listed keys', async () => {
    const scoped = s3Store(s3, 'tenant-root');
    const raw = s3Store(s3, '');
    try {
      await scoped.put('data/x.parquet', new Uint8Array([7, 8, 9]));
      assert.deepEqual(await raw.get('tenant-root/data/x.parquet'), new Uint8Array([7, 8, 9]));
      assert.deepEqual(await collect(scoped, 'data/'), [{ kind: 'object', key: 'data/x.parquet', size: 3 }]);
      assert.deepEqual(await collect(scoped, '', '/'), [{ kind: 'prefix', prefix: 'data/' }]);
      assert.deepEqual(await collect(raw, 'tenant-root/', '/'), [{ kind: 'prefix', prefix: 'tenant-root/data/' }]);
      const h = await scoped.head('data/x.parquet');
      assert.equal(h?.size, 3);
      assert.ok(typeof h?.etag === 'string' && h.etag.length > 0, 'S3 reports an ETag');
    } finally {
      scoped.close();
      raw.close();
    }
  });
});
