/**
 * @module audit-files
 * Listing a tenant's audit files (`audit/tenant_id=<enc>/year=/month=/day=/<uuidv7>.parquet`), day partitions
 * pruned by a window, every listed entry counted against `max_listed_objects`.
 */
import type { ObjectStore } from '@sluice/storage';
import type { TimeWindow } from '@sluice/query';
import { listCounter, tenantAuditPrefix, walkPartitions } from './listing.js';
import type { LiveFile } from './listing.js';

/** The whole u64 time line. */
export const ALL_TIME: TimeWindow = Object.freeze({ fromNs: 0n, toNs: 0xffff_ffff_ffff_ffffn });

/** Audit files of `tenant` whose day partition overlaps `window`, in key order. */
export async function listAuditFiles(
  store: ObjectStore,
  tenant: string,
  window: TimeWindow,
  maxListedObjects: number,
  signal: AbortSignal | undefined,
): Promise<LiveFile[]> {
  const files: LiveFile[] = [];
  const root = tenantAuditPrefix(tenant);
  await walkPartitions(store, root, 3, window, listCounter(maxListedObjects), signal, (_prefix, objects) => {
    for (const o of objects) if (o.key.endsWith('.parquet') && o.key.startsWith(root)) files.push(o);
  });
  return files;
}
