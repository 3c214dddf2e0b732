/**
 * @module write-flush
 * The storing half of a flush, in the order that keeps it safe: the template audit events first (the audit
 * barrier: the events that define a template version are stored before rows that use it), then one Parquet
 * file per (tenant, hour) partition. The caller advances the checkpoint only after this resolved.
 */
import { effectiveTimeUnixNano, type TemplateAuditEvent } from '@sluice/core';
import { auditFileKey, dataFileKey, encodeAuditParquet, encodeLogsParquet, uuidv7 } from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';
import type { Partition } from './partition-buffer.js';

const NS_PER_DAY = 86_400_000_000_000n;

/** What one flush stored. */
export interface FlushWritten {
  readonly records: number;
  readonly files: number;
  /** Parquet bytes of the data files. */
  readonly bytes: number;
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

/**
 * Stores template audit events, one audit file per (tenant, UTC day). Runs before {@link writePartitions} in a
 * flush (the audit barrier).
 * @throws the store's or the encoder's error (the caller keeps the events and writes them again).
 */
export async function writeAudit(store: ObjectStore, audit: readonly TemplateAuditEvent[]): Promise<void> {
  for (const events of groupAudit(audit)) {
    const first = events[0]!;
    await store.put(auditFileKey(first.tenantId, first.timestampUnixNano, uuidv7()), await encodeAuditParquet(events));
  }
}

/**
 * Stores each partition's rows, sorted by effective time (in place), as one new Parquet data file.
 * @throws the store's or the encoder's error; files stored before it stay (at-least-once: the caller buffers the
 * rows again and the retry stores them once more).
 */
export async function writePartitions(store: ObjectStore, partitions: readonly Partition[]): Promise<FlushWritten> {
  let records = 0;
  let bytes = 0;
  let files = 0;
  for (const partition of partitions) {
    const rows = partition.rows.sort((a, b) => {
      const ta = effectiveTimeUnixNano(a.record);
      const tb = effectiveTimeUnixNano(b.record);
      return ta < tb ? -1 : ta > tb ? 1 : 0;
    });
    const encoded = await encodeLogsParquet(rows);
    await store.put(dataFileKey(partition.tenant, effectiveTimeUnixNano(rows[0]!.record), uuidv7()), encoded);
    records += rows.length;
    bytes += encoded.length;
    files++;
  }
  return { records, files, bytes };
}
