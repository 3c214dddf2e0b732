/**
 * @module columnar/compact-thrift
 * The Thrift compact protocol, write side only: what Parquet page headers and the footer are made of
 * (docs/design/storage-format.md, "Columnar encoder"). hyparquet-writer's thrift writer is not in its package
 * exports, so it cannot be imported under strict ESM.
 */
import { ByteSink } from './byte-sink.js';

/** Compact-protocol element types. */
export const CT = Object.freeze({ BOOL: 1, I32: 5, I64: 6, BINARY: 8, LIST: 9, STRUCT: 12 } as const);

const utf8 = new TextEncoder();

/** Writes compact-protocol structs field by field (ids ascending within each struct). */
export class CompactWriter {
  private readonly stack: number[] = [];
  private lastId = 0;

  constructor(readonly out: ByteSink = new ByteSink()) {}

  private field(id: number, type: number): void {
    const delta = id - this.lastId;
    if (delta > 0 && delta <= 15) this.out.byte((delta << 4) | type);
    else {
      this.out.byte(type);
      this.out.varint(((id << 1) ^ (id >> 15)) & 0xffff);
    }
    this.lastId = id;
  }

  /** Opens a struct (top level or as a list element). */
  begin(): this {
    this.stack.push(this.lastId);
    this.lastId = 0;
    return this;
  }

  /** Closes the innermost struct. */
  end(): this {
    this.out.byte(0);
    this.lastId = this.stack.pop() ?? 0;
    return this;
  }

  /** Opens a struct-valued field; close it with {@link end}. */
  struct(id: number): this {
    this.field(id, CT.STRUCT);
    return this.begin();
  }

  i32(id: number, v: number): this {
    this.field(id, CT.I32);
    this.out.varint(((v << 1) ^ (v >> 31)) >>> 0);
    return this;
  }

  i64(id: number, v: bigint | number): this {
    this.field(id, CT.I64);
    const b = BigInt(v);
    this.out.varbig(b >= 0n ? b << 1n : (-b << 1n) - 1n);
    return this;
  }

  bool(id: number, v: boolean): this {
    this.field(id, v ? 1 : 2);
    return this;
  }

  binary(id: number, v: Uint8Array): this {
    this.field(id, CT.BINARY);
    this.out.varint(v.length);
    this.out.bytes(v);
    return this;
  }

  string(id: number, v: string): this {
    return this.binary(id, utf8.encode(v));
  }

  /** A list header; then write `size` elements with the element writers below. */
  list(id: number, elemType: number, size: number): this {
    this.field(id, CT.LIST);
    if (size < 15) this.out.byte((size << 4) | elemType);
    else {
      this.out.byte(0xf0 | elemType);
      this.out.varint(size);
    }
    return this;
  }

  /** An i32 list element. */
  elemI32(v: number): this {
    this.out.varint(((v << 1) ^ (v >> 31)) >>> 0);
    return this;
  }

  /** An i64 list element. */
  elemI64(v: bigint | number): this {
    const b = BigInt(v);
    this.out.varbig(b >= 0n ? b << 1n : (-b << 1n) - 1n);
    return this;
  }

  /** A bool list element (one byte: 1 true, 2 false, as the Java and C++ readers expect; list type {@link CT}.BOOL). */
  elemBool(v: boolean): this {
    this.out.byte(v ? 1 : 2);
    return this;
  }

  /** A binary list element. */
  elemBinary(v: Uint8Array): this {
    this.out.varint(v.length);
    this.out.bytes(v);
    return this;
  }

  /** A string list element. */
  elemString(v: string): this {
    const b = utf8.encode(v);
    this.out.varint(b.length);
    this.out.bytes(b);
    return this;
  }
}
