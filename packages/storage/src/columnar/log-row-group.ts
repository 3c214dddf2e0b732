/**
 * @module columnar/log-row-group
 * Turns one row group of stored log rows into the data file's leaf columns, in file order
 * (packages/storage/src/parquet-schema.ts): one pass over the rows fills typed arrays, level bytes and string
 * builders; no per-value JS objects survive the pass. Low-cardinality strings start as dictionaries, free text
 * (attributes, body, param values) as PLAIN byte arrays (docs/design/storage-format.md, "Columnar encoder").
 */
import type { LogRecord } from '@sluice/core';
import { anyValueToJson, effectiveTimeUnixNano, keyValuesToJson } from '@sluice/core';
import type { StoredLogRow } from '../log-parquet-writer.js';
import { serviceNameOf } from '../log-row-fields.js';
import { BODY_KIND, LOG_COLUMNS } from '../parquet-schema.js';
import { ByteArrayBuilder } from './byte-array-builder.js';
import { ByteSink } from './byte-sink.js';
import { dictionaryFixed } from './fixed-dictionary.js';
import {
  booleanBounds,
  fixedBounds,
  float32Bounds,
  int32Bounds,
  int64Bounds,
  plainBoolean,
  plainFixed,
} from './fixed-width-values.js';
import type { LeafColumn, ValueEncoder } from './leaf-column.js';
import type { ChunkStatistics } from './parquet-footer.js';
import { PHYSICAL } from './parquet-footer.js';

/**
 * Memoises canonical JSON per KeyValue-list object: records decoded from one ResourceLogs/ScopeLogs share the
 * same resource/scope objects, so the JSON is rendered once per batch, not once per row.
 */
export class JsonMemo {
  private readonly map = new WeakMap<object, string>();
  of(list: LogRecord['attributes']): string {
    let s = this.map.get(list);
    if (s === undefined) {
      s = keyValuesToJson(list);
      this.map.set(list, s);
    }
    return s;
  }
}

const bytesOf = (a: Int32Array | BigInt64Array | Float32Array): Uint8Array =>
  new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** An OPTIONAL string column: builder plus definition levels. */
export class OptionalString {
  readonly defs: Uint8Array;
  readonly b: ByteArrayBuilder;
  constructor(n: number, dictionary: boolean, plainBytes?: number) {
    this.defs = new Uint8Array(n);
    this.b = new ByteArrayBuilder(n, dictionary, plainBytes);
  }
  set(i: number, s: string | null): void {
    if (s === null) return;
    this.defs[i] = 1;
    this.b.add(s);
  }
}

const emptyToNull = (s: string): string | null => (s === '' ? null : s);

function stats(nullCount: number, bounds: { min: Uint8Array; max: Uint8Array } | undefined): ChunkStatistics {
  return bounds === undefined ? { nullCount } : { nullCount, min: bounds.min, max: bounds.max };
}

function flat(
  name: string,
  physicalType: number,
  defs: Uint8Array | null,
  values: ValueEncoder,
  statistics: ChunkStatistics | undefined,
): LeafColumn {
  return {
    path: [name],
    physicalType,
    maxDefinitionLevel: defs === null ? 0 : 1,
    maxRepetitionLevel: 0,
    numLevels: -1,
    definitionLevels: defs,
    repetitionLevels: null,
    values,
    ...(statistics !== undefined ? { statistics } : {}),
  };
}

function stringLeaf(name: string, b: ByteArrayBuilder, defs: Uint8Array | null, n: number, withStats: boolean) {
  const st = withStats ? stats(n - b.count, b.bounds()) : undefined;
  return flat(name, PHYSICAL.BYTE_ARRAY, defs, b.encoder(), st);
}

/** An OPTIONAL fixed-width id column (`count` non-null ids back to back), with its bloom filter's input. */
function idLeaf(name: string, defs: Uint8Array, ids: Uint8Array, width: number, count: number, n: number): LeafColumn {
  const leaf = flat(
    name,
    PHYSICAL.FIXED_LEN_BYTE_ARRAY,
    defs,
    plainFixed(ids, width),
    stats(n - count, fixedBounds(ids, width, count)),
  );
  return { ...leaf, sketchInput: { kind: 'fixed', bytes: ids, width, count } };
}

