/**
 * @module testing/arbitraries
 * fast-check arbitraries for the record model (tests only). Doubles exclude `-0`, which core's canonical JSON
 * renders as `0`.
 */
import fc from 'fast-check';
import type { AnyValue, KeyValue, LogRecord, MinedFields, Param, ParamTypeTag } from '@sluice/core';
import type { StoredLogRow } from '../log-parquet-writer.js';

const str = (maxLength = 16) => fc.string({ unit: 'binary', maxLength });
const U64_MAX = 2n ** 64n - 1n;
/** Plain objects (node's deepStrictEqual compares prototypes). */
const NO_NULL_PROTO = { noNullPrototype: true } as const;

/** Scalar AnyValues. */
export function arbScalar(): fc.Arbitrary<AnyValue> {
  return fc.oneof(
    str().map((value): AnyValue => ({ kind: 'string', value })),
    fc.boolean().map((value): AnyValue => ({ kind: 'bool', value })),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value): AnyValue => ({ kind: 'int', value })),
    fc.double().map((d): AnyValue => ({ kind: 'double', value: Object.is(d, -0) ? 0 : d })),
    fc.uint8Array({ maxLength: 9 }).map((value): AnyValue => ({ kind: 'bytes', value })),
    fc.constant<AnyValue>({ kind: 'empty' }),
  );
}

/** AnyValues nested up to `depth` levels of arrays/kvlists. */
export function arbAnyValue(depth: number): fc.Arbitrary<AnyValue> {
  if (depth <= 0) return arbScalar();
  return fc.oneof(
    { weight: 3, arbitrary: arbScalar() },
    {
      weight: 1,
      arbitrary: fc
        .array(arbAnyValue(depth - 1), { maxLength: 3 })
        .map((values): AnyValue => ({ kind: 'array', values })),
    },
    { weight: 1, arbitrary: arbKeyValues(depth - 1).map((values): AnyValue => ({ kind: 'kvlist', values })) },
  );
}

/** KeyValue lists (keys may repeat, as on the wire). */
export function arbKeyValues(depth: number): fc.Arbitrary<KeyValue[]> {
  return fc.array(fc.record({ key: str(8), value: arbAnyValue(depth) }, NO_NULL_PROTO), { maxLength: 4 });
}

const arbTime = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 1_600_000_000_000_000_000n, max: 1_900_000_000_000_000_000n }),
  fc.bigInt({ min: 0n, max: U64_MAX }),
);

/** Log records with every body kind, ids absent or well-formed, times across the whole u64 range. */
export function arbLogRecord(): fc.Arbitrary<LogRecord> {
  return fc.record(
    {
      timeUnixNano: arbTime,
      observedTimeUnixNano: arbTime,
      severityNumber: fc.integer({ min: 0, max: 255 }),
      severityText: str(6),
      body: fc.oneof(
        fc.constant(null),
        str(40).map((value): AnyValue => ({ kind: 'string', value })),
        arbAnyValue(2),
      ),
      attributes: arbKeyValues(2),
      droppedAttributesCount: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      flags: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      traceId: fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ minLength: 16, maxLength: 16 })),
      spanId: fc.oneof(fc.constant(new Uint8Array(0)), fc.uint8Array({ minLength: 8, maxLength: 8 })),
      eventName: str(6),
      resource: fc.record(
        {
          attributes: fc.oneof(
            arbKeyValues(1),
            str(10).map((s): KeyValue[] => [{ key: 'service.name', value: { kind: 'string', value: s } }]),
          ),
          droppedAttributesCount: fc.constant(0),
          schemaUrl: str(10),
        },
        NO_NULL_PROTO,
      ),
      scope: fc.record(
        {
          name: str(8),
          version: str(4),
          attributes: arbKeyValues(1),
          droppedAttributesCount: fc.constant(0),
          schemaUrl: str(10),
        },
        NO_NULL_PROTO,
      ),
    },
    NO_NULL_PROTO,
  );
}

/** Mining results with u64 template ids and float32-exact confidences. */
export function arbMined(): fc.Arbitrary<MinedFields> {
  return fc.record(
    {
      templateId: fc.bigInt({ min: 0n, max: U64_MAX }),
      templateVersion: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      params: fc.array(
        fc.record(
          { typeTag: fc.integer({ min: 0, max: 7 }).map((t) => t as ParamTypeTag), value: str(12) },
          NO_NULL_PROTO,
        ) as fc.Arbitrary<Param>,
        { maxLength: 4 },
      ),
      confidence: fc.float({ min: 0, max: 1, noNaN: true }).map((f) => (Object.is(f, -0) ? 0 : f)),
      lossy: fc.boolean(),
    },
    NO_NULL_PROTO,
  );
}

/** Stored rows. */
export function arbStoredRow(): fc.Arbitrary<StoredLogRow> {
  return fc.record(
    { tenantId: fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }), record: arbLogRecord(), mined: arbMined() },
    NO_NULL_PROTO,
  );
}
