/**
 * @module wire-reader
 * Bounds-checked protobuf wire primitives over one request buffer. Every read takes the `end` of the enclosing
 * message, so a length that overruns its parent is reported as truncation instead of reading a neighbour's bytes.
 * Failures throw {@link DecodeFailure}; the decoder's entry point turns them into a `Result`.
 */
import { isUtf8 } from 'node:buffer';
import { DecodeFailure } from './errors.js';

/** Protobuf wire types that OTLP uses. */
export const WIRE = Object.freeze({ VARINT: 0, I64: 1, LEN: 2, I32: 5 } as const);

const WIRE_NAMES = ['VARINT', 'I64', 'LEN', 'group start', 'group end', 'I32', 'reserved 6', 'reserved 7'];

/** Human name of a wire type, for messages. */
export function wireTypeName(wireType: number): string {
  return WIRE_NAMES[wireType] ?? `unknown ${wireType}`;
}

/** Node's undocumented-but-stable fast UTF-8 slice (what `toString('utf8', s, e)` calls after its checks). */
type SliceableBuffer = Buffer & { utf8Slice?: (start: number, end: number) => string };

/** A cursor over one protobuf buffer. `pos` is the next byte to read. */
export class WireReader {
  readonly buf: SliceableBuffer;
  readonly view: DataView;
  pos = 0;

