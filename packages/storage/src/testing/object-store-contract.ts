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
  /**
   * Whether the backend enforces `putConditional` preconditions (default true). s3rver does not: its raw subject
   * sets `false`, which skips the compare-and-swap tests (its `createCasEnforcingStore` wrapper runs them).
   */
  readonly enforcesConditionalWrites?: boolean;
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
      assert.deepEqual(names(await collect(store, { prefix: 'ls/a', delimiter: '/' })), [
        '[ls/a/]',
        'ls/a0',
        '[ls/ab/]',
      ]);
      assert.deepEqual(names(await collect(store, { prefix: 'l', delimiter: '/' })), ['[ls/]', '[lsx/]']);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/', startAfter: 'ls/a/b' })), [
        'ls/a/c/d',
        'ls/a0',
        'ls/ab/x',
        'ls/b',
        'ls/z',
        'ls/é',
      ]);
      assert.deepEqual(names(await collect(store, { prefix: 'ls/', startAfter: 'ls/ab/x' })), ['ls/b', 'ls/z', 'ls/é']);
      assert.deepEqual(names(await collect(store, { prefix: 'nothing-here/' })), []);
    });

    test('list: an aborted signal stops the listing with an AbortError', async () => {
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(
        collect(store, { prefix: 'ls/', signal: ac.signal }),
        (e: unknown) => e instanceof Error && e.name === 'AbortError',
      );
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
      assert.deepEqual(
        names(await collect(store, { prefix: '' })).filter((k) => k.includes('.tmp-')),
        [],
      );
    });

    test('getVersioned returns the bytes with the ETag head reports, and the ETag changes when the object is replaced', async () => {
      assert.equal(await store.getVersioned('ver/missing'), null);
      await store.put('ver/obj', enc.encode('v1'));
      const v1 = await store.getVersioned('ver/obj');
      assert.ok(v1 !== null);
      assert.equal(dec.decode(v1.bytes), 'v1');
      assert.ok(v1.etag.length > 0);
      assert.equal((await store.head('ver/obj'))?.etag, v1.etag);
      await store.put('ver/obj', enc.encode('v2, longer'));
      const v2 = await store.getVersioned('ver/obj');
      assert.equal(dec.decode(v2?.bytes ?? new Uint8Array()), 'v2, longer');
      assert.notEqual(v2?.etag, v1.etag);
    });

    describe('conditional writes (compare-and-swap)', () => {
      test('ifNoneMatch creates an absent key once; a second attempt conflicts and changes nothing', async (t) => {
        if (subject.enforcesConditionalWrites === false) return t.skip('the backend ignores conditional writes');
        const first = await store.putConditional('cas/new', enc.encode('first'), { ifNoneMatch: '*' });
        assert.equal(first.status, 'ok');
        assert.equal(
          first.status === 'ok' ? first.etag : '',
          (await store.head('cas/new'))?.etag,
          'the returned ETag is the stored one',
        );
        const second = await store.putConditional('cas/new', enc.encode('second'), { ifNoneMatch: '*' });
        assert.deepEqual(second, { status: 'conflict' });
        assert.equal(dec.decode((await store.get('cas/new')) ?? new Uint8Array()), 'first');
        assert.deepEqual(
          names(await collect(store, { prefix: 'cas/' })),
          ['cas/new'],
          'a conflict leaves no temporary object',
        );
      });

      test('ifMatch replaces only the version it names; a stale ETag or a missing key conflicts', async (t) => {
        if (subject.enforcesConditionalWrites === false) return t.skip('the backend ignores conditional writes');
        await store.put('cas/m', enc.encode('g1'));
        const g1 = await store.getVersioned('cas/m');
        assert.ok(g1 !== null);
        const ok2 = await store.putConditional('cas/m', enc.encode('g2'), { ifMatch: g1.etag });
        assert.equal(ok2.status, 'ok');
        assert.notEqual(ok2.status === 'ok' ? ok2.etag : g1.etag, g1.etag);
        assert.deepEqual(await store.putConditional('cas/m', enc.encode('stale'), { ifMatch: g1.etag }), {
          status: 'conflict',
        });
        assert.equal(dec.decode((await store.get('cas/m')) ?? new Uint8Array()), 'g2');
        const ok3 = await store.putConditional('cas/m', enc.encode('g3'), {
          ifMatch: ok2.status === 'ok' ? ok2.etag : '',
        });
        assert.equal(ok3.status, 'ok');
        assert.equal((await store.getVersioned('cas/m'))?.etag, ok3.status === 'ok' ? ok3.etag : undefined);
        assert.deepEqual(await store.putConditional('cas/absent', enc.encode('x'), { ifMatch: g1.etag }), {
          status: 'conflict',
        });
        assert.equal(await store.get('cas/absent'), null);
      });

      test('concurrent writers holding the same precondition: exactly one wins, and its bytes are stored', async (t) => {
        if (subject.enforcesConditionalWrites === false) return t.skip('the backend ignores conditional writes');
        const n = 8;
        const creates = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            store.putConditional('cas/race', enc.encode(`create-${i}`), { ifNoneMatch: '*' }),
          ),
        );
        const created = creates.flatMap((r, i) => (r.status === 'ok' ? [i] : []));
        assert.equal(created.length, 1, 'exactly one ifNoneMatch writer wins');
        const base = await store.getVersioned('cas/race');
        assert.equal(dec.decode(base?.bytes ?? new Uint8Array()), `create-${created[0]}`);
        const swaps = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            store.putConditional('cas/race', enc.encode(`swap-${i}`), { ifMatch: base?.etag ?? '' }),
          ),
        );
        const swapped = swaps.flatMap((r, i) => (r.status === 'ok' ? [i] : []));
        assert.equal(swapped.length, 1, 'exactly one ifMatch writer wins');
        assert.equal(dec.decode((await store.get('cas/race')) ?? new Uint8Array()), `swap-${swapped[0]}`);
      });
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
        assert.deepEqual(
          keys,
          Array.from({ length: MANY_KEYS }, (_, i) => keyOf(i)),
        );
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
        assert.deepEqual(
          keys,
          Array.from({ length: MANY_KEYS - 1050 }, (_, i) => keyOf(1050 + i)),
        );
      });
    });
  });
}
