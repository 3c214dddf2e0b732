/**
 * @module wire-writer
 * A growable protobuf writer. Nested messages reserve one length byte and shift their payload when the final
 * length needs more (the common case of a short message costs no copy), so output is always canonical.
 */

/** Appends protobuf wire primitives to a growing buffer. */
export class WireWriter {
  private buf: Buffer;
  private view: DataView;
  pos = 0;

  constructor(initialSize = 4096) {
    this.buf = Buffer.allocUnsafe(initialSize);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  private ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.view = new DataView(next.buffer, next.byteOffset, next.byteLength);
  }

  /** Writes a field key. */
  key(field: number, wireType: number): void {
    this.uvarint(((field << 3) | wireType) >>> 0);
  }

  /** Writes a non-negative integer below 2^53 as a varint. */
  uvarint(value: number): void {
    this.ensure(10);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  /** Writes an int32 varint (negative values are sign-extended to 10 bytes, as protobuf requires). */
  int32(value: number): void {
    if (value >= 0) this.uvarint(value);
    else this.int64(BigInt(value));
  }

  /** Writes an int64 varint (two's complement for negative values). */
  int64(value: bigint): void {
    this.ensure(10);
    let v = BigInt.asUintN(64, value);
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  /** Writes a fixed64 (unsigned). */
  fixed64(value: bigint): void {
    this.ensure(8);
    this.view.setBigUint64(this.pos, BigInt.asUintN(64, value), true);
    this.pos += 8;
  }

  /** Writes a fixed32 (unsigned). */
  fixed32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, value >>> 0, true);
    this.pos += 4;
  }

  /** Writes a little-endian double. */
  double(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  /** Writes a length-prefixed UTF-8 string. */
  string(value: string): void {
    const len = Buffer.byteLength(value, 'utf8');
    this.uvarint(len);
    this.ensure(len);
    this.pos += this.buf.write(value, this.pos, len, 'utf8');
  }

  /** Writes length-prefixed raw bytes. */
  bytes(value: Uint8Array): void {
    this.uvarint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Starts a nested message; pass the result to {@link finish}. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends a nested message started at `mark`, writing its length (and shifting the payload if needed). */
  finish(mark: number): void {
    const len = this.pos - mark - 1;
    let size = 1;
    for (let v = len; v >= 0x80; v = Math.floor(v / 0x80)) size++;
    if (size > 1) {
      this.ensure(size - 1);
      this.buf.copy(this.buf, mark + size, mark + 1, this.pos);
      this.pos += size - 1;
    }
    let at = mark;
    let v = len;
    while (v >= 0x80) {
      this.buf[at++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[at] = v;
  }

  /** A copy of the bytes written so far. */
  result(): Uint8Array {
    return new Uint8Array(this.buf.subarray(0, this.pos));
  }
}
