/**
 * @module log-record
 * The flat log record every layer exchanges: one OTLP LogRecord together with the resource and scope it came
 * from. Records decoded from one ResourceLogs/ScopeLogs share the same `resource`/`scope` objects.
 */
import type { AnyValue, KeyValue } from './any-value.js';

/** OTLP Resource plus the enclosing ResourceLogs' schema URL. */
export interface ResourceInfo {
  readonly attributes: readonly KeyValue[];
  readonly droppedAttributesCount: number;
  /** `ResourceLogs.schema_url`; `''` when not sent. */
  readonly schemaUrl: string;
}

/** OTLP InstrumentationScope plus the enclosing ScopeLogs' schema URL. */
export interface ScopeInfo {
  readonly name: string;
  readonly version: string;
  readonly attributes: readonly KeyValue[];
  readonly droppedAttributesCount: number;
  /** `ScopeLogs.schema_url`; `''` when not sent. */
  readonly schemaUrl: string;
}

/** One log record, exactly as sent (times in ns as `bigint`, ids as raw bytes). */
export interface LogRecord {
  /** `time_unix_nano`; `0n` = unknown. */
  readonly timeUnixNano: bigint;
  /** `observed_time_unix_nano`; `0n` = unknown. */
  readonly observedTimeUnixNano: bigint;
  /** 0..255 kept as sent (open enum; out-of-range wire values are clamped by the decoder's caller, not here). */
  readonly severityNumber: number;
  readonly severityText: string;
  /** `null` when the record had no body field at all. */
  readonly body: AnyValue | null;
  readonly attributes: readonly KeyValue[];
  readonly droppedAttributesCount: number;
  /** `flags` as sent (uint32). */
  readonly flags: number;
  /** Raw trace id bytes as sent (normally 16 bytes; length 0 when absent). */
  readonly traceId: Uint8Array;
  /** Raw span id bytes as sent (normally 8 bytes; length 0 when absent). */
  readonly spanId: Uint8Array;
  readonly eventName: string;
  readonly resource: ResourceInfo;
  readonly scope: ScopeInfo;
}

/** The effective timestamp: `time_unix_nano` if non-zero, else `observed_time_unix_nano` (may be `0n`). */
export function effectiveTimeUnixNano(record: Pick<LogRecord, 'timeUnixNano' | 'observedTimeUnixNano'>): bigint {
  return record.timeUnixNano !== 0n ? record.timeUnixNano : record.observedTimeUnixNano;
}
