/**
 * @module decode-protobuf
 * Hand-written decoder of a binary `ExportLogsServiceRequest` straight into flat {@link LogRecord}s. Records of
 * one ResourceLogs share one `resource` object and records of one ScopeLogs share one `scope` object.
 *
 * Wire rules (packages/otlp/README.md, "Protobuf rules"): unknown fields are skipped by wire type; groups and wire
 * types 6/7 are rejected; a known field with the wrong wire type is rejected; scalars seen twice: last wins;
 * non-repeated messages seen twice (resource, scope, body, KeyValue.value, array/kvlist values) are merged;
 * oneof members: last wins; int64 exactly as `bigint`; uint32 and enums keep the low 32 bits.
 */
import type { AnyValue, KeyValue, LogRecord, Result } from '@sluice/core';
import { EMPTY_VALUE, err, ok } from '@sluice/core';
import type { OtlpDecodeError } from './errors.js';
import { DecodeFailure, decodeError } from './errors.js';
import { WIRE, WireReader } from './wire-reader.js';

/** Deepest AnyValue nesting accepted (a body or attribute value is level 1). Deeper input is refused. */
export const MAX_ANY_VALUE_DEPTH = 64;

const M_REQUEST = 'ExportLogsServiceRequest';
const M_RESOURCE_LOGS = 'ResourceLogs';
const M_RESOURCE = 'Resource';
const M_SCOPE_LOGS = 'ScopeLogs';
const M_SCOPE = 'InstrumentationScope';
const M_LOG_RECORD = 'LogRecord';
const M_KEY_VALUE = 'KeyValue';
const M_ANY_VALUE = 'AnyValue';
const M_ARRAY_VALUE = 'ArrayValue';
const M_KV_LIST = 'KeyValueList';

interface MutableResource {
  attributes: KeyValue[];
  droppedAttributesCount: number;
  schemaUrl: string;
}

interface MutableScope {
  name: string;
  version: string;
  attributes: KeyValue[];
  droppedAttributesCount: number;
  schemaUrl: string;
}

/**
 * Decodes a binary OTLP `ExportLogsServiceRequest` (also valid for `LogsData`) into flat records.
 *
 * Never throws on any input: malformed bytes give `{ ok: false, error }` with a message naming the field, the
 * message type and the byte offset. Strings must be valid UTF-8; `bytes` fields (ids, bytes values) are copied,
 * so the result never aliases `bytes`.
 */
export function decodeLogsProtobuf(bytes: Uint8Array): Result<LogRecord[], OtlpDecodeError> {
  const r = new WireReader(bytes);
  const out: LogRecord[] = [];
  const end = bytes.byteLength;
  try {
    while (r.pos < end) {
      const keyAt = r.pos;
      const key = r.key(end, M_REQUEST);
      const field = key >>> 3;
      const wt = key & 7;
      if (field === 1) {
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'resource_logs', wt, WIRE.LEN, M_REQUEST, keyAt);
        decodeResourceLogs(r, r.lengthEnd(end, 1, M_REQUEST), out);
      } else {
        r.skip(wt, field, end, M_REQUEST, keyAt);
      }
    }
  } catch (e) {
    if (e instanceof DecodeFailure) return err(decodeError(e.message));
    throw e;
  }
  return ok(out);
}

function decodeResourceLogs(r: WireReader, end: number, out: LogRecord[]): void {
  const resource: MutableResource = { attributes: [], droppedAttributesCount: 0, schemaUrl: '' };
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_RESOURCE_LOGS);
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'resource', wt, WIRE.LEN, M_RESOURCE_LOGS, keyAt);
        decodeResource(r, r.lengthEnd(end, 1, M_RESOURCE_LOGS), resource);
        break;
      case 2:
        if (wt !== WIRE.LEN) r.wrongWireType(2, 'scope_logs', wt, WIRE.LEN, M_RESOURCE_LOGS, keyAt);
        decodeScopeLogs(r, r.lengthEnd(end, 2, M_RESOURCE_LOGS), resource, out);
        break;
      case 3:
        if (wt !== WIRE.LEN) r.wrongWireType(3, 'schema_url', wt, WIRE.LEN, M_RESOURCE_LOGS, keyAt);
        resource.schemaUrl = r.string(r.lengthEnd(end, 3, M_RESOURCE_LOGS), 3, M_RESOURCE_LOGS);
        break;
      default:
        r.skip(wt, field, end, M_RESOURCE_LOGS, keyAt);
    }
  }
}