/**
 * One row group's values in typed arrays and builders, in row order: what {@link rowGroupLeaves} turns into leaf
 * columns. Filled from row objects ({@link logRowGroupLeaves}) or gathered from a {@link LogRowBuffer}
 * (./buffered-row-group.ts); both fill it the same way, so both write the same bytes.
 */
export interface RowGroupColumns {
  readonly n: number;
  readonly tenant: ByteArrayBuilder;
  readonly templateId: BigInt64Array;
  readonly templateVersion: Int32Array;
  readonly time: BigInt64Array;
  /** Non-null observed times back to back (`observedCount` of them). */
  readonly observed: BigInt64Array;
  readonly observedDefs: Uint8Array;
  readonly observedCount: number;
  readonly effective: BigInt64Array;
  readonly severity: Int32Array;
  readonly severityText: OptionalString;
  readonly scopeName: OptionalString;
  readonly scopeVersion: OptionalString;
  readonly scopeAttrs: OptionalString;
  readonly eventName: OptionalString;
  readonly attrs: ByteArrayBuilder;
  readonly resAttrs: ByteArrayBuilder;
  readonly resSchema: ByteArrayBuilder;
  readonly scopeSchema: ByteArrayBuilder;
  readonly dropped: Int32Array;
  readonly flags: Int32Array;
  readonly traceId: Uint8Array;
  readonly traceDefs: Uint8Array;
  readonly traceCount: number;
  readonly spanId: Uint8Array;
  readonly spanDefs: Uint8Array;
  readonly spanCount: number;
  readonly bodyKind: Int32Array;
  readonly body: OptionalString;
  /** Type tags of every param of the group, row after row (`paramCount` of them). */
  readonly paramTags: Int32Array;
  readonly paramCount: number;
  readonly paramValues: ByteArrayBuilder;
  readonly paramReps: ByteSink;
  readonly paramDefs: ByteSink;
  readonly confidence: Float32Array;
  readonly lossy: Uint8Array;
  readonly service: OptionalString;
}

