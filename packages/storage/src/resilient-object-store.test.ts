/**
 * @module resilient-object-store.test
 * Every object-store call is bounded: timeouts, retries with jittered back-off, `StorageUnavailableError` on
 * exhaustion, caller aborts, the `putConditional` and `list` subtleties. Time is paused (a manual clock drives the
 * wrapper's timers) and the inner store is in memory, so no test waits on the wall clock. The wrapper also runs the
 * object-store contract over the local store, with real timers (object-store.test.ts runs the s3rver contract
 * through it).
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { sourceFromStore } from './byte-range-source.js';
import { createLocalObjectStore } from './local-object-store.js';
import { createObjectStore, storageCallPolicy, storageSettingsFrom } from './object-store-settings.js';
import type { StorageSection } from './object-store-settings.js';
import type { CallOptions, ListOptions, ObjectStore } from './object-store.js';
import { InvalidKeyError, ObjectNotFoundError, assertRange, assertValidKey, compareKeys } from './object-store.js';
import { createResilientObjectStore } from './resilient-object-store.js';
import type { ResiliencePolicy, RetryTimers, StorageRetryEvent } from './resilient-object-store.js';
import { StorageUnavailableError } from './storage-errors.js';
import { createFaultyObjectStore } from './testing/faulty-object-store.js';
import { runObjectStoreContract } from './testing/object-store-contract.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Lets every promise chain that is ready run (the in-memory store only ever waits on microtasks). */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Paused time: timers fire only inside `advance`, earliest first, with promise chains run between them. */
class PausedClock implements RetryTimers {
  #now = 0;
  #next = 1;
  readonly #timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  pending(): number {
    return this.#timers.size;
  }

  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flush();
      let dueId: number | undefined;
      let dueAt = Infinity;
      for (const [id, t] of this.#timers) if (t.at <= target && t.at < dueAt) [dueId, dueAt] = [id, t.at];
      if (dueId === undefined) break;
      const t = this.#timers.get(dueId);
      this.#timers.delete(dueId);
      this.#now = dueAt;
      t?.callback();
    }
    this.#now = target;
    await flush();
  }
}

/** A promise's outcome, readable without awaiting it. */
function track<T>(p: Promise<T>): { done: boolean; value?: T; error?: unknown } {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error: unknown) => Object.assign(state, { done: true, error }),
  );
  return state;
}

/** An in-memory store (objects sorted on listing; ETags count versions); records each listing's options. */
function memoryStore(): ObjectStore & { readonly listings: ListOptions[] } {
  const objects = new Map<string, { bytes: Uint8Array; etag: string }>();
  const listings: ListOptions[] = [];
  let version = 0;
  const found = (key: string) => {
    assertValidKey(key);
    return objects.get(key);
  };
  const publish = (key: string, bytes: Uint8Array): string => {
    const etag = `"v${++version}"`;
    objects.set(key, { bytes: bytes.slice(), etag });
    return etag;
  };
  return {
    listings,
    put: async (key, bytes) => {
      found(key);
      publish(key, bytes);
    },
    putConditional: async (key, bytes, condition) => {
      const current = found(key);
      const holds = 'ifMatch' in condition ? current?.etag === condition.ifMatch : current === undefined;
      return holds ? { status: 'ok', etag: publish(key, bytes) } : { status: 'conflict' };
    },
    get: async (key) => found(key)?.bytes.slice() ?? null,
    getVersioned: async (key) => {
      const o = found(key);
      return o === undefined ? null : { bytes: o.bytes.slice(), etag: o.etag };
    },
    getRange: async (key, start, endExclusive) => {
      const o = found(key);
      if (o === undefined) throw new ObjectNotFoundError(key);
      assertRange(start, endExclusive, o.bytes.byteLength);
      return o.bytes.slice(start, endExclusive);
    },
    head: async (key) => {
      const o = found(key);
      return o === undefined ? null : { size: o.bytes.byteLength, etag: o.etag };
    },
    delete: async (key) => {
      found(key);
      objects.delete(key);
    },
    async *list(options) {
      listings.push(options);
      const { prefix, delimiter, startAfter } = options;
      let lastPrefix: string | undefined;
      for (const key of [...objects.keys()].sort(compareKeys)) {
        options.signal?.throwIfAborted();
        if (!key.startsWith(prefix) || (startAfter !== undefined && compareKeys(key, startAfter) <= 0)) continue;
        const at = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
        if (delimiter && at >= 0) {
          const p = key.slice(0, at + delimiter.length);
          // Like S3: a startAfter inside a rolled-up prefix yields that prefix again.
          if (p !== lastPrefix) yield { kind: 'prefix', prefix: (lastPrefix = p) };
          continue;
        }
        yield { kind: 'object', key, size: objects.get(key)?.bytes.byteLength ?? 0 };
      }
    },
  };
}

