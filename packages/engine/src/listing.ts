/**
 * @module listing
 * File-set resolution for one tenant and window (docs/design/query-governance.md, docs/design/storage-format.md): one ordered listing
 * of `data/tenant_id=<enc>/` from the window's first hour partition to its last (see {@link walkPartitions}).
 * Every listed entry counts against `max_listed_objects`; the walk stops at cap + 1. Per hour
 * partition a listed `manifest.json` is authoritative (refused unfetched above 1 MiB), else every `*.parquet` is
 * live. The live set is checked against `max_files` before any footer is read.
 *
 * A manifest that does not parse, names a foreign path, or names a file that does not exist is a corrupt object
 * (its key and reason go to the query's {@link CorruptObjects}): under `skip` its whole partition is left out,
 * since a damaged manifest says nothing trustworthy about which files are live.
 */
import type { ObjectStore } from '@sluice/storage';
import { MAX_MANIFEST_BYTES, ManifestFormatError, parsePartitionManifest, tenantDataPrefix } from '@sluice/storage';
import type { TimeWindow } from '@sluice/query';
import { encodeTenantForKey } from '@sluice/core';
import type { CorruptObjects } from './corrupt-objects.js';
import { QueryAbort, STORAGE_FAILURE_MESSAGE, checkAborted } from './failures.js';

/** A live data file. */
export interface LiveFile {
  readonly key: string;
  readonly size: number;
}

/** Caps applied during listing. */
export interface ListingLimits {
  readonly maxListedObjects: number;
  readonly maxFiles: number;
}

const MS_NS = 1_000_000n;

/** Counts listed entries and abandons the walk past the cap. */
class ListCounter {
  count = 0;
  constructor(private readonly cap: number) {}
  add(): void {
    this.count++;
    if (this.count > this.cap)
      throw new QueryAbort({ kind: 'query_file_limit', cap: 'max_listed_objects', limit: this.cap });
  }
}

/** Zero-padded `year=YYYY/month=MM/day=DD/[hour=HH/]` for the partition starting at `ms`. */
function partitionPath(ms: number, depth: 3 | 4): string {
  const d = new Date(ms);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const day = `year=${String(d.getUTCFullYear()).padStart(4, '0')}/month=${p2(d.getUTCMonth() + 1)}/day=${p2(d.getUTCDate())}/`;
  return depth === 4 ? `${day}hour=${p2(d.getUTCHours())}/` : day;
}

const LEAF_RE: Readonly<Record<3 | 4, RegExp>> = {
  3: /^year=\d{4}\/month=\d{2}\/day=\d{2}\//,
  4: /^year=\d{4}\/month=\d{2}\/day=\d{2}\/hour=\d{2}\//,
};

/**
 * Walks the hour partitions (data, depth 4) or day partitions (audit, depth 3) overlapping the window and yields
 * the objects of each, partition by partition. Partition keys are zero-padded, so their lexicographic order is
 * their time order: the walk is ONE listing of the tenant prefix that starts after the window's first partition
 * (`startAfter`) and is abandoned at the first key past its last one. Old partitions are never listed, the
 * listing stream is dropped as soon as the window (or the cap) is passed, and no delimiter is needed (some
 * S3-protocol servers omit common prefixes that hold no object directly).
 */
export async function walkPartitions(
  store: ObjectStore,
  root: string,
  depth: 3 | 4,
  window: TimeWindow,
  counter: { add(): void },
  signal: AbortSignal | undefined,
  onLeaf: (prefix: string, objects: readonly { key: string; size: number }[]) => Promise<void> | void,
): Promise<void> {
  if (window.toNs <= window.fromNs) return;
  const unitMs = depth === 4 ? 3_600_000 : 86_400_000;
  const fromMs = Math.max(0, Number(window.fromNs / MS_NS));
  const lastMs = Math.max(0, Number((window.toNs - 1n) / MS_NS));
  const firstUnit = Math.floor(fromMs / unitMs) * unitMs;
  const endUnit = Math.floor(lastMs / unitMs) * unitMs + unitMs;
  const startAfter = root + partitionPath(firstUnit, depth);
  const endKey = root + partitionPath(endUnit, depth);
  let leaf: string | null = null;
  let objects: { key: string; size: number }[] = [];
  const flush = async (): Promise<void> => {
    if (leaf !== null) await onLeaf(leaf, objects);
    leaf = null;
    objects = [];
  };
  // `startAfter` is the first partition's own prefix: every key inside it sorts after it, every earlier key before.
  for await (const e of store.list({
    prefix: root,
    startAfter: startAfter.slice(0, -1),
    ...(signal ? { signal } : {}),
  })) {
    checkAborted(signal);
    counter.add();
    if (e.kind !== 'object') continue;
    if (e.key >= endKey) break;
    const rest = e.key.slice(root.length);
    const m = LEAF_RE[depth].exec(rest);
    if (m === null || rest.slice(m[0].length).includes('/')) continue;
    const prefix = root + m[0];
    if (prefix < startAfter) continue;
    if (prefix !== leaf) {
      await flush();
      leaf = prefix;
    }
    objects.push({ key: e.key, size: e.size });
  }
  await flush();
}