/** The leaf columns of one row group, in file order. */
export function logRowGroupLeaves(rows: readonly StoredLogRow[], memo: JsonMemo): LeafColumn[] {
  const n = rows.length;
  const tenant = new ByteArrayBuilder(n, true);
  const templateId = new BigInt64Array(n);
  const templateVersion = new Int32Array(n);
  const time = new BigInt64Array(n);
  const observed = new BigInt64Array(n);
  const observedDefs = new Uint8Array(n);
  let observedCount = 0;
  const effective = new BigInt64Array(n);
  const severity = new Int32Array(n);
  const severityText = new OptionalString(n, true);
  const scopeName = new OptionalString(n, true);
  const scopeVersion = new OptionalString(n, true);
  const scopeAttrs = new OptionalString(n, true);
  const eventName = new OptionalString(n, true);
  const attrs = new ByteArrayBuilder(n, false);
  const resAttrs = new ByteArrayBuilder(n, true);
  const resSchema = new ByteArrayBuilder(n, true);
  const scopeSchema = new ByteArrayBuilder(n, true);
  const dropped = new Int32Array(n);
  const flags = new Int32Array(n);
  const traceId = new Uint8Array(n * 16);
  const traceDefs = new Uint8Array(n);
  let traceCount = 0;
  const spanId = new Uint8Array(n * 8);
  const spanDefs = new Uint8Array(n);
  let spanCount = 0;
  const bodyKind = new Int32Array(n);
  const body = new OptionalString(n, false);
  let paramTags = new Int32Array(n);
  let paramCount = 0;
  const paramValues = new ByteArrayBuilder(n, false);
  const paramReps = new ByteSink(n);
  const paramDefs = new ByteSink(n);
  const confidence = new Float32Array(n);
  const lossy = new Uint8Array(n);
  const service = new OptionalString(n, true);
  for (let i = 0; i < n; i++) {
    const { tenantId, record: r, mined: m } = rows[i]!;
    tenant.add(tenantId);
    templateId[i] = BigInt.asIntN(64, m.templateId);
    templateVersion[i] = m.templateVersion;
    time[i] = BigInt.asIntN(64, r.timeUnixNano);
    if (r.observedTimeUnixNano !== 0n) {
      observed[observedCount++] = BigInt.asIntN(64, r.observedTimeUnixNano);
      observedDefs[i] = 1;
    }
    effective[i] = BigInt.asIntN(64, effectiveTimeUnixNano(r));
    severity[i] = r.severityNumber;
    severityText.set(i, emptyToNull(r.severityText));
    scopeName.set(i, emptyToNull(r.scope.name));
    scopeVersion.set(i, emptyToNull(r.scope.version));
    scopeAttrs.set(i, r.scope.attributes.length === 0 ? null : memo.of(r.scope.attributes));
    eventName.set(i, emptyToNull(r.eventName));
    attrs.add(keyValuesToJson(r.attributes));
    resAttrs.add(memo.of(r.resource.attributes));
    resSchema.add(r.resource.schemaUrl);
    scopeSchema.add(r.scope.schemaUrl);
    dropped[i] = r.droppedAttributesCount | 0;
    flags[i] = r.flags | 0;
    if (r.traceId.length === 16) {
      traceId.set(r.traceId, traceCount++ * 16);
      traceDefs[i] = 1;
    }
    if (r.spanId.length === 8) {
      spanId.set(r.spanId, spanCount++ * 8);
      spanDefs[i] = 1;
    }
    const b = r.body;
    if (b === null) bodyKind[i] = BODY_KIND.ABSENT;
    else if (b.kind === 'string') {
      bodyKind[i] = BODY_KIND.STRING;
      body.set(i, b.value);
    } else {
      bodyKind[i] = BODY_KIND.STRUCTURED;
      body.set(i, anyValueToJson(b));
    }
    const ps = m.params;
    if (ps.length === 0) {
      paramReps.byte(0);
      paramDefs.byte(0);
    }
    for (let k = 0; k < ps.length; k++) {
      paramReps.byte(k === 0 ? 0 : 1);
      paramDefs.byte(1);
      if (paramCount === paramTags.length) {
        const next = new Int32Array(paramTags.length * 2 + 16);
        next.set(paramTags);
        paramTags = next;
      }
      paramTags[paramCount++] = ps[k]!.typeTag;
      paramValues.add(ps[k]!.value);
    }
    confidence[i] = m.confidence;
    lossy[i] = m.lossy ? 1 : 0;
    service.set(i, serviceNameOf(r));
  }
  return rowGroupLeaves({
    n,
    tenant,
    templateId,
    templateVersion,
    time,
    observed,
    observedDefs,
    observedCount,
    effective,
    severity,
    severityText,
    scopeName,
    scopeVersion,
    scopeAttrs,
    eventName,
    attrs,
    resAttrs,
    resSchema,
    scopeSchema,
    dropped,
    flags,
    traceId,
    traceDefs,
    traceCount,
    spanId,
    spanDefs,
    spanCount,
    bodyKind,
    body,
    paramTags,
    paramCount,
    paramValues,
    paramReps,
    paramDefs,
    confidence,
    lossy,
    service,
  });
}