function policyWith(clock: PausedClock, over: Partial<ResiliencePolicy> = {}): ResiliencePolicy {
  return {
    requestTimeoutMs: 1_000,
    maxAttempts: 3,
    retryBaseMs: 100,
    retryMaxMs: 2_000,
    random: () => 0.5,
    timers: clock,
    ...over,
  };
}

/** A memory store behind the fault injector behind the resilient wrapper, on paused time. */
function rig(over: Partial<ResiliencePolicy> = {}) {
  const clock = new PausedClock();
  const memory = memoryStore();
  const { store: faulty, faults } = createFaultyObjectStore(memory);
  const retries: StorageRetryEvent[] = [];
  const store = createResilientObjectStore(faulty, policyWith(clock, { onRetry: (e) => retries.push(e), ...over }));
  return { clock, memory, faults, retries, store };
}

function isUnavailable(
  e: unknown,
  expected: { operation: string; key: string | null; attempts: number; reason: string },
): boolean {
  assert.ok(e instanceof StorageUnavailableError, `expected StorageUnavailableError, got ${String(e)}`);
  assert.deepEqual({ operation: e.operation, key: e.key, attempts: e.attempts, reason: e.reason }, expected);
  return true;
}

async function collect(store: ObjectStore, options: ListOptions): Promise<string[]> {
  const out: string[] = [];
  for await (const e of store.list(options)) out.push(e.kind === 'object' ? e.key : `[${e.prefix}]`);
  return out;
}

