/**
 * @module write-flush
 * The storing half of a flush, in the order that keeps it safe: the template audit events first (the audit
 * barrier: the events that define a template version are stored before rows that use it), then one Parquet
 * file per (tenant, hour) partition, each under a key fixed when the flush is planned (so a retry never
 * duplicates), each added to its partition's manifest when the partition has one (manifest-append.ts: late data is
 * visible at once). The caller advances the checkpoint only after {@link storeFlush} resolved.
 */
import type { TemplateAuditEvent } from '@sluice/core';
import { auditFileKey, dataFileKey, encodeAuditParquet, encodeLogRowBuffer, uuidv7 } from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';
import { appendToManifest } from './manifest-append.js';
import type { Partition } from './partition-buffer.js';

const NS_PER_DAY = 86_400_000_000_000n;

/** What one flush stored. */
export interface FlushWritten {
  readonly records: number;
  readonly files: number;
  /** Parquet bytes of the data files. */
  readonly bytes: number;
}

/** One object of a flush: its key is chosen once, when the flush is planned. */
interface PlannedObject {
  readonly key: string;
  /** Encodes the object's bytes (once; a retry reuses them). */
  readonly encode: () => Promise<Uint8Array>;
  readonly records: number;
  readonly data: boolean;
  encoded: Uint8Array | null;
  stored: boolean;
  /** A data file: added to its partition's manifest if it has one (manifest-append.ts). */
  listed: boolean;
}

/**
 * One flush's objects with their keys fixed: audit files first (the audit barrier: the events that define a
 * template version are stored before rows that use it), then one data file per (tenant, hour) partition.
 *
 * The keys are chosen once, so retrying a failed flush stores the same objects under the same keys: an object
 * whose put landed before the failure (or whose put landed although its answer was lost) is skipped or
 * overwritten with the same bytes, never stored a second time under a new name. That is what makes a flush
 * that fails half-way, or an endpoint that times out after accepting a write, store each row exactly once.
 */
export interface FlushPlan {
  readonly objects: readonly PlannedObject[];
  /** Data records in the plan. */
  readonly records: number;
}

/** Audit events per (tenant, UTC day): one audit file each. */
function groupAudit(events: readonly TemplateAuditEvent[]): TemplateAuditEvent[][] {
  const groups = new Map<string, TemplateAuditEvent[]>();
  for (const event of events) {
    const key = `${event.tenantId}\u0000${event.timestampUnixNano / NS_PER_DAY}`;
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [event]);
    else list.push(event);
  }
  return [...groups.values()];
}

/** Plans a flush of `audit` events and `partitions` (each partition's rows are stored in effective-time order). */
export function planFlush(audit: readonly TemplateAuditEvent[], partitions: readonly Partition[]): FlushPlan {
  const objects: PlannedObject[] = [];
  for (const events of groupAudit(audit)) {
    const first = events[0]!;
    objects.push({
      key: auditFileKey(first.tenantId, first.timestampUnixNano, uuidv7()),
      encode: () => encodeAuditParquet(events),
      records: 0,
      data: false,
      encoded: null,
      stored: false,
      listed: false,
    });
  }
  let records = 0;
  for (const partition of partitions) {
    const rows = partition.rows;
    if (rows.rows === 0) continue;
    // Effective-time order, equal times in arrival order (docs/design/storage-format.md, "Row buffer").
    const order = rows.sortedOrder();
    objects.push({
      key: dataFileKey(partition.tenant, rows.effectiveTimeAt(order[0]!), uuidv7()),
      encode: () => encodeLogRowBuffer(rows, undefined, order),
      records: rows.rows,
      data: true,
      encoded: null,
      stored: false,
      listed: false,
    });
    records += rows.rows;
  }
  return { objects, records };
}

/**
 * Stores every object of `plan` not stored yet, in order (audit before data). Call it again after a failure:
 * it resumes where the failure stopped, under the same keys.
 * @throws the store's or the encoder's error; what was stored before it stays stored and is not stored again.
 */
export async function storeFlush(store: ObjectStore, plan: FlushPlan): Promise<FlushWritten> {
  for (const object of plan.objects) {
    if (!object.stored) {
      object.encoded ??= await object.encode();
      await store.put(object.key, object.encoded);
      object.stored = true;
    }
    // After the put (a manifest never names a file that is not there yet); a retry redoes only what is missing.
    if (object.data && !object.listed) {
      await appendToManifest(store, object.key);
      object.listed = true;
    }
  }
  let bytes = 0;
  let files = 0;
  for (const object of plan.objects) {
    if (!object.data) continue;
    files++;
    bytes += object.encoded?.byteLength ?? 0;
    // Stored: the bytes are not needed again.
    object.encoded = null;
  }
  return { records: plan.records, files, bytes };
}