/** The leaf columns of one row group's {@link RowGroupColumns}, in file order. */
export function rowGroupLeaves(cols: RowGroupColumns): LeafColumn[] {
  const {
    n,
    tenant,
    templateId,
    templateVersion,
    time,
    observed,
    observedDefs,
    observedCount,
    effective,
    severity,
    severityText,
    scopeName,
    scopeVersion,
    scopeAttrs,
    eventName,
    attrs,
    resAttrs,
    resSchema,
    scopeSchema,
    dropped,
    flags,
    traceId,
    traceDefs,
    traceCount,
    spanId,
    spanDefs,
    spanCount,
    bodyKind,
    body,
    paramTags,
    paramValues,
    paramReps,
    paramDefs,
    confidence,
    lossy,
    service,
  } = cols;
  const c = LOG_COLUMNS;
  const all1 = (): Uint8Array => new Uint8Array(n).fill(1);
  const reqStats = <T>(b: T | undefined) => stats(0, b as { min: Uint8Array; max: Uint8Array } | undefined);
  const opt = (name: string, s: OptionalString, withStats: boolean) => stringLeaf(name, s.b, s.defs, n, withStats);
  const paramLevels = paramReps.length;
  const nested = (name: string, physicalType: number, values: ValueEncoder): LeafColumn => ({
    path: [c.params, 'list', 'element', name],
    physicalType,
    maxDefinitionLevel: 1,
    maxRepetitionLevel: 1,
    numLevels: paramLevels,
    definitionLevels: paramDefs.buf,
    repetitionLevels: paramReps.buf,
    values,
  });
  // Bodies are PLAIN (free text), so their bytes are laid out for the n-gram sketch as they are for the page.
  const bodyText = body.b.plainValues();
  const leaves: LeafColumn[] = [
    stringLeaf(c.tenantId, tenant, null, n, true),
    flat(
      c.templateId,
      PHYSICAL.INT64,
      null,
      dictionaryFixed(bytesOf(templateId), 8, n),
      reqStats(int64Bounds(templateId, n, true)),
    ),
    flat(
      c.templateVersion,
      PHYSICAL.INT32,
      null,
      plainFixed(bytesOf(templateVersion), 4),
      reqStats(int32Bounds(templateVersion, n, true)),
    ),
    flat(c.timeUnixNano, PHYSICAL.INT64, null, plainFixed(bytesOf(time), 8), reqStats(int64Bounds(time, n, false))),
    flat(
      c.observedTimeUnixNano,
      PHYSICAL.INT64,
      observedDefs,
      plainFixed(bytesOf(observed), 8),
      stats(n - observedCount, int64Bounds(observed, observedCount, false)),
    ),
    {
      ...flat(
        c.effectiveTimeUnixNano,
        PHYSICAL.INT64,
        all1(),
        plainFixed(bytesOf(effective), 8),
        reqStats(int64Bounds(effective, n, false)),
      ),
      // The page index a window uses to skip pages (docs/design/storage-format.md, "Page index").
      pageBounds: (v0: number, v1: number) => int64Bounds(effective.subarray(v0, v1), v1 - v0, false),
    },
    flat(
      c.severityNumber,
      PHYSICAL.INT32,
      null,
      dictionaryFixed(bytesOf(severity), 4, n),
      reqStats(int32Bounds(severity, n, true)),
    ),
    opt(c.severityText, severityText, true),
    opt(c.scopeName, scopeName, true),
    opt(c.scopeVersion, scopeVersion, true),
    opt(c.scopeAttributes, scopeAttrs, false),
    opt(c.eventName, eventName, true),
    stringLeaf(c.attributes, attrs, null, n, false),
    stringLeaf(c.resourceAttributes, resAttrs, null, n, false),
    stringLeaf(c.resourceSchemaUrl, resSchema, all1(), n, true),
    stringLeaf(c.scopeSchemaUrl, scopeSchema, all1(), n, true),
    flat(
      c.droppedAttributesCount,
      PHYSICAL.INT32,
      null,
      plainFixed(bytesOf(dropped), 4),
      reqStats(int32Bounds(dropped, n, true)),
    ),
    flat(c.flags, PHYSICAL.INT32, null, plainFixed(bytesOf(flags), 4), reqStats(int32Bounds(flags, n, true))),
    idLeaf(c.traceId, traceDefs, traceId, 16, traceCount, n),
    idLeaf(c.spanId, spanDefs, spanId, 8, spanCount, n),
    flat(c.bodyKind, PHYSICAL.INT32, null, plainFixed(bytesOf(bodyKind), 4), reqStats(int32Bounds(bodyKind, n, true))),
    {
      ...opt(c.body, body, false),
      ...(bodyText !== null ? { sketchInput: { kind: 'text' as const, ...bodyText } } : {}),
    },
    nested('type_tag', PHYSICAL.INT32, plainFixed(bytesOf(paramTags), 4)),
    nested('value', PHYSICAL.BYTE_ARRAY, paramValues.encoder()),
    flat(
      c.confidence,
      PHYSICAL.FLOAT,
      null,
      plainFixed(bytesOf(confidence), 4),
      reqStats(float32Bounds(confidence, n)),
    ),
    flat(c.lossyFlag, PHYSICAL.BOOLEAN, null, plainBoolean(lossy), reqStats(booleanBounds(lossy, n))),
    opt(c.serviceName, service, true),
  ];
  return leaves.map((l) => (l.numLevels === -1 ? { ...l, numLevels: n } : l));
}
