/**
 * @module compaction-audit
 * The compactor's audit events (docs/design/storage-format.md), each written as a one-line JSON-lines object at
 * `audit/tenant_id=<enc>/year=YYYY/month=MM/day=DD/<uuidv7>.jsonl` (the day of the event, UTC). The `.jsonl`
 * suffix keeps them apart from the template audit Parquet files, which readers select by `.parquet`.
 *
 * - `compaction` (`event_kind` 3), one per committed compaction:
 *   `{"event_kind":3,"event_type":"compaction","tenant_id":…,"timestamp_unix_nano":"<u64 decimal>",
 *   "partition":"data/…/hour=HH/","generation":n,"inputs":[…],"output":"<name>.parquet","rows":n,
 *   "input_bytes":n,"output_bytes":n}`.
 * - `quarantine` (`event_kind` 7), one per corrupt object taken out of a partition's live set:
 *   `{"event_kind":7,"event_type":"quarantine","tenant_id":…,"timestamp_unix_nano":"<u64 decimal>",
 *   "partition":"data/…/hour=HH/","key":"data/…","reason":"parquet_unreadable","quarantine_key":"quarantine/data/…"
 *   | null,"bytes":n | null,"generation":n | null,"detail":"…"}`. `quarantine_key` and `bytes` are null when nothing
 *   was moved (a manifest naming a missing file); `generation` is the manifest generation committed without the
 *   object, null when the live set did not change (the file was already unlisted).
 */
import { auditFileKey } from '@sluice/storage';
import type { CorruptReason } from '@sluice/storage';

/** `event_kind` ordinal of a compaction event. */
export const COMPACTION_EVENT_KIND = 3;

/**
 * `event_kind` ordinal of a quarantine event: 7, above every ordinal in use (template audit 0 and 6, compaction
 * 3), so one `event_kind` column can hold every audit event and the gaps stay free.
 */
export const QUARANTINE_EVENT_KIND = 7;

/** One committed compaction. */
export interface CompactionAuditEvent {
  readonly tenantId: string;
  readonly timestampUnixNano: bigint;
  readonly partition: string;
  readonly generation: number;
  readonly inputs: readonly string[];
  readonly output: string;
  readonly rows: number;
  readonly inputBytes: number;
  readonly outputBytes: number;
}

/** The object key of the audit record `uuid` for an event at `timeNs`. */
export function compactionAuditKey(tenant: string, timeNs: bigint, uuid: string): string {
  return `${auditFileKey(tenant, timeNs, uuid).slice(0, -'.parquet'.length)}.jsonl`;
}

/** Encodes one event as a JSON line (newline-terminated). */
export function encodeCompactionAudit(e: CompactionAuditEvent): Uint8Array {
  const line = JSON.stringify({
    event_kind: COMPACTION_EVENT_KIND,
    event_type: 'compaction',
    tenant_id: e.tenantId,
    timestamp_unix_nano: e.timestampUnixNano.toString(),
    partition: e.partition,
    generation: e.generation,
    inputs: e.inputs,
    output: e.output,
    rows: e.rows,
    input_bytes: e.inputBytes,
    output_bytes: e.outputBytes,
  });
  return new TextEncoder().encode(`${line}\n`);
}

/** One corrupt object taken out of a partition's live set. */
export interface QuarantineAuditEvent {
  readonly tenantId: string;
  readonly timestampUnixNano: bigint;
  readonly partition: string;
  /** The corrupt object's key (a data file or the manifest). */
  readonly key: string;
  readonly reason: CorruptReason;
  /** Where its bytes are now, or `null` when nothing was moved (`manifest_missing_file`). */
  readonly quarantineKey: string | null;
  /** Size of the quarantined bytes, or `null` when nothing was moved. */
  readonly bytes: number | null;
  /** The manifest generation committed without it, or `null` when the live set did not change. */
  readonly generation: number | null;
  /** What failed, in one line. */
  readonly detail: string;
}

/** Encodes one quarantine event as a JSON line (newline-terminated). */
export function encodeQuarantineAudit(e: QuarantineAuditEvent): Uint8Array {
  const line = JSON.stringify({
    event_kind: QUARANTINE_EVENT_KIND,
    event_type: 'quarantine',
    tenant_id: e.tenantId,
    timestamp_unix_nano: e.timestampUnixNano.toString(),
    partition: e.partition,
    key: e.key,
    reason: e.reason,
    quarantine_key: e.quarantineKey,
    bytes: e.bytes,
    generation: e.generation,
    detail: e.detail,
  });
  return new TextEncoder().encode(`${line}\n`);
}