describe('resilient object store: bounded attempts', () => {
  test('a hung call ends in StorageUnavailableError (timeout) after exactly maxAttempts attempts, at a known time', async () => {
    const { clock, faults, retries, store } = rig();
    faults.inject('get', 'hang');
    const call = track(store.get('obj'));
    // 3 attempts of 1,000 ms, back-offs of 0.5 × 100 and 0.5 × 200 ms.
    await clock.advance(3_149);
    assert.equal(call.done, false, 'still inside its bound');
    await clock.advance(1);
    assert.equal(call.done, true, 'settled exactly at its bound');
    assert.ok(isUnavailable(call.error, { operation: 'get', key: 'obj', attempts: 3, reason: 'timeout' }));
    assert.equal(faults.callsOf('get').length, 3);
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.reason, r.delayMs]),
      [
        [1, 'timeout', 50],
        [2, 'timeout', 100],
      ],
    );
    assert.equal(clock.pending(), 0, 'no timer is left behind');
  });

  test('an inner call that ignores its abort signal is still cut off by the attempt timeout', async () => {
    const clock = new PausedClock();
    let calls = 0;
    const deaf: ObjectStore = { ...memoryStore(), head: () => (calls++, new Promise(() => undefined)) };
    const store = createResilientObjectStore(deaf, policyWith(clock, { maxAttempts: 2 }));
    const call = track(store.head('obj'));
    await clock.advance(1_050);
    assert.equal(call.done, false);
    await clock.advance(1_000);
    assert.ok(isUnavailable(call.error, { operation: 'head', key: 'obj', attempts: 2, reason: 'timeout' }));
    assert.equal(calls, 2);
  });

  test('two 5xx answers then success resolve with the object after three inner calls and two retry events', async () => {
    const { clock, memory, faults, retries, store } = rig();
    await memory.put('obj', enc.encode('payload'));
    faults.inject('get', 'server_error', { times: 2 });
    const call = track(store.get('obj'));
    await clock.advance(1_000);
    assert.equal(dec.decode(call.value ?? new Uint8Array()), 'payload');
    assert.equal(faults.callsOf('get').length, 3);
    assert.deepEqual(
      retries.map((r) => [r.operation, r.key, r.attempt, r.reason]),
      [
        ['get', 'obj', 1, 'server_error'],
        ['get', 'obj', 2, 'server_error'],
      ],
    );
  });

  test('a reset connection is retried, and a reset on every attempt ends as unavailable (connection)', async () => {
    const { clock, memory, faults, retries, store } = rig({ maxAttempts: 2 });
    await memory.put('obj', enc.encode('x'));
    faults.inject('head', 'reset', { times: 1 });
    const once = track(store.head('obj'));
    await clock.advance(1_000);
    assert.equal(once.value?.size, 1);
    assert.equal(retries[0]?.reason, 'connection');
    faults.inject('head', 'reset');
    const always = track(store.head('obj'));
    await clock.advance(1_000);
    assert.ok(isUnavailable(always.error, { operation: 'head', key: 'obj', attempts: 2, reason: 'connection' }));
    assert.equal(
      ((always.error as Error).cause as { code?: string }).code,
      'ECONNRESET',
      'the last failure is the cause',
    );
  });

  test('a truncated body is retried (reason truncated) and the next whole answer is returned', async () => {
    const { clock, memory, faults, retries, store } = rig();
    await memory.put('obj', enc.encode('0123456789'));
    faults.inject('get_range', 'truncated', { times: 1 });
    const call = track(store.getRange('obj', 2, 6));
    await clock.advance(1_000);
    assert.equal(dec.decode(call.value ?? new Uint8Array()), '2345');
    assert.deepEqual(
      retries.map((r) => r.reason),
      ['truncated'],
    );
    faults.inject('get_range', 'truncated');
    const always = track(store.getRange('obj', 2, 6));
    await clock.advance(1_000);
    assert.ok(isUnavailable(always.error, { operation: 'get_range', key: 'obj', attempts: 3, reason: 'truncated' }));
  });

  test('non-transient errors pass through unchanged after one call: missing object, bad range, bad key, 403', async () => {
    const { clock, memory, faults, retries, store } = rig();
    await memory.put('obj', enc.encode('abc'));
    const outcomes = [
      track(store.getRange('missing', 0, 1)),
      track(store.getRange('obj', 2, 9)),
      track(store.get('../escape')),
    ];
    const denied = Object.assign(new Error('Access Denied'), {
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    });
    let forbiddenCalls = 0;
    const forbidding = createResilientObjectStore(
      {
        ...memory,
        head: () => {
          forbiddenCalls++;
          return Promise.reject(denied);
        },
      },
      policyWith(clock),
    );
    const forbidden = track(forbidding.head('obj'));
    await clock.advance(10_000);
    assert.ok(outcomes[0]?.error instanceof ObjectNotFoundError);
    assert.ok(outcomes[1]?.error instanceof RangeError);
    assert.ok(outcomes[2]?.error instanceof InvalidKeyError);
    assert.equal(forbidden.error, denied, 'the very same error object');
    assert.equal(faults.calls.length, 3, 'one inner call each');
    assert.equal(forbiddenCalls, 1);
    assert.deepEqual(retries, []);
  });
});

describe('resilient object store: caller aborts', () => {
  test('aborting during an attempt rejects at once with the abort reason and makes no further attempt', async () => {
    const { clock, faults, retries, store } = rig();
    faults.inject('get_range', 'hang');
    const ac = new AbortController();
    const call = track(store.getRange('obj', 0, 10, { signal: ac.signal }));
    await flush();
    const reason = new Error('query deadline');
    ac.abort(reason);
    await flush();
    assert.equal(call.error, reason, 'the caller’s own reason, without advancing time');
    await clock.advance(60_000);
    assert.equal(faults.callsOf('get_range').length, 1);
    assert.deepEqual(retries, []);
    assert.equal(clock.pending(), 0);
  });

  test('aborting during the back-off rejects at once with the abort reason and makes no further attempt', async () => {
    const { clock, faults, retries, store } = rig({ random: () => 0.999, retryBaseMs: 1_000 });
    faults.inject('put', 'server_error');
    const ac = new AbortController();
    const call = track(store.put('obj', enc.encode('x'), { signal: ac.signal }));
    await flush();
    assert.equal(retries.length, 1, 'the first attempt failed and the back-off began');
    ac.abort();
    await flush();
    assert.ok(call.error instanceof Error && call.error.name === 'AbortError');
    assert.equal(call.error, ac.signal.reason);
    await clock.advance(60_000);
    assert.equal(faults.callsOf('put').length, 1);
    assert.equal(clock.pending(), 0);
  });

  test('a caller deadline whose reason looks transient (AbortSignal.timeout’s TimeoutError) is still not retried', async () => {
    const { clock, faults, retries, store } = rig();
    faults.inject('get', 'hang');
    const ac = new AbortController();
    const call = track(store.get('obj', { signal: ac.signal }));
    await flush();
    const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    ac.abort(reason);
    await flush();
    assert.equal(call.error, reason, 'the caller’s reason, not StorageUnavailableError');
    await clock.advance(60_000);
    assert.equal(faults.calls.length, 1);
    assert.deepEqual(retries, []);
  });

  test('fifty concurrent calls sharing one signal hold one abort listener on it, and one abort ends them all', async () => {
    const { clock, faults, store } = rig();
    faults.inject('get_range', 'hang');
    const ac = new AbortController();
    const calls = Array.from({ length: 50 }, (_, i) => track(store.getRange(`f${i}`, 0, 1, { signal: ac.signal })));
    await flush();
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1, 'no listener pile-up (Node warns past ten)');
    ac.abort();
    await flush();
    assert.ok(calls.every((c) => c.error === ac.signal.reason));
    assert.equal(clock.pending(), 0);
  });

  test('an already aborted signal rejects without calling the store', async () => {
    const { faults, store } = rig();
    await assert.rejects(store.head('obj', { signal: AbortSignal.abort() }), { name: 'AbortError' });
    assert.equal(faults.calls.length, 0);
  });
});