/** Merges one `Resource` message into `resource` (attributes append, scalars last-wins). */
function decodeResource(r: WireReader, end: number, resource: MutableResource): void {
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_RESOURCE);
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'attributes', wt, WIRE.LEN, M_RESOURCE, keyAt);
        resource.attributes.push(decodeKeyValue(r, r.lengthEnd(end, 1, M_RESOURCE), 0));
        break;
      case 2:
        if (wt !== WIRE.VARINT) r.wrongWireType(2, 'dropped_attributes_count', wt, WIRE.VARINT, M_RESOURCE, keyAt);
        resource.droppedAttributesCount = r.varint32(end, M_RESOURCE) >>> 0;
        break;
      default: // 3 = entity_refs (Development): not represented, skipped
        r.skip(wt, field, end, M_RESOURCE, keyAt);
    }
  }
}

function decodeScopeLogs(r: WireReader, end: number, resource: MutableResource, out: LogRecord[]): void {
  const scope: MutableScope = { name: '', version: '', attributes: [], droppedAttributesCount: 0, schemaUrl: '' };
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_SCOPE_LOGS);
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'scope', wt, WIRE.LEN, M_SCOPE_LOGS, keyAt);
        decodeScope(r, r.lengthEnd(end, 1, M_SCOPE_LOGS), scope);
        break;
      case 2:
        if (wt !== WIRE.LEN) r.wrongWireType(2, 'log_records', wt, WIRE.LEN, M_SCOPE_LOGS, keyAt);
        out.push(decodeLogRecord(r, r.lengthEnd(end, 2, M_SCOPE_LOGS), resource, scope));
        break;
      case 3:
        if (wt !== WIRE.LEN) r.wrongWireType(3, 'schema_url', wt, WIRE.LEN, M_SCOPE_LOGS, keyAt);
        scope.schemaUrl = r.string(r.lengthEnd(end, 3, M_SCOPE_LOGS), 3, M_SCOPE_LOGS);
        break;
      default:
        r.skip(wt, field, end, M_SCOPE_LOGS, keyAt);
    }
  }
}

/** Merges one `InstrumentationScope` message into `scope`. */
function decodeScope(r: WireReader, end: number, scope: MutableScope): void {
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_SCOPE);
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'name', wt, WIRE.LEN, M_SCOPE, keyAt);
        scope.name = r.string(r.lengthEnd(end, 1, M_SCOPE), 1, M_SCOPE);
        break;
      case 2:
        if (wt !== WIRE.LEN) r.wrongWireType(2, 'version', wt, WIRE.LEN, M_SCOPE, keyAt);
        scope.version = r.string(r.lengthEnd(end, 2, M_SCOPE), 2, M_SCOPE);
        break;
      case 3:
        if (wt !== WIRE.LEN) r.wrongWireType(3, 'attributes', wt, WIRE.LEN, M_SCOPE, keyAt);
        scope.attributes.push(decodeKeyValue(r, r.lengthEnd(end, 3, M_SCOPE), 0));
        break;
      case 4:
        if (wt !== WIRE.VARINT) r.wrongWireType(4, 'dropped_attributes_count', wt, WIRE.VARINT, M_SCOPE, keyAt);
        scope.droppedAttributesCount = r.varint32(end, M_SCOPE) >>> 0;
        break;
      default:
        r.skip(wt, field, end, M_SCOPE, keyAt);
    }
  }
}

