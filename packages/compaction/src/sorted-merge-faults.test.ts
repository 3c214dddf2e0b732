/**
 * @module sorted-merge-faults.test
 * The merge names the input that does not decode or holds another tenant's rows (MergeInputError, with the row
 * group), on both the in-memory and the spilled path, and lets a storage fault through unchanged: the caller tells
 * a corrupt input from an outage by this alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LogsParquetWriter, StorageUnavailableError, createLocalObjectStore, openParquetFile } from '@sluice/storage';
import type { ObjectStore, ParquetFileHandle } from '@sluice/storage';
import { faultTaggingSource } from './corrupt-input.js';
import { MergeInputError, mergeSortedInto } from './sorted-merge.js';
import { SEALED_HOUR_MS, flipPageBit, partitionPrefix, rowsFor, writeDataFile } from './testing/index.js';

describe('merge input faults', () => {
  let root: string;
  let scratch: string;
  let store: ObjectStore;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'sluice-merge-faults-'));
    scratch = await mkdtemp(join(tmpdir(), 'sluice-merge-faults-scratch-'));
    store = createLocalObjectStore({ root });
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  });

  async function open(s: ObjectStore, key: string): Promise<ParquetFileHandle> {
    return openParquetFile(faultTaggingSource(s, key, (await s.head(key))!.size));
  }
  const merge = async (inputs: ParquetFileHandle[], options: { tenant?: string; budget?: number } = {}) =>
    mergeSortedInto(inputs, await LogsParquetWriter.create(), {
      scratchDir: scratch,
      memoryBudgetBytes: options.budget ?? 64 * 1024 * 1024,
      ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    });

  test('a row of another tenant is a MergeInputError (tenant_mismatch) naming its input', async () => {
    const prefix = partitionPrefix('merge-tenant', SEALED_HOUR_MS);
    const ok = await writeDataFile(store, prefix, rowsFor(50, 1, SEALED_HOUR_MS, 'merge-tenant'));
    const other = await writeDataFile(store, prefix, rowsFor(50, 2, SEALED_HOUR_MS, 'someone-else'));
    const inputs = [await open(store, ok), await open(store, other)];
    await assert.rejects(merge(inputs, { tenant: 'merge-tenant' }), (e: unknown) => {
      assert.ok(e instanceof MergeInputError);
      assert.deepEqual([e.input, e.reason, e.site.kind], [1, 'tenant_mismatch', 'rows']);
      return true;
    });
    assert.equal(await merge(inputs), 100, 'without a tenant to hold to, the same inputs merge');
  });

  test('a page that does not decompress is a MergeInputError (parquet_unreadable) with its row group, in memory and spilled', async () => {
    const prefix = partitionPrefix('merge-rot', SEALED_HOUR_MS);
    const ok = await writeDataFile(store, prefix, rowsFor(300, 1, SEALED_HOUR_MS, 'merge-rot'), 100);
    const rot = await writeDataFile(store, prefix, rowsFor(300, 2, SEALED_HOUR_MS, 'merge-rot'), 100);
    await flipPageBit(store, rot, 'attributes', 2);
    const inputs = [await open(store, ok), await open(store, rot)];
    for (const budget of [64 * 1024 * 1024, 64 * 1024]) {
      await assert.rejects(merge(inputs, { tenant: 'merge-rot', budget }), (e: unknown) => {
        assert.ok(e instanceof MergeInputError, String(e));
        assert.equal(e.input, 1);
        assert.equal(e.reason, 'parquet_unreadable');
        assert.ok(e.site.kind === 'rows' && e.site.group === 2, JSON.stringify(e.site));
        return true;
      });
    }
  });

  test('a storage fault during the merge propagates as thrown, never as a MergeInputError', async () => {
    const prefix = partitionPrefix('merge-outage', SEALED_HOUR_MS);
    const a = await writeDataFile(store, prefix, rowsFor(100, 1, SEALED_HOUR_MS, 'merge-outage'));
    // Footers read while the store is up; then every range read fails, with a typed outage or a raw error.
    for (const fault of [new StorageUnavailableError('get_range', a, 3, 'timeout'), new Error('socket hang up')]) {
      let down = false;
      const flaky = withGetRange(store, (...x) => (down ? Promise.reject(fault) : store.getRange(...x)));
      const file = await open(flaky, a);
      down = true;
      await assert.rejects(merge([file], { tenant: 'merge-outage' }), (e: unknown) => {
        assert.equal(e, fault, "the store's own error, not attributed to the input");
        return true;
      });
    }
  });
});

/** A store that behaves like `inner` except for `getRange`. */
function withGetRange(inner: ObjectStore, getRange: ObjectStore['getRange']): ObjectStore {
  return {
    put: (...a: Parameters<ObjectStore['put']>) => inner.put(...a),
    putConditional: (...a: Parameters<ObjectStore['putConditional']>) => inner.putConditional(...a),
    get: (...a: Parameters<ObjectStore['get']>) => inner.get(...a),
    getVersioned: (...a: Parameters<ObjectStore['getVersioned']>) => inner.getVersioned(...a),
    getRange,
    head: (...a: Parameters<ObjectStore['head']>) => inner.head(...a),
    list: (...a: Parameters<ObjectStore['list']>) => inner.list(...a),
    delete: (...a: Parameters<ObjectStore['delete']>) => inner.delete(...a),
  };
}
