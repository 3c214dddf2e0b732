/**
 * @module testing/record-arbitraries
 * fast-check arbitraries for Sluice {@link LogRecord}s covering the full value space of every field (full
 * int64/uint64 ranges, NaN and -0 doubles, arbitrary id lengths, empty values and null bodies).
 */
import fc from 'fast-check';
import type { AnyValue, KeyValue, LogRecord, ResourceInfo, ScopeInfo } from '@sluice/core';
import { EMPTY_VALUE } from '@sluice/core';

const text = fc.string({ unit: 'binary', maxLength: 16 });
const u32 = fc.integer({ min: 0, max: 0xffffffff });

/** Any AnyValue, nested up to a few levels. */
export const anyValueArb: fc.Arbitrary<AnyValue> = fc.letrec<{ v: AnyValue; kv: KeyValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text.map((value): AnyValue => ({ kind: 'string', value })),
    fc.boolean().map((value): AnyValue => ({ kind: 'bool', value })),
    fc.bigInt(-(1n << 63n), (1n << 63n) - 1n).map((value): AnyValue => ({ kind: 'int', value })),
    fc.double().map((value): AnyValue => ({ kind: 'double', value })),
    fc.uint8Array({ maxLength: 10 }).map((value): AnyValue => ({ kind: 'bytes', value })),
    fc.constant(EMPTY_VALUE),
    fc.array(tie('v'), { maxLength: 3 }).map((values): AnyValue => ({ kind: 'array', values })),
    fc.array(tie('kv'), { maxLength: 3 }).map((values): AnyValue => ({ kind: 'kvlist', values })),
  ),
  kv: fc.record({ key: text, value: tie('v') }, { noNullPrototype: true }),
})).v;

const kvsArb = fc.array(fc.record({ key: text, value: anyValueArb }, { noNullPrototype: true }), { maxLength: 4 });

const resourceArb: fc.Arbitrary<ResourceInfo> = fc.record(
  { attributes: kvsArb, droppedAttributesCount: u32, schemaUrl: text },
  { noNullPrototype: true },
);
const scopeArb: fc.Arbitrary<ScopeInfo> = fc.record(
  {
    name: text,
    version: text,
    attributes: kvsArb,
    droppedAttributesCount: u32,
    schemaUrl: text,
  },
  { noNullPrototype: true },
);

/** Arrays of records drawn from small resource/scope pools (so objects are shared as after decoding). */
export const logRecordsArb: fc.Arbitrary<LogRecord[]> = fc
  .record({
    resources: fc.array(resourceArb, { minLength: 1, maxLength: 2 }),
    scopes: fc.array(scopeArb, { minLength: 1, maxLength: 2 }),
    shapes: fc.array(
      fc.record({
        r: fc.nat(),
        s: fc.nat(),
        timeUnixNano: fc.bigInt(0n, (1n << 64n) - 1n),
        observedTimeUnixNano: fc.bigInt(0n, (1n << 64n) - 1n),
        severityNumber: fc.integer({ min: -0x80000000, max: 0x7fffffff }),
        severityText: text,
        body: fc.option(anyValueArb, { nil: null }),
        attributes: kvsArb,
        droppedAttributesCount: u32,
        flags: u32,
        traceId: fc.oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ maxLength: 20 })),
        spanId: fc.oneof(fc.uint8Array({ minLength: 8, maxLength: 8 }), fc.uint8Array({ maxLength: 10 })),
        eventName: text,
      }),
      { maxLength: 8 },
    ),
  })
  .map(({ resources, scopes, shapes }) =>
    shapes.map(({ r, s, ...rest }): LogRecord => ({
      ...rest,
      resource: resources[r % resources.length]!,
      scope: scopes[s % scopes.length]!,
    })),
  );