function decodeLogRecord(r: WireReader, end: number, resource: MutableResource, scope: MutableScope): LogRecord {
  let timeUnixNano = 0n;
  let observedTimeUnixNano = 0n;
  let severityNumber = 0;
  let severityText = '';
  let body: AnyValue | null = null;
  const attributes: KeyValue[] = [];
  let droppedAttributesCount = 0;
  let flags = 0;
  let traceId: Uint8Array = NO_BYTES;
  let spanId: Uint8Array = NO_BYTES;
  let eventName = '';
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_LOG_RECORD);
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.I64) r.wrongWireType(1, 'time_unix_nano', wt, WIRE.I64, M_LOG_RECORD, keyAt);
        timeUnixNano = r.fixed64(end, M_LOG_RECORD);
        break;
      case 2:
        if (wt !== WIRE.VARINT) r.wrongWireType(2, 'severity_number', wt, WIRE.VARINT, M_LOG_RECORD, keyAt);
        severityNumber = r.varint32(end, M_LOG_RECORD);
        break;
      case 3:
        if (wt !== WIRE.LEN) r.wrongWireType(3, 'severity_text', wt, WIRE.LEN, M_LOG_RECORD, keyAt);
        severityText = r.string(r.lengthEnd(end, 3, M_LOG_RECORD), 3, M_LOG_RECORD);
        break;
      case 5:
        if (wt !== WIRE.LEN) r.wrongWireType(5, 'body', wt, WIRE.LEN, M_LOG_RECORD, keyAt);
        body = decodeAnyValue(r, r.lengthEnd(end, 5, M_LOG_RECORD), 1, body);
        break;
      case 6:
        if (wt !== WIRE.LEN) r.wrongWireType(6, 'attributes', wt, WIRE.LEN, M_LOG_RECORD, keyAt);
        attributes.push(decodeKeyValue(r, r.lengthEnd(end, 6, M_LOG_RECORD), 0));
        break;
      case 7:
        if (wt !== WIRE.VARINT) r.wrongWireType(7, 'dropped_attributes_count', wt, WIRE.VARINT, M_LOG_RECORD, keyAt);
        droppedAttributesCount = r.varint32(end, M_LOG_RECORD) >>> 0;
        break;
      case 8:
        if (wt !== WIRE.I32) r.wrongWireType(8, 'flags', wt, WIRE.I32, M_LOG_RECORD, keyAt);
        flags = r.fixed32(end, M_LOG_RECORD);
        break;
      case 9:
        if (wt !== WIRE.LEN) r.wrongWireType(9, 'trace_id', wt, WIRE.LEN, M_LOG_RECORD, keyAt);
        traceId = r.bytes(r.lengthEnd(end, 9, M_LOG_RECORD));
        break;
      case 10:
        if (wt !== WIRE.LEN) r.wrongWireType(10, 'span_id', wt, WIRE.LEN, M_LOG_RECORD, keyAt);
        spanId = r.bytes(r.lengthEnd(end, 10, M_LOG_RECORD));
        break;
      case 11:
        if (wt !== WIRE.I64) r.wrongWireType(11, 'observed_time_unix_nano', wt, WIRE.I64, M_LOG_RECORD, keyAt);
        observedTimeUnixNano = r.fixed64(end, M_LOG_RECORD);
        break;
      case 12:
        if (wt !== WIRE.LEN) r.wrongWireType(12, 'event_name', wt, WIRE.LEN, M_LOG_RECORD, keyAt);
        eventName = r.string(r.lengthEnd(end, 12, M_LOG_RECORD), 12, M_LOG_RECORD);
        break;
      default:
        r.skip(wt, field, end, M_LOG_RECORD, keyAt);
    }
  }
  return {
    timeUnixNano,
    observedTimeUnixNano,
    severityNumber,
    severityText,
    body,
    attributes,
    droppedAttributesCount,
    flags,
    traceId,
    spanId,
    eventName,
    resource,
    scope,
  };
}

const NO_BYTES = new Uint8Array(0);

function decodeKeyValue(r: WireReader, end: number, depth: number): KeyValue {
  let key = '';
  let value: AnyValue | null = null;
  while (r.pos < end) {
    const keyAt = r.pos;
    const k = r.key(end, M_KEY_VALUE);
    const field = k >>> 3;
    const wt = k & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'key', wt, WIRE.LEN, M_KEY_VALUE, keyAt);
        key = r.string(r.lengthEnd(end, 1, M_KEY_VALUE), 1, M_KEY_VALUE);
        break;
      case 2:
        if (wt !== WIRE.LEN) r.wrongWireType(2, 'value', wt, WIRE.LEN, M_KEY_VALUE, keyAt);
        value = decodeAnyValue(r, r.lengthEnd(end, 2, M_KEY_VALUE), depth + 1, value);
        break;
      default: // 3 = key_strindex (profiles only): ignored
        r.skip(wt, field, end, M_KEY_VALUE, keyAt);
    }
  }
  return { key, value: value ?? EMPTY_VALUE };
}

/**
 * Decodes one AnyValue, merged onto `prev` (the same field seen earlier, or null). Oneof: the last member wins;
 * an array/kvlist member that repeats an array/kvlist appends to it (protobuf message merge).
 */
