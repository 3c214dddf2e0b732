/**
 * @module validate-protobuf
 * Checks a binary `ExportLogsServiceRequest` against exactly the wire rules of {@link decodeLogsProtobuf} and
 * counts its log records, without building a record, a string or a bigint. The receiver answers an export from this
 * walk and hands the bytes to the WAL; the sink decodes them once, later (docs/design/architecture.md, step 2).
 *
 * The walk is driven by a table of the OTLP logs messages rather than a second hand-written decoder, so the two
 * cannot drift field by field: same fields, same wire types, same order of checks, same messages and offsets. A
 * property test holds them equal on valid, truncated and byte-flipped requests.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';
import { isUtf8 } from 'node:buffer';
import { MAX_ANY_VALUE_DEPTH } from './decode-protobuf.js';
import type { OtlpDecodeError } from './errors.js';
import { DecodeFailure, decodeError } from './errors.js';
import { WIRE, WireReader } from './wire-reader.js';

/** How a known field is read; each kind implies its wire type. */
type FieldKind = 'message' | 'string' | 'bytes' | 'varint' | 'fixed64' | 'double' | 'fixed32';

interface FieldRule {
  readonly name: string;
  readonly kind: FieldKind;
  readonly wireType: number;
  /** The message a `message` field holds. */
  readonly message?: MessageRule;
}

interface MessageRule {
  readonly name: string;
  /** Indexed by field number; a hole is an unknown field (skipped by wire type). */
  readonly fields: (FieldRule | undefined)[];
  /** An AnyValue: entering one counts a nesting level. */
  readonly nests?: boolean;
  /** A LogRecord: entering one counts a record. */
  readonly isRecord?: boolean;
}

const WIRE_OF: Record<FieldKind, number> = {
  message: WIRE.LEN,
  string: WIRE.LEN,
  bytes: WIRE.LEN,
  varint: WIRE.VARINT,
  fixed64: WIRE.I64,
  double: WIRE.I64,
  fixed32: WIRE.I32,
};

function message(name: string, fields: Record<number, FieldRule>, flags: Partial<MessageRule> = {}): MessageRule {
  const table: (FieldRule | undefined)[] = [];
  for (const [n, rule] of Object.entries(fields)) table[Number(n)] = rule;
  return { name, fields: table, ...flags };
}

const field = (name: string, kind: FieldKind, msg?: MessageRule): FieldRule => ({
  name,
  kind,
  wireType: WIRE_OF[kind],
  message: msg,
});

// AnyValue ⇄ KeyValue ⇄ ArrayValue/KeyValueList are mutually recursive: build the shells, then fill them.
const anyValue = message('AnyValue', {}, { nests: true });
const keyValue = message('KeyValue', {});
const arrayValue = message('ArrayValue', { 1: field('values', 'message', anyValue) });
const kvList = message('KeyValueList', { 1: field('values', 'message', keyValue) });
Object.assign(keyValue.fields, [undefined, field('key', 'string'), field('value', 'message', anyValue)]);
Object.assign(anyValue.fields, [
  undefined,
  field('string_value', 'string'),
  field('bool_value', 'varint'),
  field('int_value', 'varint'),
  field('double_value', 'double'),
  field('array_value', 'message', arrayValue),
  field('kvlist_value', 'message', kvList),
  field('bytes_value', 'bytes'),
  field('string_value_strindex', 'varint'),
]);

