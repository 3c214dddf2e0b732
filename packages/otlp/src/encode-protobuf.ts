/**
 * @module encode-protobuf
 * Encodes flat {@link LogRecord}s back into a binary `ExportLogsServiceRequest`. Consecutive records that share
 * the same `resource` object form one ResourceLogs, and consecutive records within it that share the same `scope`
 * object form one ScopeLogs. Round-trips exactly with {@link decodeLogsProtobuf}. Used by tests and benchmarks.
 */
import type { AnyValue, KeyValue, LogRecord, ResourceInfo, ScopeInfo } from '@sluice/core';
import { assertNever } from '@sluice/core';
import { WIRE } from './wire-reader.js';
import { WireWriter } from './wire-writer.js';

/**
 * Encodes records as an `ExportLogsServiceRequest`. Default scalars are omitted; a `null` body is omitted while
 * an `empty` body is written as an empty AnyValue, so the decoder gives back exactly the same records.
 */
export function encodeLogsProtobuf(records: readonly LogRecord[]): Uint8Array {
  const w = new WireWriter(Math.max(4096, records.length * 256));
  let i = 0;
  while (i < records.length) {
    const resource = records[i]!.resource;
    w.key(1, WIRE.LEN);
    const rl = w.begin();
    writeResource(w, resource);
    while (i < records.length && records[i]!.resource === resource) {
      const scope = records[i]!.scope;
      w.key(2, WIRE.LEN);
      const sl = w.begin();
      writeScope(w, scope);
      while (i < records.length && records[i]!.resource === resource && records[i]!.scope === scope) {
        w.key(2, WIRE.LEN);
        const lr = w.begin();
        writeLogRecord(w, records[i]!);
        w.finish(lr);
        i++;
      }
      if (scope.schemaUrl !== '') {
        w.key(3, WIRE.LEN);
        w.string(scope.schemaUrl);
      }
      w.finish(sl);
    }
    if (resource.schemaUrl !== '') {
      w.key(3, WIRE.LEN);
      w.string(resource.schemaUrl);
    }
    w.finish(rl);
  }
  return w.result();
}

function writeResource(w: WireWriter, resource: ResourceInfo): void {
  w.key(1, WIRE.LEN);
  const m = w.begin();
  writeKeyValues(w, 1, resource.attributes);
  if (resource.droppedAttributesCount !== 0) {
    w.key(2, WIRE.VARINT);
    w.uvarint(resource.droppedAttributesCount >>> 0);
  }
  w.finish(m);
}

function writeScope(w: WireWriter, scope: ScopeInfo): void {
  w.key(1, WIRE.LEN);
  const m = w.begin();
  if (scope.name !== '') {
    w.key(1, WIRE.LEN);
    w.string(scope.name);
  }
  if (scope.version !== '') {
    w.key(2, WIRE.LEN);
    w.string(scope.version);
  }
  writeKeyValues(w, 3, scope.attributes);
  if (scope.droppedAttributesCount !== 0) {
    w.key(4, WIRE.VARINT);
    w.uvarint(scope.droppedAttributesCount >>> 0);
  }
  w.finish(m);
}

function writeLogRecord(w: WireWriter, rec: LogRecord): void {
  if (rec.timeUnixNano !== 0n) {
    w.key(1, WIRE.I64);
    w.fixed64(rec.timeUnixNano);
  }
  if (rec.severityNumber !== 0) {
    w.key(2, WIRE.VARINT);
    w.int32(rec.severityNumber | 0);
  }
  if (rec.severityText !== '') {
    w.key(3, WIRE.LEN);
    w.string(rec.severityText);
  }
  if (rec.body !== null) {
    w.key(5, WIRE.LEN);
    const m = w.begin();
    writeAnyValue(w, rec.body);
    w.finish(m);
  }
  writeKeyValues(w, 6, rec.attributes);
  if (rec.droppedAttributesCount !== 0) {
    w.key(7, WIRE.VARINT);
    w.uvarint(rec.droppedAttributesCount >>> 0);
  }
  if (rec.flags !== 0) {
    w.key(8, WIRE.I32);
    w.fixed32(rec.flags);
  }
  if (rec.traceId.length !== 0) {
    w.key(9, WIRE.LEN);
    w.bytes(rec.traceId);
  }
  if (rec.spanId.length !== 0) {
    w.key(10, WIRE.LEN);
    w.bytes(rec.spanId);
  }
  if (rec.observedTimeUnixNano !== 0n) {
    w.key(11, WIRE.I64);
    w.fixed64(rec.observedTimeUnixNano);
  }
  if (rec.eventName !== '') {
    w.key(12, WIRE.LEN);
    w.string(rec.eventName);
  }
}

function writeKeyValues(w: WireWriter, field: number, values: readonly KeyValue[]): void {
  for (const kv of values) {
    w.key(field, WIRE.LEN);
    const m = w.begin();
    writeKeyValue(w, kv);
    w.finish(m);
  }
}

function writeKeyValue(w: WireWriter, kv: KeyValue): void {
  if (kv.key !== '') {
    w.key(1, WIRE.LEN);
    w.string(kv.key);
  }
  if (kv.value.kind !== 'empty') {
    w.key(2, WIRE.LEN);
    const m = w.begin();
    writeAnyValue(w, kv.value);
    w.finish(m);
  }
}

/** Writes the payload of one AnyValue (its single oneof member, or nothing for `empty`). */
function writeAnyValue(w: WireWriter, v: AnyValue): void {
  switch (v.kind) {
    case 'string':
      w.key(1, WIRE.LEN);
      w.string(v.value);
      return;
    case 'bool':
      w.key(2, WIRE.VARINT);
      w.uvarint(v.value ? 1 : 0);
      return;
    case 'int':
      w.key(3, WIRE.VARINT);
      w.int64(v.value);
      return;
    case 'double':
      w.key(4, WIRE.I64);
      w.double(v.value);
      return;
    case 'array': {
      w.key(5, WIRE.LEN);
      const m = w.begin();
      for (const item of v.values) {
        w.key(1, WIRE.LEN);
        const e = w.begin();
        writeAnyValue(w, item);
        w.finish(e);
      }
      w.finish(m);
      return;
    }
    case 'kvlist': {
      w.key(6, WIRE.LEN);
      const m = w.begin();
      writeKeyValues(w, 1, v.values);
      w.finish(m);
      return;
    }
    case 'bytes':
      w.key(7, WIRE.LEN);
      w.bytes(v.value);
      return;
    case 'empty':
      return;
    default:
      assertNever(v, 'AnyValue');
  }
}