describe('resilient object store: back-off', () => {
  for (const r of [0, 0.9999999]) {
    test(`with random() = ${r}, each back-off lies in [0, min(retryMaxMs, retryBaseMs × 2^(n−1))]`, async () => {
      const { clock, faults, retries, store } = rig({
        random: () => r,
        maxAttempts: 8,
        retryBaseMs: 100,
        retryMaxMs: 1_000,
      });
      faults.inject('delete', 'server_error');
      const call = track(store.delete('obj'));
      await clock.advance(10_000);
      assert.ok(isUnavailable(call.error, { operation: 'delete', key: 'obj', attempts: 8, reason: 'server_error' }));
      assert.equal(faults.callsOf('delete').length, 8);
      const caps = [100, 200, 400, 800, 1_000, 1_000, 1_000];
      assert.deepEqual(
        retries.map((e) => e.attempt),
        [1, 2, 3, 4, 5, 6, 7],
      );
      retries.forEach((e, i) => {
        const cap = caps[i] ?? NaN;
        assert.ok(e.delayMs >= 0 && e.delayMs <= cap, `back-off ${e.delayMs} within [0, ${cap}]`);
        if (r === 0) assert.equal(e.delayMs, 0);
        else assert.ok(e.delayMs >= cap - 1, `full jitter at 0.999… is near the cap (${e.delayMs} of ${cap})`);
      });
    });
  }

  test('the next attempt starts only after the drawn back-off has elapsed', async () => {
    const { clock, faults, retries, store } = rig({ random: () => 0.5, retryBaseMs: 400 });
    faults.inject('head', 'server_error', { times: 1 });
    const call = track(store.head('obj'));
    await flush();
    assert.equal(retries[0]?.delayMs, 200);
    await clock.advance(199);
    assert.equal(faults.callsOf('head').length, 1, 'still backing off');
    await clock.advance(1);
    assert.equal(faults.callsOf('head').length, 2);
    assert.equal(call.done, true);
    assert.equal(call.value, null);
  });
});

describe('resilient object store: putConditional after an ambiguous failure', () => {
  test('a retry that conflicts with its own landed write answers ok with the stored ETag', async () => {
    const { clock, memory, faults, store } = rig();
    faults.inject('put_conditional', 'lost_reply', { times: 1 });
    const call = track(store.putConditional('manifest.json', enc.encode('gen 1'), { ifNoneMatch: '*' }));
    await clock.advance(1_000);
    const stored = await memory.getVersioned('manifest.json');
    assert.deepEqual(call.value, { status: 'ok', etag: stored?.etag });
    assert.equal(faults.callsOf('put_conditional').length, 2, 'the retry saw a conflict');
    assert.equal(faults.callsOf('get').length, 1, 'and the object was read back once');
  });

  test('the same after an ifMatch write: the retry’s stale ETag conflicts, our bytes are current, so ok', async () => {
    const { clock, memory, faults, store } = rig();
    await memory.put('m', enc.encode('gen 1'));
    const base = await memory.getVersioned('m');
    faults.inject('put_conditional', 'lost_reply', { times: 1 });
    const call = track(store.putConditional('m', enc.encode('gen 2'), { ifMatch: base?.etag ?? '' }));
    await clock.advance(1_000);
    assert.deepEqual(call.value, { status: 'ok', etag: (await memory.getVersioned('m'))?.etag });
  });

  test('a retry that conflicts with another writer’s bytes answers conflict', async () => {
    const { clock, memory, faults, store } = rig({
      // Another writer publishes while we back off after our reset attempt (which did not land).
      onRetry: () => void memory.put('manifest.json', enc.encode('theirs')),
    });
    faults.inject('put_conditional', 'reset', { times: 1 });
    const call = track(store.putConditional('manifest.json', enc.encode('ours'), { ifNoneMatch: '*' }));
    await clock.advance(1_000);
    assert.deepEqual(call.value, { status: 'conflict' });
    assert.equal(dec.decode((await memory.get('manifest.json')) ?? new Uint8Array()), 'theirs');
  });

  test('a conflict without an earlier failed attempt is answered as is, without reading the object back', async () => {
    const { clock, memory, faults, store } = rig();
    await memory.put('k', enc.encode('same'));
    const call = track(store.putConditional('k', enc.encode('same'), { ifNoneMatch: '*' }));
    await clock.advance(0);
    assert.deepEqual(call.value, { status: 'conflict' });
    assert.equal(faults.callsOf('get').length, 0);
  });
});

