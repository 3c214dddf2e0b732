/**
 * @module arrow-ipc-stream.test
 * The Arrow IPC stream writer (docs/design/query-engine.md, "Arrow results"): what it writes reads back with
 * apache-arrow as the same values and types, every body buffer is 8-byte aligned, and the stream's exact size is
 * reserved before its buffer exists — a refused reservation allocates nothing.
 */
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Message, tableFromIPC } from 'apache-arrow';
import type { RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import type { ArrowCell, ArrowColumn, ArrowColumnType } from './arrow-ipc-stream.js';
import { encodeArrowStream } from './arrow-ipc-stream.js';

interface Sample {
  readonly name: string;
  readonly type: ArrowColumnType;
  readonly values: readonly ArrowCell[];
}

/** The writer's columns over fixed values. */
const columnsOf = (samples: readonly Sample[]): ArrowColumn[] =>
  samples.map((c) => ({ name: c.name, type: c.type, value: (i) => c.values[i] ?? null }));

const COLUMNS: readonly Sample[] = [
  { name: 'ts', type: 'timestamp_ns', values: [1_780_272_000_000_000_001n, null, 0n] },
  { name: 'id', type: 'uint64', values: [2n ** 64n - 1n, 2n ** 63n, 7n] },
  { name: 'n', type: 'int64', values: [-1n, 5n, null] },
  { name: 'sev', type: 'int32', values: [-3, 9, 24] },
  { name: 'flags', type: 'uint32', values: [0, 4_294_967_295, null] },
  { name: 'v', type: 'float64', values: [1.5, null, -0.25] },
  { name: 's', type: 'utf8', values: ['grüße 🎉', '', null] },
];

const realAlloc = Buffer.alloc.bind(Buffer);
afterEach(() => {
  Buffer.alloc = realAlloc;
});

describe('encodeArrowStream', () => {
  test('reads back with apache-arrow: every type, NULLs, u64 ≥ 2^63, multi-byte and empty strings, metadata', () => {
    let reserved = 0;
    const out = encodeArrowStream(columnsOf(COLUMNS), 3, new Map([['sluice.rows', '3']]), (b) => (reserved = b));
    assert.equal(reserved, out.byteLength, 'the exact size is what was reserved');
    assert.equal(out.byteLength % 8, 0);
    const table = tableFromIPC(out);
    assert.equal(table.numRows, 3);
    assert.equal(table.schema.metadata.get('sluice.rows'), '3');
    assert.deepEqual(
      table.schema.fields.map((f) => `${f.name}:${String(f.type)}`),
      ['ts:Timestamp<NANOSECOND, UTC>', 'id:Uint64', 'n:Int64', 'sev:Int32', 'flags:Uint32', 'v:Float64', 's:Utf8'],
    );
    for (const c of COLUMNS) {
      const v = table.getChild(c.name)!;
      const values = v.data[0]!.values as ArrayLike<unknown>;
      c.values.forEach((want, i) => {
        if (want === null) return assert.equal(v.isValid(i), false, `${c.name}[${i}] is NULL`);
        const got = typeof want === 'bigint' ? values[i] : v.get(i);
        assert.equal(got, want, `${c.name}[${i}]`);
      });
    }
  });

  test('the record batch body starts 8-byte aligned and every body buffer begins at a multiple of 8', () => {
    const out = encodeArrowStream(columnsOf(COLUMNS), 3, new Map(), () => {});
    const schemaLength = out.readInt32LE(4);
    const at = 8 + schemaLength;
    assert.equal(out.readInt32LE(at), -1, 'continuation marker');
    const batchLength = out.readInt32LE(at + 4);
    assert.equal((at + 8 + batchLength) % 8, 0, 'body start');
    const message = Message.decode(out.subarray(at + 8, at + 8 + batchLength));
    const header = message.header() as RecordBatchHeader;
    assert.ok(header.buffers.length >= COLUMNS.length * 2);
    for (const b of header.buffers) assert.equal(b.offset % 8, 0, `buffer at ${b.offset}`);
    assert.equal(at + 8 + batchLength + message.bodyLength + 8, out.byteLength, 'then the end-of-stream marker');
  });

  test('an empty table keeps its schema', () => {
    const table = tableFromIPC(
      encodeArrowStream(columnsOf(COLUMNS.map((c) => ({ ...c, values: [] }))), 0, new Map(), () => {}),
    );
    assert.equal(table.numRows, 0);
    assert.equal(table.schema.fields.length, COLUMNS.length);
  });

  test('the size is reserved before the buffer is allocated: a refused reservation allocates nothing', () => {
    const allocs: number[] = [];
    Buffer.alloc = ((size: number, ...rest: []) => {
      allocs.push(size);
      return realAlloc(size, ...rest);
    }) as typeof Buffer.alloc;
    let asked = 0;
    assert.throws(
      () =>
        encodeArrowStream(columnsOf(COLUMNS), 3, new Map(), (bytes) => {
          asked = bytes;
          throw new Error('refused');
        }),
      /refused/,
    );
    assert.ok(asked > 0);
    assert.deepEqual(
      allocs.filter((n) => n >= asked),
      [],
      'no buffer the size of the stream was allocated',
    );
  });
});
