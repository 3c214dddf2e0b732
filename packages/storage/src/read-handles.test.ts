/**
 * @module read-handles.test
 * Kept read handles of immutable local files: a file is opened once for many range reads, the number kept open is
 * bounded, a handle is never closed under a read, and a write through the store drops the kept handle.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalObjectStore } from './local-object-store.js';
import type { OpenFile } from './read-handle-cache.js';
import { createReadHandleCache } from './read-handle-cache.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'read-handles-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);

/** A real opener that counts opens and tells which handles are closed. */
function countingOpener(): { opens: string[]; closed: Set<string>; openFile(path: string): Promise<OpenFile> } {
  const o = {
    opens: [] as string[],
    closed: new Set<string>(),
    async openFile(path: string): Promise<OpenFile> {
      o.opens.push(path);
      const handle = await open(path, 'r');
      const close = handle.close.bind(handle);
      handle.close = async () => {
        o.closed.add(path);
        await close();
      };
      return { handle, size: (await handle.stat()).size };
    },
  };
  return o;
}

describe('read handle cache', () => {
  test('many range reads of an immutable file open it once', async () => {
    const store = createLocalObjectStore({ root: dir, readHandles: { maxOpen: 4, immutable: () => true } });
    await store.put('once/a.bin', bytes(100, 7));
    for (let i = 0; i < 10; i++) assert.deepEqual(await store.getRange('once/a.bin', i, i + 5), bytes(5, 7));
    assert.equal(store.openReadHandles, 1);
    const opener = countingOpener();
    const cache = createReadHandleCache({ maxOpen: 4, openFile: opener.openFile });
    for (let i = 0; i < 10; i++) await cache.use('a', join(dir, 'once/a.bin'), async (f) => f.size);
    assert.equal(opener.opens.length, 1);
  });

  test('open handles stay bounded by maxOpen, least recently used closed first', async () => {
    const opener = countingOpener();
    const cache = createReadHandleCache({ maxOpen: 3, openFile: opener.openFile });
    const store = createLocalObjectStore({ root: dir });
    for (let i = 0; i < 8; i++) await store.put(`bound/${i}.bin`, bytes(10, i));
    for (let i = 0; i < 8; i++) {
      await cache.use(`k${i}`, join(dir, `bound/${i}.bin`), async () => undefined);
      assert.ok(cache.openCount <= 3, `open ${cache.openCount} after ${i + 1} files`);
    }
    await new Promise((r) => setImmediate(r));
    assert.equal(cache.openCount, 3);
    assert.deepEqual([...opener.closed].sort(), [0, 1, 2, 3, 4].map((i) => join(dir, `bound/${i}.bin`)).sort());
  });

  test('a handle evicted in the middle of a read is closed only once the read ends', async () => {
    const opener = countingOpener();
    const cache = createReadHandleCache({ maxOpen: 1, openFile: opener.openFile });
    const store = createLocalObjectStore({ root: dir });
    await store.put('mid/a.bin', bytes(10, 1));
    await store.put('mid/b.bin', bytes(10, 2));
    const a = join(dir, 'mid/a.bin');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const reading = cache.use('a', a, async (f) => {
      await gate;
      const out = new Uint8Array(10);
      await f.handle.read(out, 0, 10, 0);
      return out;
    });
    await new Promise((r) => setImmediate(r));
    await cache.use('b', join(dir, 'mid/b.bin'), async () => undefined); // evicts a while it is read
    assert.equal(opener.closed.has(a), false, 'not closed under the read');
    release();
    assert.deepEqual(await reading, bytes(10, 1));
    await new Promise((r) => setImmediate(r));
    assert.equal(opener.closed.has(a), true, 'closed once the read ended');
  });

  test('a put through the store drops the kept handle: the next read sees the new bytes', async () => {
    const store = createLocalObjectStore({ root: dir, readHandles: { maxOpen: 4, immutable: () => true } });
    await store.put('rewrite/a.bin', bytes(10, 1));
    assert.deepEqual(await store.getRange('rewrite/a.bin', 0, 10), bytes(10, 1));
    await store.put('rewrite/a.bin', bytes(10, 2));
    assert.deepEqual(await store.getRange('rewrite/a.bin', 0, 10), bytes(10, 2));
  });

  test('keys not declared immutable are opened per read and never kept', async () => {
    const store = createLocalObjectStore({
      root: dir,
      readHandles: { maxOpen: 4, immutable: (k) => k.endsWith('.keep') },
    });
    await store.put('mixed/a.other', bytes(10, 3));
    assert.deepEqual(await store.getRange('mixed/a.other', 0, 10), bytes(10, 3));
    assert.equal(store.openReadHandles, 0);
  });
});
