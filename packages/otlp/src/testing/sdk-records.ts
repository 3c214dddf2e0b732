/**
 * @module testing/sdk-records
 * fast-check arbitraries for OpenTelemetry SDK `ReadableLogRecord`s, and the oracle that says which Sluice
 * {@link LogRecord} each one must decode to (mirroring what `@opentelemetry/otlp-transformer` 0.223.1 writes).
 */
import fc from 'fast-check';
import type { AnyValue as SdkAnyValue, LogAttributes } from '@opentelemetry/api-logs';
import type { Resource } from '@opentelemetry/resources';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { AnyValue, KeyValue, LogRecord, ResourceInfo, ScopeInfo } from '@sluice/core';
import { EMPTY_VALUE } from '@sluice/core';

type SdkScope = ReadableLogRecord['instrumentationScope'];

/**
 * `jsonSafe`: only values whose OTLP/JSON and protobuf forms carry the same information when written by the JS
 * SDK (safe integers, finite doubles, a defined body). The SDK's JSON writes a double `1e300` or `2**60` as
 * `intValue` with rounded digits, and an undefined body as `{}`.
 */
export interface SdkArbOptions {
  readonly jsonSafe: boolean;
}

const hex = (n: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });

function leafArb(o: SdkArbOptions): fc.Arbitrary<SdkAnyValue> {
  const doubles = o.jsonSafe
    ? fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d) || Number.isSafeInteger(d))
    : fc.double();
  const ints = o.jsonSafe
    ? fc.maxSafeInteger()
    : fc.oneof(
        fc.maxSafeInteger(),
        fc.bigInt(-(1n << 63n), (1n << 63n) - 1n).map((b) => Number(b)),
      );
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength: 24 }),
    fc.constant(''),
    fc.boolean(),
    fc.integer(),
    fc.constant(0),
    ints,
    doubles,
    fc.uint8Array({ maxLength: 12 }),
    fc.constant(null),
  );
}

/** Any SDK log value: leaves, nested arrays and maps (maps become kvlists). */
export function sdkValueArb(o: SdkArbOptions): fc.Arbitrary<SdkAnyValue> {
  const leaf = leafArb(o);
  return fc.letrec<{ value: SdkAnyValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 4 }) as fc.Arbitrary<SdkAnyValue>,
    ),
  })).value;
}

function attributesArb(o: SdkArbOptions, maxKeys: number): fc.Arbitrary<LogAttributes> {
  return fc.dictionary(fc.string({ unit: 'binary', maxLength: 12 }), sdkValueArb(o), {
    maxKeys,
    noNullPrototype: true,
  });
}

const hrTimeArb = fc.tuple(fc.integer({ min: 0, max: 17_000_000_000 }), fc.integer({ min: 0, max: 999_999_999 }));

function resourceArb(): fc.Arbitrary<Resource> {
  const primitive = fc.oneof(
    fc.string({ maxLength: 16 }),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  );
  return fc
    .record({
      attrs: fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), primitive, {
        maxKeys: 6,
        noNullPrototype: true,
      }),
      schemaUrl: fc.option(fc.webUrl(), { nil: undefined }),
    })
    .map(({ attrs, schemaUrl }) => resourceFromAttributes(attrs, schemaUrl === undefined ? {} : { schemaUrl }));
}

function scopeArb(o: SdkArbOptions): fc.Arbitrary<SdkScope> {
  return fc
    .record({
      name: fc.string({ maxLength: 16 }),
      version: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
      schemaUrl: fc.option(fc.webUrl(), { nil: undefined }),
      attributes: attributesArb(o, 3),
      dropped: fc.nat(50),
    })
    .map(({ name, version, schemaUrl, attributes, dropped }) => {
      const s: { -readonly [K in keyof SdkScope]: SdkScope[K] } = { name };
      if (version !== undefined) s.version = version;
      if (schemaUrl !== undefined) s.schemaUrl = schemaUrl;
      if (Object.keys(attributes).length > 0) {
        s.attributes = attributes;
        s.droppedAttributesCount = dropped;
      }
      return s;
    });
}

/**
 * Arrays of SDK records drawn from small pools of resources and scopes (so several records share one
 * resource/scope object, as in a real batch).
 */
