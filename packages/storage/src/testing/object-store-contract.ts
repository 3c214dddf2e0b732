/**
 * @module testing/object-store-contract
 * The behavioural contract every {@link ObjectStore} implementation must pass (run against the local store and
 * against S3 via s3rver). Registers `node:test` tests when called.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { ListEntry, ListOptions, ObjectStore } from '../object-store.js';
import { InvalidKeyError, ObjectNotFoundError } from '../object-store.js';

/** What a contract run needs from an implementation. */
export interface ContractSubject {
  readonly store: ObjectStore;
  /** Listing page requests made so far (S3: ListObjectsV2 calls), when the backend pages. */
  readonly listRequests?: () => number;
  /** Keys per listing page, when the backend pages. */
  readonly pageSize?: number;
  /** Releases everything the subject holds. */
  cleanup(): Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

async function collect(store: ObjectStore, options: ListOptions): Promise<ListEntry[]> {
  const out: ListEntry[] = [];
  for await (const e of store.list(options)) out.push(e);
  return out;
}

function names(entries: readonly ListEntry[]): string[] {
  return entries.map((e) => (e.kind === 'object' ? e.key : `[${e.prefix}]`));
}

/** Number of keys the pagination test creates. */
export const MANY_KEYS = 1100;

/** Registers the object-store contract tests for one implementation. */
export function runObjectStoreContract(label: string, make: () => Promise<ContractSubject>): void {
  describe(`ObjectStore contract: ${label}`, () => {
    let subject: ContractSubject;
    let store: ObjectStore;
    before(async () => {
      subject = await make();
      store = subject.store;
    });
    after(async () => {
      await subject.cleanup();
    });

    test('put then get returns the exact bytes, and put overwrites', async () => {
      const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) & 255);
      await store.put('rt/a.bin', bytes);
      assert.deepEqual(await store.get('rt/a.bin'), bytes);
      await store.put('rt/a.bin', enc.encode('second'));
      assert.equal(dec.decode((await store.get('rt/a.bin')) ?? new Uint8Array()), 'second');
      await store.put('rt/empty', new Uint8Array(0));
      assert.deepEqual(await store.get('rt/empty'), new Uint8Array(0));
      assert.equal((await store.head('rt/empty'))?.size, 0);
    });

    test('missing keys: get and head return null, getRange throws ObjectNotFoundError, delete is a no-op', async () => {
      assert.equal(await store.get('missing/x'), null);
      assert.equal(await store.head('missing/x'), null);
      await assert.rejects(store.getRange('missing/x', 0, 1), ObjectNotFoundError);
      await store.delete('missing/x');
      // A key whose "parent" is an object is simply missing too.
      await store.put('missing-parent', enc.encode('x'));
      assert.equal(await store.get('missing-parent/child'), null);
      assert.equal(await store.get('rt'), null, 'a prefix is not an object');
    });

    test('head reports the size of an object', async () => {
      await store.put('head/obj', new Uint8Array(1234));
      const h = await store.head('head/obj');
      assert.equal(h?.size, 1234);
    });

    test('getRange returns exactly the requested bytes and rejects ranges outside the object', async () => {
      const bytes = new Uint8Array(5000).map((_, i) => i & 255);
      await store.put('range/obj', bytes);
      assert.deepEqual(await store.getRange('range/obj', 100, 200), bytes.slice(100, 200));
      assert.deepEqual(await store.getRange('range/obj', 0, 1), bytes.slice(0, 1));
      assert.deepEqual(await store.getRange('range/obj', 4992, 5000), bytes.slice(4992), 'suffix by explicit offsets');
      assert.deepEqual(await store.getRange('range/obj', 0, 5000), bytes);
      assert.deepEqual(await store.getRange('range/obj', 17, 17), new Uint8Array(0));
      await assert.rejects(store.getRange('range/obj', 4990, 5001), RangeError);
      await assert.rejects(store.getRange('range/obj', 5000, 5001), RangeError);
      await assert.rejects(store.getRange('range/obj', 10, 5), RangeError);
    });

    test('invalid keys are rejected before any I/O (no escaping the root)', async () => {
      for (const key of ['', '/abs', '../x', 'a/../../b', 'a/./b', 'a//b', 'a/', 'a\\b', 'a/b.tmp-1', 'nul\0']) {
        await assert.rejects(store.put(key, new Uint8Array(1)), InvalidKeyError, `put ${JSON.stringify(key)}`);
        await assert.rejects(store.get(key), InvalidKeyError, `get ${JSON.stringify(key)}`);
      }
    });

    test('delete removes the object from get, head and listings', async () => {
      await store.put('del/a', enc.encode('a'));
      await store.put('del/b', enc.encode('b'));
      await store.delete('del/a');
      assert.equal(await store.get('del/a'), null);
      assert.equal(await store.head('del/a'), null);
      assert.deepEqual(names(await collect(store, { prefix: 'del/' })), ['del/b']);
      await store.delete('del/b');
      assert.deepEqual(names(await collect(store, { prefix: 'del' })), []);
      assert.deepEqual(names(await collect(store, { prefix: '', delimiter: '/' })).includes('[del/]'), false);
    });

    // Keys chosen so that s3rver 3.7 (which walks its directory tree rather than sorting keys, and misses common
    // prefixes with no object directly below them) agrees with real S3; the `.`-before-`/` ordering is checked
    // on the local store separately.
    test('list: prefix filter, lexicographic key order, sizes, delimiter roll-up and startAfter', async () => {
      const keys = ['ls/a/b', 'ls/a/c/d', 'ls/a0', 'ls/b', 'ls/ab/x', 'lsx/other', 'ls/é', 'ls/z'];
      for (const k of keys) await store.put(k, enc.encode(k));
      const all = await collect(store, { prefix: 'ls/' });
      assert.deepEqual(names(all), ['ls/a/b', 'ls/a/c/d', 'ls/a0', 'ls/ab/x', 'ls/b', 'ls/z', 'ls/é']);
      assert.deepEqual(
        all.map((e) => (e.kind === 'object' ? e.size : -1)),
        all.map((e) => (e.kind === 'object' ? enc.encode(e.key).length : -1)),
      );
      assert.deepEqual(names(await collect(store, { prefix: 'ls/a' })), ['ls/a/b', 'ls/a/c/d', 'ls/a0', 'ls/ab/x']);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/', delimiter: '/' })), [
        '[ls/a/]',
        'ls/a0',
        '[ls/ab/]',
        'ls/b',
        'ls/z',
        'ls/é',
      ]);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/a/', delimiter: '/' })), ['ls/a/b', '[ls/a/c/]']);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/a', delimiter: '/' })), ['[ls/a/]', 'ls/a0', '[ls/ab/]']);
      assert.deepEqual(names(await collect(store, { prefix: 'l', delimiter: '/' })), ['[ls/]', '[lsx/]']);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/', startAfter: 'ls/a/b' })), ['ls/a/c/d', 'ls/a0', 'ls/ab/x', 'ls/b', 'ls/z', 'ls/é']);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/', startAfter: 'ls/ab/x' })), ['ls/b', 'ls/z', 'ls/é']);
      assert.deepEqual(names(await collect(store, { prefix: 'nothing-here/' })), []);
    });

    test('list: an aborted signal stops the listing with an AbortError', async () => {
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(collect(store, { prefix: 'ls/', signal: ac.signal }), (e: unknown) => e instanceof Error && e.name === 'AbortError');
    });

    test('atomic put: concurrent writers of one key leave one whole version and no temporary object is ever listed', async () => {
      const versions = [0, 1, 2, 3, 4, 5].map((v) => new Uint8Array(200_000).fill(v));
      const writes = Promise.all(versions.map((b) => store.put('atomic/obj', b)));
      // List while the writes are in flight: nothing but the final key may ever appear.
      const seen = new Set<string>();
      for (let i = 0; i < 5; i++) for (const e of await collect(store, { prefix: 'atomic/' })) seen.add(names([e])[0]!);
      await writes;
      for (const e of await collect(store, { prefix: 'atomic/' })) seen.add(names([e])[0]!);
      assert.deepEqual([...seen], ['atomic/obj']);
      const got = await store.get('atomic/obj');
      assert.ok(got !== null && got.length === 200_000);
      assert.ok(got !== null && got.every((b) => b === got[0]), 'the object is one writer’s bytes, not a mix');
      assert.deepEqual(names(await collect(store, { prefix: '' })).filter((k) => k.includes('.tmp-')), []);
    });

    describe(`pagination over ${MANY_KEYS} keys`, () => {
      const keyOf = (i: number) => `many/k${String(i).padStart(5, '0')}`;
      before(async () => {
        const queue = Array.from({ length: MANY_KEYS }, (_, i) => i);
        const one = new Uint8Array([1]);
        await Promise.all(
          Array.from({ length: 24 }, async () => {
            for (let i = queue.shift(); i !== undefined; i = queue.shift()) await store.put(keyOf(i), one);
          }),
        );
      });

      test('a full listing returns every key once, in order, across pages', async () => {
        const before = subject.listRequests?.() ?? 0;
        const keys = names(await collect(store, { prefix: 'many/' }));
        assert.equal(keys.length, MANY_KEYS);
        assert.deepEqual(keys, Array.from({ length: MANY_KEYS }, (_, i) => keyOf(i)));
        if (subject.listRequests !== undefined && subject.pageSize !== undefined) {
          assert.equal(subject.listRequests() - before, Math.ceil(MANY_KEYS / subject.pageSize));
        }
      });

      test('breaking out of for-await stops fetching further pages', async () => {
        const before = subject.listRequests?.() ?? 0;
        let n = 0;
        for await (const e of store.list({ prefix: 'many/' })) {
          assert.equal(e.kind, 'object');
          if (++n === 10) break;
        }
        assert.equal(n, 10);
        if (subject.listRequests !== undefined) {
          assert.equal(subject.listRequests() - before, 1, 'only the first page was requested');
        }
      });

      test('startAfter resumes in the middle of the key space', async () => {
        const keys = names(await collect(store, { prefix: 'many/', startAfter: keyOf(1049) }));
        assert.deepEqual(keys, Array.from({ length: MANY_KEYS - 1050 }, (_, i) => keyOf(1050 + i)));
      });
    });
  });
}
