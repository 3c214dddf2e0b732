/**
 * @module compaction-audit
 * The `compaction` audit event (`event_kind` 3; docs/design/storage-format.md), written as a one-line JSON-lines object at
 * `audit/tenant_id=<enc>/year=YYYY/month=MM/day=DD/<uuidv7>.jsonl` (the day of the commit, UTC). The `.jsonl`
 * suffix keeps it apart from the template audit Parquet files, which readers select by `.parquet`.
 *
 * Line: `{"event_kind":3,"event_type":"compaction","tenant_id":…,"timestamp_unix_nano":"<u64 decimal>",
 * "partition":"data/…/hour=HH/","generation":n,"inputs":[…],"output":"<name>.parquet","rows":n,
 * "input_bytes":n,"output_bytes":n}`.
 */
import { auditFileKey } from '@sluice/storage';

/** `event_kind` ordinal of a compaction event. */
export const COMPACTION_EVENT_KIND = 3;

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