  constructor(bytes: Uint8Array) {
    this.buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * Reads a field key: field numbers above 2^32 and field number 0 are refused (a key's low bits must not be
   * silently kept).
   */
  key(end: number, msg: string): number {
    const keyAt = this.pos;
    const key = this.uvarintNumber(end, msg);
    if (key > 0xffffffff) this.fail(`field number out of range in ${msg}`, keyAt);
    if (key < 8) this.fail(`invalid field number 0 in ${msg}`, keyAt);
    return key;
  }

  /** Throws a failure mentioning `what` at the current position. */
  fail(what: string, at: number = this.pos): never {
    throw new DecodeFailure(`${what} at byte ${at}`);
  }

  /**
   * Reads a varint of at most 10 bytes and returns its low 32 bits as a signed int32 (callers wanting uint32
   * apply `>>> 0`). Used for keys, lengths, enums, bools and uint32 fields.
   */
  varint32(end: number, msg: string): number {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    if (pos < end) {
      const b0 = buf[pos]!;
      if (b0 < 0x80) {
        this.pos = pos + 1;
        return b0;
      }
    }
    let result = 0;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) this.fail(`truncated varint in ${msg}`, start);
      const b = buf[pos++]!;
      if (i < 5) result |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        if (i === 9 && b > 1) this.fail(`varint overflows 64 bits in ${msg}`, start);
        this.pos = pos;
        return result;
      }
    }
    return this.fail(`varint longer than 10 bytes in ${msg}`, start);
  }

  /** Reads a varint (at most 10 bytes) and tells whether any of its bits is set (proto `bool`). */
  varintBool(end: number, msg: string): boolean {
    const start = this.pos;
    let any = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= end) this.fail(`truncated varint in ${msg}`, start);
      const b = this.buf[this.pos++]!;
      any |= b & 0x7f;
      if (b < 0x80) {
        if (i === 9 && b > 1) this.fail(`varint overflows 64 bits in ${msg}`, start);
        return any !== 0;
      }
    }
    return this.fail(`varint longer than 10 bytes in ${msg}`, start);
  }

  /** Reads a varint as a signed 64-bit integer (two's complement), exactly. */
  varint64(end: number, msg: string): bigint {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    let lo = 0; // bits 0..27
    let hi = 0; // bits 28..55
    let top = 0; // bits 56..63
    for (let i = 0; i < 10; i++) {
      if (pos >= end) this.fail(`truncated varint in ${msg}`, start);
      const b = buf[pos++]!;
      const bits = b & 0x7f;
      if (i < 4) lo += bits * 2 ** (7 * i);
      else if (i < 8) hi += bits * 2 ** (7 * (i - 4));
      else top += bits * 2 ** (7 * (i - 8));
      if (b < 0x80) {
        if (i === 9 && b > 1) this.fail(`varint overflows 64 bits in ${msg}`, start);
        this.pos = pos;
        if (i < 4) return BigInt(lo);
        const u = BigInt(lo) + (BigInt(hi) << 28n) + (BigInt(top) << 56n);
        return BigInt.asIntN(64, u);
      }
    }
    return this.fail(`varint longer than 10 bytes in ${msg}`, start);
  }

  /** Reads a fixed64 as an unsigned 64-bit integer. */
  fixed64(end: number, msg: string): bigint {
    if (end - this.pos < 8) this.fail(`truncated fixed64 in ${msg}`);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** Reads a little-endian IEEE-754 double. */
  double(end: number, msg: string): number {
    if (end - this.pos < 8) this.fail(`truncated double in ${msg}`);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** Reads a fixed32 as an unsigned 32-bit integer. */
  fixed32(end: number, msg: string): number {
    if (end - this.pos < 4) this.fail(`truncated fixed32 in ${msg}`);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  /**
   * Reads a varint as a non-negative JS number (exact below 2^53; larger values only need to compare as huge).
   * Used for keys and lengths, where silently keeping the low 32 bits would misread an overlong value.
   */
  uvarintNumber(end: number, msg: string): number {
    const buf = this.buf;
    const start = this.pos;
    let pos = start;
    if (pos < end) {
      const b0 = buf[pos]!;
      if (b0 < 0x80) {
        this.pos = pos + 1;
        return b0;
      }
    }
    let value = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= end) this.fail(`truncated varint in ${msg}`, start);
      const b = buf[pos++]!;
      value += (b & 0x7f) * mul;
      mul *= 128;
      if (b < 0x80) {
        this.pos = pos;
        return value;
      }
    }
    return this.fail(`varint longer than 10 bytes in ${msg}`, start);
  }

  /**
   * Reads the length prefix of a LEN field and returns the end offset of its payload, checking that the payload
   * lies inside the enclosing message.
   */
  lengthEnd(end: number, field: number, msg: string): number {
    const at = this.pos;
    const len = this.uvarintNumber(end, msg);
    if (len > end - this.pos) this.fail(`truncated length-delimited field ${field} in ${msg}`, at);
    return this.pos + len;
  }

  /**
   * Reads a UTF-8 string occupying `[pos, stop)`. Strict: invalid UTF-8 is an error (proto3 requires valid
   * UTF-8). Checked cheaply: only a decoded string containing U+FFFD is re-validated byte for byte.
   */
  string(stop: number, field: number, msg: string): string {
    const start = this.pos;
    this.pos = stop;
    if (start === stop) return '';
    const buf = this.buf;
    const s = buf.utf8Slice !== undefined ? buf.utf8Slice(start, stop) : buf.toString('utf8', start, stop);
    if (s.indexOf('\uFFFD') !== -1 && !isUtf8(this.buf.subarray(start, stop))) {
      this.fail(`field ${field} in ${msg} is not valid UTF-8`, start);
    }
    return s;
  }

  /** Copies the bytes `[pos, stop)` (decoded records never alias the request buffer). */
  bytes(stop: number): Uint8Array {
    const start = this.pos;
    this.pos = stop;
    return new Uint8Array(this.buf.subarray(start, stop));
  }

  /** Skips one field of an unknown number by its wire type; rejects groups and wire types 6/7. */
  skip(wireType: number, field: number, end: number, msg: string, keyAt: number): void {
    switch (wireType) {
      case WIRE.VARINT:
        this.varint32(end, msg);
        return;
      case WIRE.I64:
        if (end - this.pos < 8) this.fail(`truncated fixed64 field ${field} in ${msg}`);
        this.pos += 8;
        return;
      case WIRE.LEN:
        this.pos = this.lengthEnd(end, field, msg);
        return;
      case WIRE.I32:
        if (end - this.pos < 4) this.fail(`truncated fixed32 field ${field} in ${msg}`);
        this.pos += 4;
        return;
      case 3:
      case 4:
        this.fail(`wire type ${wireType} (group) is not valid in OTLP (field ${field} in ${msg})`, keyAt);
        break;
      default:
        this.fail(`wire type ${wireType} is not valid in protobuf (field ${field} in ${msg})`, keyAt);
    }
  }

  /** Fails because a known field arrived with the wrong wire type. */
  wrongWireType(field: number, name: string, wireType: number, expected: number, msg: string, keyAt: number): never {
    if (wireType === 3 || wireType === 4) {
      return this.fail(`wire type ${wireType} (group) is not valid in OTLP (field ${field} in ${msg})`, keyAt);
    }
    return this.fail(
      `field ${field} (${name}) in ${msg} has wire type ${wireType} (${wireTypeName(wireType)}), expected ${expected} (${wireTypeName(expected)})`,
      keyAt,
    );
  }
}