const resource = message('Resource', {
  1: field('attributes', 'message', keyValue),
  2: field('dropped_attributes_count', 'varint'),
});
const scope = message('InstrumentationScope', {
  1: field('name', 'string'),
  2: field('version', 'string'),
  3: field('attributes', 'message', keyValue),
  4: field('dropped_attributes_count', 'varint'),
});
const logRecord = message(
  'LogRecord',
  {
    1: field('time_unix_nano', 'fixed64'),
    2: field('severity_number', 'varint'),
    3: field('severity_text', 'string'),
    5: field('body', 'message', anyValue),
    6: field('attributes', 'message', keyValue),
    7: field('dropped_attributes_count', 'varint'),
    8: field('flags', 'fixed32'),
    9: field('trace_id', 'bytes'),
    10: field('span_id', 'bytes'),
    11: field('observed_time_unix_nano', 'fixed64'),
    12: field('event_name', 'string'),
  },
  { isRecord: true },
);
const scopeLogs = message('ScopeLogs', {
  1: field('scope', 'message', scope),
  2: field('log_records', 'message', logRecord),
  3: field('schema_url', 'string'),
});
const resourceLogs = message('ResourceLogs', {
  1: field('resource', 'message', resource),
  2: field('scope_logs', 'message', scopeLogs),
  3: field('schema_url', 'string'),
});
const request = message('ExportLogsServiceRequest', { 1: field('resource_logs', 'message', resourceLogs) });

/**
 * Validates a binary OTLP `ExportLogsServiceRequest` and returns how many log records it holds.
 *
 * Accepts exactly what {@link decodeLogsProtobuf} accepts and, on bad input, returns the same error message. Never
 * throws on any input; allocates nothing per record.
 */
export function validateLogsProtobuf(bytes: Uint8Array): Result<number, OtlpDecodeError> {
  const r = new WireReader(bytes);
  const count = { records: 0 };
  try {
    walk(r, bytes.byteLength, request, 0, count);
  } catch (e) {
    if (e instanceof DecodeFailure) return err(decodeError(e.message));
    throw e;
  }
  return ok(count.records);
}

/** Walks the fields of one message in `[r.pos, end)`; `depth` is the number of AnyValues it sits in. */
function walk(r: WireReader, end: number, rule: MessageRule, depth: number, count: { records: number }): void {
  const msg = rule.name;
  while (r.pos < end) {
    const keyAt = r.pos;
    const key = r.key(end, msg);
    const number = key >>> 3;
    const wt = key & 7;
    const f = number < rule.fields.length ? rule.fields[number] : undefined;
    if (f === undefined) {
      r.skip(wt, number, end, msg, keyAt);
      continue;
    }
    if (wt !== f.wireType) r.wrongWireType(number, f.name, wt, f.wireType, msg, keyAt);
    switch (f.kind) {
      case 'message': {
        const stop = r.lengthEnd(end, number, msg);
        const inner = f.message!;
        const innerDepth = inner.nests === true ? depth + 1 : depth;
        if (innerDepth > MAX_ANY_VALUE_DEPTH) r.fail(`AnyValue nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
        if (inner.isRecord === true) count.records += 1;
        walk(r, stop, inner, innerDepth, count);
        break;
      }
      case 'string': {
        const stop = r.lengthEnd(end, number, msg);
        const start = r.pos;
        if (!isAscii(r.buf, start, stop) && !isUtf8(r.buf.subarray(start, stop))) {
          r.fail(`field ${number} in ${msg} is not valid UTF-8`, start);
        }
        r.pos = stop;
        break;
      }
      case 'bytes':
        r.pos = r.lengthEnd(end, number, msg);
        break;
      case 'varint':
        r.varint32(end, msg);
        break;
      case 'fixed64':
        if (end - r.pos < 8) r.fail(`truncated fixed64 in ${msg}`);
        r.pos += 8;
        break;
      case 'double':
        if (end - r.pos < 8) r.fail(`truncated double in ${msg}`);
        r.pos += 8;
        break;
      case 'fixed32':
        if (end - r.pos < 4) r.fail(`truncated fixed32 in ${msg}`);
        r.pos += 4;
        break;
    }
  }
}

/** Whether `[start, stop)` is all ASCII: most strings are, and this loop is cheaper than a view for `isUtf8`. */
function isAscii(buf: Uint8Array, start: number, stop: number): boolean {
  for (let i = start; i < stop; i++) if (buf[i]! >= 0x80) return false;
  return true;
}