/** The `audit/tenant_id=<enc>/` prefix. */
export function tenantAuditPrefix(tenant: string): string {
  return `audit/tenant_id=${encodeTenantForKey(tenant)}/`;
}

/**
 * Resolves the live data files of `tenant` within `window`, in key order (partition, then UUIDv7 = creation
 * order). Throws a `query_file_limit` {@link QueryAbort} for any cap; a corrupt manifest is met on `corrupt`
 * (which throws under `fail`, and under `skip` the partition is left out).
 */
export async function listLiveFiles(
  store: ObjectStore,
  tenant: string,
  window: TimeWindow,
  limits: ListingLimits,
  signal: AbortSignal | undefined,
  corrupt: CorruptObjects,
): Promise<{ files: LiveFile[]; listed: number }> {
  const root = tenantDataPrefix(tenant);
  const counter = new ListCounter(limits.maxListedObjects);
  const partitions: { prefix: string; objects: readonly { key: string; size: number }[] }[] = [];
  await walkPartitions(store, root, 4, window, counter, signal, (prefix, objects) => {
    partitions.push({ prefix, objects });
  });
  const files: LiveFile[] = [];
  const checkCap = (count: number): void => {
    if (count > limits.maxFiles)
      throw new QueryAbort({ kind: 'query_file_limit', cap: 'max_files', limit: limits.maxFiles });
  };
  const add = (f: LiveFile): void => {
    files.push(f);
    checkCap(files.length);
  };
  const opts = signal !== undefined ? { signal } : undefined;
  for (const { prefix, objects } of partitions) {
    const manifest = objects.find((o) => o.key === `${prefix}manifest.json`);
    if (manifest === undefined) {
      for (const o of objects) if (o.key.endsWith('.parquet')) add({ key: o.key, size: o.size });
      continue;
    }
    if (manifest.size > MAX_MANIFEST_BYTES)
      throw new QueryAbort({ kind: 'query_file_limit', cap: 'manifest_bytes', limit: MAX_MANIFEST_BYTES });
    checkAborted(signal);
    const bytes = await store.get(manifest.key, opts);
    if (bytes === null) continue; // removed since the listing: the partition was compacted away
    let names: readonly string[];
    try {
      names = parsePartitionManifest(bytes).files;
    } catch (e) {
      if (!(e instanceof ManifestFormatError)) throw e;
      corrupt.meet(manifest.key, e.reason);
      continue;
    }
    const sizes = new Map(objects.map((o) => [o.key, o.size]));
    const live: LiveFile[] = [];
    let missing = false;
    for (const name of names) {
      const key = `${prefix}${name}`;
      let size = sizes.get(key);
      if (size === undefined) {
        // Named by the manifest but not in our listing: a compaction committed between the listing and the
        // manifest read. Ask for it directly rather than reading the partition as empty. Compactors write a file
        // before the manifest that names it, so one that is still not there was never written or was lost.
        checkAborted(signal);
        const head = await store.head(key, opts);
        if (head === null) {
          missing = true;
          break;
        }
        size = head.size;
      }
      live.push({ key, size });
      checkCap(files.length + live.length);
    }
    if (missing) {
      corrupt.meet(manifest.key, 'manifest_missing_file');
      continue;
    }
    for (const f of live) add(f);
  }
  // Keys are built from the tenant's own prefix and validated names; anything else is a bug, not damage.
  for (const f of files)
    if (!f.key.startsWith(root)) throw new QueryAbort({ kind: 'internal', message: STORAGE_FAILURE_MESSAGE });
  return { files, listed: counter.count };
}

/** A counter for audit listings (same cap as data listings). */
export function listCounter(cap: number): { add(): void; readonly count: number } {
  return new ListCounter(cap);
}
