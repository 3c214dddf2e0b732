/**
 * @module columnar/byte-sink
 * A growable little-endian byte buffer: the one scratch type every part of the columnar encoder appends to
 * (pages, thrift headers, the footer). Growth doubles, so appends are amortised O(1).
 */

/** A growable byte buffer with little-endian and varint appends. */
export class ByteSink {
  /** Backing store; valid bytes are `[0, length)`. */
  buf: Uint8Array;
  /** Bytes written. */
  length = 0;
  private view: DataView;

  constructor(initialBytes = 1024) {
    this.buf = new Uint8Array(Math.max(16, initialBytes));
    this.view = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** Forgets the contents, keeping the capacity. */
  reset(): void {
    this.length = 0;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.length++] = b;
  }

  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.length, v, true);
    this.length += 4;
  }

  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v >>> 0, true);
    this.length += 4;
  }

  i64(v: bigint): void {
    this.reserve(8);
    this.view.setBigInt64(this.length, v, true);
    this.length += 8;
  }

  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }

  /** Unsigned LEB128 of a non-negative safe integer. */
  varint(v: number): void {
    this.reserve(10);
    while (v > 0x7f) {
      this.buf[this.length++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.length++] = v;
  }

  /** Unsigned LEB128 of a bigint in [0, 2^64). */
  varbig(v: bigint): void {
    this.reserve(10);
    while (v > 0x7fn) {
      this.buf[this.length++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.length++] = Number(v);
  }

  /** A copy of the valid bytes. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }

  /** A view of the valid bytes (invalidated by the next append). */
  contents(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}
