/**
 * @module arrow-ipc-stream
 * Writes a table as an Apache Arrow IPC stream (docs/design/query-engine.md, "Arrow results"): the schema message,
 * one record batch, the end-of-stream marker, into one buffer whose exact size is known — and reserved — before
 * it is allocated. The flatbuffers metadata is apache-arrow's own (`Message.encode`); the body buffers (validity
 * bitmaps, UTF-8 offsets and bytes, fixed-width values) are written here, straight from the column values, 8-byte
 * aligned, with no Arrow builder in between, and no column held as an array of values: each cell is asked for when
 * it is measured and again when it is written.
 */
import {
  Field,
  Float64,
  Int32,
  Int64,
  Message,
  Schema,
  TimestampNanosecond,
  Uint32,
  Uint64,
  Utf8,
  type DataType,
} from 'apache-arrow';
import { BufferRegion, FieldNode, RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';

/** The Arrow types a Sluice result column takes. */
export type ArrowColumnType = 'timestamp_ns' | 'uint64' | 'int64' | 'int32' | 'uint32' | 'float64' | 'utf8';

/** A cell: bigint for the 64-bit types, number for the 32-bit ones and float64, string for utf8; `null` is NULL. */
export type ArrowCell = bigint | number | string | null;

/**
 * One column of the table. `value(i)` is row `i`; it is asked once while the stream is measured and once while it
 * is written, so a column may decode its values on demand instead of holding them.
 */
export interface ArrowColumn {
  readonly name: string;
  readonly type: ArrowColumnType;
  value(i: number): ArrowCell;
}

const WIDTH: Record<Exclude<ArrowColumnType, 'utf8'>, number> = {
  timestamp_ns: 8,
  uint64: 8,
  int64: 8,
  int32: 4,
  uint32: 4,
  float64: 8,
};

function arrowType(t: ArrowColumnType): DataType {
  switch (t) {
    case 'timestamp_ns':
      return new TimestampNanosecond('UTC');
    case 'uint64':
      return new Uint64();
    case 'int64':
      return new Int64();
    case 'int32':
      return new Int32();
    case 'uint32':
      return new Uint32();
    case 'float64':
      return new Float64();
    case 'utf8':
      return new Utf8();
  }
}

const align8 = (n: number): number => (n + 7) & ~7;

/** The framed size of an encapsulated message: continuation + length prefix + flatbuffer padded to 8 bytes. */
function framedSize(flatbuffer: Uint8Array): number {
  return align8(8 + flatbuffer.byteLength);
}

/** One body buffer of one column, as laid out in the record batch body. */
interface BodyBuffer {
  readonly offset: number;
  readonly length: number;
}

interface ColumnLayout {
  readonly nullCount: number;
  readonly validity: BodyBuffer;
  readonly offsets?: BodyBuffer;
  readonly data: BodyBuffer;
}

/**
 * Encodes `columns` (each `length` long) with the schema's custom `metadata` as an Arrow IPC stream.
 * `reserve(bytes)` is called with the stream's exact size before the buffer is allocated; it throws to refuse.
 */
export function encodeArrowStream(
  columns: readonly ArrowColumn[],
  length: number,
  metadata: ReadonlyMap<string, string>,
  reserve: (bytes: number) => void,
): Buffer {
  let bodyLength = 0;
  const take = (bytes: number): BodyBuffer => {
    const b = { offset: bodyLength, length: bytes };
    bodyLength += align8(bytes);
    return b;
  };
  const layouts: ColumnLayout[] = columns.map((c) => {
    let nullCount = 0;
    let utf8Bytes = 0;
    for (let i = 0; i < length; i++) {
      const v = c.value(i);
      if (v === null) nullCount++;
      else if (c.type === 'utf8') utf8Bytes += Buffer.byteLength(v as string, 'utf8');
    }
    // No validity bitmap when nothing is NULL (the format allows an empty one).
    const validity = take(nullCount > 0 ? Math.ceil(length / 8) : 0);
    if (c.type === 'utf8') {
      const offsets = take((length + 1) * 4);
      return { nullCount, validity, offsets, data: take(utf8Bytes) };
    }
    return { nullCount, validity, data: take(length * WIDTH[c.type]) };
  });

  const schema = new Schema(
    columns.map((c) => new Field(c.name, arrowType(c.type), true)),
    new Map(metadata),
  );
  const schemaMessage = Message.encode(Message.from(schema));
  const nodes = layouts.map((l) => new FieldNode(length, l.nullCount));
  const regions = layouts.flatMap((l) =>
    [l.validity, ...(l.offsets ? [l.offsets] : []), l.data].map((b) => new BufferRegion(b.offset, b.length)),
  );
  const batchMessage = Message.encode(Message.from(new RecordBatchHeader(length, nodes, regions, null), bodyLength));
  const total = framedSize(schemaMessage) + framedSize(batchMessage) + bodyLength + 8;

  reserve(total); // reserve before retain: the body is counted whole before any byte of it exists
  const out = Buffer.alloc(total); // zero-filled: padding and NULL slots read as zeros; never pooled, offset 0
  let pos = writeMessage(out, 0, schemaMessage);
  pos = writeMessage(out, pos, batchMessage);
  const body = pos;
  columns.forEach((c, k) => writeColumn(out, body, c, length, layouts[k] as ColumnLayout));
  pos = body + bodyLength;
  out.writeInt32LE(-1, pos); // end of stream: continuation marker + zero length
  out.writeInt32LE(0, pos + 4);
  return out;
}

/** Writes one encapsulated message at `pos`; returns the position after its padding. */
function writeMessage(out: Buffer, pos: number, flatbuffer: Uint8Array): number {
  const size = framedSize(flatbuffer);
  out.writeInt32LE(-1, pos);
  out.writeInt32LE(size - 8, pos + 4);
  out.set(flatbuffer, pos + 8);
  return pos + size;
}

function writeColumn(out: Buffer, body: number, c: ArrowColumn, length: number, l: ColumnLayout): void {
  const validityAt = body + l.validity.offset;
  const at = body + l.data.offset;
  const offsetsAt = body + (l.offsets?.offset ?? 0);
  let written = 0;
  if (c.type === 'utf8') out.writeInt32LE(0, offsetsAt);
  for (let i = 0; i < length; i++) {
    const v = c.value(i);
    if (v !== null && l.nullCount > 0)
      out[validityAt + (i >> 3)] = (out[validityAt + (i >> 3)] as number) | (1 << (i & 7));
    switch (c.type) {
      case 'utf8':
        if (v !== null) written += out.write(v as string, at + written, 'utf8');
        out.writeInt32LE(written, offsetsAt + 4 * (i + 1));
        break;
      case 'timestamp_ns':
      case 'int64':
        if (v !== null) out.writeBigInt64LE(BigInt.asIntN(64, v as bigint), at + 8 * i);
        break;
      case 'uint64':
        if (v !== null) out.writeBigUInt64LE(BigInt.asUintN(64, v as bigint), at + 8 * i);
        break;
      case 'int32':
        if (v !== null) out.writeInt32LE(v as number, at + 4 * i);
        break;
      case 'uint32':
        if (v !== null) out.writeUInt32LE(v as number, at + 4 * i);
        break;
      case 'float64':
        if (v !== null) out.writeDoubleLE(v as number, at + 8 * i);
        break;
    }
  }
  // A value that changed between the measuring pass and this one would overrun its neighbour: a bug, never sent.
  if (c.type === 'utf8' && written !== l.data.length) throw new Error(`arrow column ${c.name} changed while written`);
}