describe('resilient object store: list', () => {
  const keys = Array.from({ length: 10 }, (_, i) => `l/k${i}`);

  test('after a reset and a hung page fetch the listing restarts after the last yielded key: nothing lost, nothing repeated', async () => {
    const { clock, memory, faults, retries, store } = rig();
    for (const k of [...keys, 'other/x']) await memory.put(k, enc.encode(k));
    faults.inject('list', 'reset', { skip: 3, times: 1 });
    faults.inject('list', 'hang', { skip: 6, times: 1 });
    const listing = track(collect(store, { prefix: 'l/' }));
    await clock.advance(5_000);
    assert.deepEqual(listing.value, keys);
    assert.deepEqual(
      memory.listings.map((o) => o.startAfter),
      [undefined, 'l/k2', 'l/k4'],
    );
    assert.deepEqual(
      retries.map((r) => [r.operation, r.key, r.attempt, r.reason]),
      [
        ['list', 'l/', 1, 'connection'],
        ['list', 'l/', 1, 'timeout'],
      ],
    );
  });

  test('a restart inside a rolled-up prefix does not yield that prefix twice', async () => {
    const { clock, memory, faults, store } = rig();
    for (const k of ['d/a/1', 'd/a/2', 'd/b', 'd/c/1', 'd/d']) await memory.put(k, enc.encode(k));
    faults.inject('list', 'server_error', { skip: 1, times: 1 });
    const listing = track(collect(store, { prefix: 'd/', delimiter: '/' }));
    await clock.advance(1_000);
    assert.deepEqual(listing.value, ['[d/a/]', 'd/b', '[d/c/]', 'd/d']);
    assert.deepEqual(
      memory.listings.map((o) => o.startAfter),
      [undefined, 'd/a/'],
    );
  });

  test('the caller’s startAfter is kept when a restart happens before anything was yielded', async () => {
    const { clock, memory, faults, store } = rig();
    for (const k of keys) await memory.put(k, enc.encode(k));
    // The first page fetch reaches the store (which hands out l/k7) but its answer is lost.
    faults.inject('list', 'lost_reply', { times: 1 });
    const listing = track(collect(store, { prefix: 'l/', startAfter: 'l/k6' }));
    await clock.advance(1_000);
    assert.deepEqual(listing.value, ['l/k7', 'l/k8', 'l/k9']);
    assert.deepEqual(
      memory.listings.map((o) => o.startAfter),
      ['l/k6', 'l/k6'],
    );
  });

  test('maxAttempts consecutive failed page fetches end the listing with StorageUnavailableError', async () => {
    const { clock, memory, faults, store } = rig();
    for (const k of keys) await memory.put(k, enc.encode(k));
    faults.inject('list', 'server_error', { skip: 2 });
    const seen: string[] = [];
    const listing = track(
      (async () => {
        for await (const e of store.list({ prefix: 'l/' })) seen.push(e.kind === 'object' ? e.key : e.prefix);
      })(),
    );
    await clock.advance(5_000);
    assert.ok(isUnavailable(listing.error, { operation: 'list', key: 'l/', attempts: 3, reason: 'server_error' }));
    assert.deepEqual(seen, ['l/k0', 'l/k1']);
  });

  test('aborting a listing during a hung page fetch rejects at once with the abort reason', async () => {
    const { clock, memory, faults, retries, store } = rig();
    for (const k of keys) await memory.put(k, enc.encode(k));
    faults.inject('list', 'hang', { skip: 1 });
    const ac = new AbortController();
    const listing = track(collect(store, { prefix: 'l/', signal: ac.signal }));
    await flush();
    ac.abort();
    await flush();
    assert.equal(listing.error, ac.signal.reason);
    await clock.advance(10_000);
    assert.deepEqual(retries, []);
    assert.equal(clock.pending(), 0);
  });
});

