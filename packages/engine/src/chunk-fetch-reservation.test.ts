/**
 * @module chunk-fetch-reservation.test
 * The columnar read fetches a row group's column chunks together (docs/design/query-engine.md, "Targeted
 * rendering"): every chunk's stored bytes must be reserved before its fetch is issued and stay reserved while the
 * fetch is in flight, and a read that fails with fetches still in flight gives back exactly what it took once they
 * have settled.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryPool } from '@sluice/limits';
import type { ObjectStore } from '@sluice/storage';
import { LOG_COLUMNS, createLocalObjectStore } from '@sluice/storage';
import { RECORD_COLUMNS } from './records.js';
import { DATA_FILE_COLUMNS, openReserved, readReservedWith } from './scan.js';
import { H, T0, makeRows, writeDataFiles } from './testing/corpus.js';
import { MemoryTracker } from './tracker.js';

/** A store whose range reads are observed when issued and can be held or failed. */
function observedStore(inner: ObjectStore, onCall: (start: number, end: number) => Promise<void> | void): ObjectStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'getRange') return Reflect.get(target, prop, receiver) as unknown;
      return async (key: string, start: number, end: number, opts?: { signal?: AbortSignal }) => {
        await onCall(start, end);
        return target.getRange(key, start, end, opts);
      };
    },
  });
}

describe('chunk fetches are reserved before they are issued', () => {
  let dir = '';
  let inner: ObjectStore;
  let key = '';
  let size = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'chunk-fetch-'));
    inner = createLocalObjectStore({ root: dir });
    const keys = await writeDataFiles(
      inner,
      makeRows({ tenant: 'acme', count: 2000, startNs: T0, spanNs: H, seed: 3 }),
      { filesPerHour: 1, rowGroupRows: 1000 },
    );
    key = keys[0] ?? '';
    size = (await inner.head(key))?.size ?? 0;
    assert.ok(size > 0);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const layout of ['group', 'slice'] as const) {
    test(`every in-flight chunk fetch is covered by the reservation (${layout} layout)`, async () => {
      const pool = createMemoryPool({ sizeBytes: 1 << 30 });
      const tracker = new MemoryTracker(pool.createQuery('q'));
      let armed = false;
      let base = 0;
      let inFlight = 0;
      let calls = 0;
      const shortfalls: string[] = [];
      const store = observedStore(inner, (start, end) => {
        if (!armed) return;
        calls++;
        inFlight += end - start;
        // Fetches resolve only after every call of the read is issued (they run together), so all are in flight.
        if (tracker.held - base < inFlight) shortfalls.push(`${inFlight} in flight, ${tracker.held - base} reserved`);
      });
      const opened = await openReserved(store, key, size, tracker, DATA_FILE_COLUMNS);
      base = tracker.held;
      armed = true;
      const rows = layout === 'slice' ? { start: 100, end: 140 } : undefined;
      const read = await readReservedWith(opened, 0, RECORD_COLUMNS, tracker, 'columnar', rows, layout);
      armed = false;
      assert.ok(calls >= 15, `${calls} chunk fetches`);
      assert.deepEqual(shortfalls, []);
      assert.equal(tracker.held - base, read.reserved, 'only the decoded columns stay reserved');
      assert.ok(read.cols[LOG_COLUMNS.body] !== undefined);
      tracker.shrink(read.reserved);
      tracker.releaseAll();
    });
  }

  test('a fetch that fails while others are in flight gives back everything the read reserved, once they settle', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 30 });
    const tracker = new MemoryTracker(pool.createQuery('q'));
    let armed = false;
    let calls = 0;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heldAtSettle = -1;
    const store = observedStore(inner, async () => {
      if (!armed) return;
      const n = ++calls;
      if (n === 2) throw new Error('disk on fire');
      if (n === 3) {
        await held; // still in flight when the read fails
        heldAtSettle = tracker.held;
      }
    });
    const opened = await openReserved(store, key, size, tracker, DATA_FILE_COLUMNS);
    const base = tracker.held;
    armed = true;
    const read = readReservedWith(opened, 0, RECORD_COLUMNS, tracker, 'columnar');
    // The read waits for the held fetch before it gives back its reservation.
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(tracker.held > base, 'the in-flight fetch is still reserved');
    release();
    await assert.rejects(read, /disk on fire/);
    assert.ok(heldAtSettle > base, 'the held fetch was reserved when it settled');
    assert.equal(tracker.held, base, 'everything the read reserved is given back');
    tracker.releaseAll();
  });
});
