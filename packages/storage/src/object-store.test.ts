/**
 * @module object-store.test
 * Runs the object-store contract against the local directory store and against S3 (s3rver on 127.0.0.1), plus
 * backend-specific checks (tmp files, abort, prefix handling).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createLocalObjectStore } from './local-object-store.js';
import type { ListEntry, ObjectStore } from './object-store.js';
import { createS3ObjectStore } from './s3-object-store.js';
import type { S3ObjectStore } from './s3-object-store.js';
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

runObjectStoreContract('S3 (s3rver)', async () => {
  const s3 = await startS3rver();
  const store = s3Store(s3, 'contract');
  return {
    store,
    listRequests: countLists(store),
    pageSize: 1000,
    async cleanup() {
      store.close();
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