export function sdkRecordsArb(o: SdkArbOptions): fc.Arbitrary<ReadableLogRecord[]> {
  const recordShape = fc.record({
    r: fc.nat(),
    s: fc.nat(),
    hrTime: hrTimeArb,
    hrTimeObserved: hrTimeArb,
    severityNumber: fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }),
    severityText: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    body: o.jsonSafe ? sdkValueArb(o) : fc.option(sdkValueArb(o), { nil: undefined }),
    eventName: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    attributes: attributesArb(o, 8),
    droppedAttributesCount: fc.nat(1000),
    span: fc.option(fc.record({ traceId: hex(32), spanId: hex(16), traceFlags: fc.integer({ min: 0, max: 255 }) }), {
      nil: undefined,
    }),
  });
  return fc
    .record({
      resources: fc.array(resourceArb(), { minLength: 1, maxLength: 3 }),
      scopes: fc.array(scopeArb(o), { minLength: 1, maxLength: 3 }),
      shapes: fc.array(recordShape, { maxLength: 12 }),
    })
    .map(({ resources, scopes, shapes }) =>
      shapes.map((x) => {
        const rec: { -readonly [K in keyof ReadableLogRecord]: ReadableLogRecord[K] } = {
          hrTime: x.hrTime,
          hrTimeObserved: x.hrTimeObserved,
          resource: resources[x.r % resources.length]!,
          instrumentationScope: scopes[x.s % scopes.length]!,
          attributes: x.attributes,
          droppedAttributesCount: x.droppedAttributesCount,
        };
        if (x.severityNumber !== undefined) rec.severityNumber = x.severityNumber;
        if (x.severityText !== undefined) rec.severityText = x.severityText;
        if (x.body !== undefined) rec.body = x.body;
        if (x.eventName !== undefined) rec.eventName = x.eventName;
        if (x.span !== undefined) rec.spanContext = x.span;
        return rec;
      }),
    );
}

// ---- oracle -------------------------------------------------------------------------------------------------

/** The Sluice value the SDK's encoding of `v` must decode to. */
export function expectedValue(v: unknown): AnyValue {
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (typeof v === 'boolean') return { kind: 'bool', value: v };
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v >= -(2 ** 63) && v < 2 ** 63) return { kind: 'int', value: BigInt(v) };
    return { kind: 'double', value: v };
  }
  if (v instanceof Uint8Array) return { kind: 'bytes', value: new Uint8Array(v) };
  if (Array.isArray(v)) return { kind: 'array', values: v.map(expectedValue) };
  if (typeof v === 'object' && v !== null)
    return { kind: 'kvlist', values: expectedAttributes(v as Record<string, unknown>) };
  return EMPTY_VALUE;
}

/** Attributes in the SDK's key order. */
export function expectedAttributes(attrs: Record<string, unknown> | undefined): KeyValue[] {
  if (attrs === undefined) return [];
  return Object.keys(attrs).map((key) => ({ key, value: expectedValue(attrs[key]) }));
}

const nanos = (t: readonly [number, number]): bigint => BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]);
const idBytes = (h: string | undefined): Uint8Array =>
  h === undefined ? new Uint8Array(0) : new Uint8Array(Buffer.from(h, 'hex'));

/**
 * The records the serializer's output must decode to, in the serializer's order (grouped by resource object,
 * then scope object, in first-seen order) and with resource/scope objects shared like the decoder shares them.
 */
export function expectedRecords(records: readonly ReadableLogRecord[]): LogRecord[] {
  const groups = new Map<Resource, Map<SdkScope, ReadableLogRecord[]>>();
  for (const r of records) {
    let byScope = groups.get(r.resource);
    if (byScope === undefined) groups.set(r.resource, (byScope = new Map()));
    let list = byScope.get(r.instrumentationScope);
    if (list === undefined) byScope.set(r.instrumentationScope, (list = []));
    list.push(r);
  }
  const out: LogRecord[] = [];
  for (const [resource, byScope] of groups) {
    const res: ResourceInfo = {
      attributes: expectedAttributes(resource.attributes),
      droppedAttributesCount: 0,
      schemaUrl: resource.schemaUrl ?? '',
    };
    for (const [scope, list] of byScope) {
      const sc: ScopeInfo = {
        name: scope.name,
        version: scope.version ?? '',
        attributes: expectedAttributes(scope.attributes),
        droppedAttributesCount: scope.droppedAttributesCount ?? 0,
        schemaUrl: scope.schemaUrl ?? '',
      };
      for (const r of list) {
        out.push({
          timeUnixNano: nanos(r.hrTime),
          observedTimeUnixNano: nanos(r.hrTimeObserved),
          severityNumber: r.severityNumber ?? 0,
          severityText: r.severityText ?? '',
          body: r.body === undefined ? null : expectedValue(r.body),
          attributes: expectedAttributes(r.attributes),
          droppedAttributesCount: r.droppedAttributesCount,
          flags: r.spanContext?.traceFlags ?? 0,
          traceId: idBytes(r.spanContext?.traceId),
          spanId: idBytes(r.spanContext?.spanId),
          eventName: r.eventName ?? '',
          resource: res,
          scope: sc,
        });
      }
    }
  }
  return out;
}