function decodeAnyValue(r: WireReader, end: number, depth: number, prev: AnyValue | null): AnyValue {
  if (depth > MAX_ANY_VALUE_DEPTH) r.fail(`AnyValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
  let v: AnyValue = prev ?? EMPTY_VALUE;
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_ANY_VALUE);
    const field = key >>> 3;
    const wt = key & 7;
    switch (field) {
      case 1:
        if (wt !== WIRE.LEN) r.wrongWireType(1, 'string_value', wt, WIRE.LEN, M_ANY_VALUE, keyAt);
        v = { kind: 'string', value: r.string(r.lengthEnd(end, 1, M_ANY_VALUE), 1, M_ANY_VALUE) };
        break;
      case 2:
        if (wt !== WIRE.VARINT) r.wrongWireType(2, 'bool_value', wt, WIRE.VARINT, M_ANY_VALUE, keyAt);
        v = { kind: 'bool', value: r.varintBool(end, M_ANY_VALUE) };
        break;
      case 3:
        if (wt !== WIRE.VARINT) r.wrongWireType(3, 'int_value', wt, WIRE.VARINT, M_ANY_VALUE, keyAt);
        v = { kind: 'int', value: r.varint64(end, M_ANY_VALUE) };
        break;
      case 4:
        if (wt !== WIRE.I64) r.wrongWireType(4, 'double_value', wt, WIRE.I64, M_ANY_VALUE, keyAt);
        v = { kind: 'double', value: r.double(end, M_ANY_VALUE) };
        break;
      case 5: {
        if (wt !== WIRE.LEN) r.wrongWireType(5, 'array_value', wt, WIRE.LEN, M_ANY_VALUE, keyAt);
        const stop = r.lengthEnd(end, 5, M_ANY_VALUE);
        if (v.kind !== 'array') v = { kind: 'array', values: [] };
        decodeArrayValue(r, stop, depth, v.values as AnyValue[]);
        break;
      }
      case 6: {
        if (wt !== WIRE.LEN) r.wrongWireType(6, 'kvlist_value', wt, WIRE.LEN, M_ANY_VALUE, keyAt);
        const stop = r.lengthEnd(end, 6, M_ANY_VALUE);
        if (v.kind !== 'kvlist') v = { kind: 'kvlist', values: [] };
        decodeKeyValueList(r, stop, depth, v.values as KeyValue[]);
        break;
      }
      case 7:
        if (wt !== WIRE.LEN) r.wrongWireType(7, 'bytes_value', wt, WIRE.LEN, M_ANY_VALUE, keyAt);
        v = { kind: 'bytes', value: r.bytes(r.lengthEnd(end, 7, M_ANY_VALUE)) };
        break;
      case 8:
        // string_value_strindex (profiles only): logs cannot resolve it; as the last oneof member it leaves no value.
        if (wt !== WIRE.VARINT) r.wrongWireType(8, 'string_value_strindex', wt, WIRE.VARINT, M_ANY_VALUE, keyAt);
        r.varint32(end, M_ANY_VALUE);
        v = EMPTY_VALUE;
        break;
      default:
        r.skip(wt, field, end, M_ANY_VALUE, keyAt);
    }
  }
  return v;
}

function decodeArrayValue(r: WireReader, end: number, depth: number, values: AnyValue[]): void {
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_ARRAY_VALUE);
    const field = key >>> 3;
    const wt = key & 7;
    if (field === 1) {
      if (wt !== WIRE.LEN) r.wrongWireType(1, 'values', wt, WIRE.LEN, M_ARRAY_VALUE, keyAt);
      values.push(decodeAnyValue(r, r.lengthEnd(end, 1, M_ARRAY_VALUE), depth + 1, null));
    } else {
      r.skip(wt, field, end, M_ARRAY_VALUE, keyAt);
    }
  }
}

function decodeKeyValueList(r: WireReader, end: number, depth: number, values: KeyValue[]): void {
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, M_KV_LIST);
    const field = key >>> 3;
    const wt = key & 7;
    if (field === 1) {
      if (wt !== WIRE.LEN) r.wrongWireType(1, 'values', wt, WIRE.LEN, M_KV_LIST, keyAt);
      values.push(decodeKeyValue(r, r.lengthEnd(end, 1, M_KV_LIST), depth));
    } else {
      r.skip(wt, field, end, M_KV_LIST, keyAt);
    }
  }
}