describe('storage settings: call bounds per backend', () => {
  test('the local policy makes one attempt: a hung local call gives up after one timed-out attempt', async () => {
    const policy = storageCallPolicy({ backend: 'local', root: '/unused', requestTimeoutMs: 30_000 });
    assert.equal(policy.maxAttempts, 1);
    const clock = new PausedClock();
    const { store: faulty, faults } = createFaultyObjectStore(memoryStore());
    faults.inject('get', 'hang');
    const store = createResilientObjectStore(faulty, { ...policy, timers: clock });
    const call = track(store.get('obj'));
    await clock.advance(29_999);
    assert.equal(call.done, false);
    await clock.advance(1);
    assert.ok(isUnavailable(call.error, { operation: 'get', key: 'obj', attempts: 1, reason: 'timeout' }));
    assert.equal(faults.calls.length, 1);
  });

  test('storageSettingsFrom carries the configured bounds, and createObjectStore keeps an S3 store’s close()', () => {
    const section: StorageSection = {
      backend: 's3',
      local: { root: './data', requestTimeoutMs: 30_000 },
      s3: {
        bucket: 'logs',
        endpoint: 'http://127.0.0.1:9',
        region: 'us-east-1',
        prefix: '',
        accessKeyId: 'a',
        secretAccessKey: 'b',
        forcePathStyle: true,
        connectTimeoutMs: 3_000,
        requestTimeoutMs: 10_000,
        maxAttempts: 4,
        retryBaseMs: 100,
        retryMaxMs: 2_000,
      },
    };
    const s3 = storageSettingsFrom(section);
    assert.deepEqual(storageCallPolicy(s3), {
      requestTimeoutMs: 10_000,
      maxAttempts: 4,
      retryBaseMs: 100,
      retryMaxMs: 2_000,
    });
    assert.deepEqual(storageSettingsFrom({ ...section, backend: 'local' }), {
      backend: 'local',
      root: './data',
      requestTimeoutMs: 30_000,
    });
    const s3Store = createObjectStore(s3);
    assert.equal(typeof s3Store.close, 'function');
    s3Store.close?.();
    assert.equal('close' in createObjectStore({ backend: 'local', root: './data', requestTimeoutMs: 0 }), false);
  });

  test('a policy without a usable bound is refused when the store is made', () => {
    const ok = { requestTimeoutMs: 1_000, maxAttempts: 3, retryBaseMs: 100, retryMaxMs: 2_000 };
    for (const bad of [{ maxAttempts: 0 }, { maxAttempts: 1.5 }, { requestTimeoutMs: -1 }, { retryMaxMs: NaN }])
      assert.throws(
        () => createResilientObjectStore(memoryStore(), { ...ok, ...bad }),
        RangeError,
        JSON.stringify(bad),
      );
  });

  test('sourceFromStore passes its signal to every range read', async () => {
    const seen: (AbortSignal | undefined)[] = [];
    const spy: ObjectStore = {
      ...memoryStore(),
      getRange: (_key: string, start: number, end: number, opts?: CallOptions) => {
        seen.push(opts?.signal);
        return Promise.resolve(new Uint8Array(end - start));
      },
    };
    const ac = new AbortController();
    const source = sourceFromStore(spy, 'f.parquet', 100, ac.signal);
    await source.read(0, 10);
    await source.read(90, 100);
    assert.deepEqual(seen, [ac.signal, ac.signal]);
  });
});

const CONTRACT_POLICY = { requestTimeoutMs: 30_000, maxAttempts: 3, retryBaseMs: 10, retryMaxMs: 100 };

runObjectStoreContract('local directory behind createResilientObjectStore', async () => {
  const root = await mkdtemp(join(tmpdir(), 'sluice-resilient-local-'));
  return {
    store: createResilientObjectStore(createLocalObjectStore({ root }), CONTRACT_POLICY),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});
