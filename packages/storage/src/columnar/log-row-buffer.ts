/**
 * @module columnar/log-row-buffer
 * A partition's rows between their arrival and their flush, held as columns: typed arrays for the numbers, ids and
 * per-row table indices, one UTF-8 byte buffer with offsets for each free-text column (attributes, body, param
 * values), and small tables for what repeats (resource and scope context, severity text, event name). A row is
 * packed when it is added, so the record and mined objects it came from die young; nothing per row stays on the
 * JS heap until the flush (docs/design/storage-format.md, "Row buffer"). At the flush the rows are read back in
 * effective-time order into the same {@link RowGroupColumns} the row-object path fills, so the file is the same.
 */
import type { LogRecord, MinedFields } from '@sluice/core';
import { keyValuesToJson, anyValueToJson } from '@sluice/core';
import { serviceNameOf } from '../log-row-fields.js';
import { BODY_KIND } from '../parquet-schema.js';
import { ByteArrayBuilder } from './byte-array-builder.js';
import { ByteSink } from './byte-sink.js';
import { OptionalString, type RowGroupColumns } from './log-row-group.js';

/** The rows of one (tenant, hour) partition awaiting their data file. */
export interface LogRowBuffer {
  readonly tenant: string;
  /** Rows added. */
  readonly rows: number;
  /** Bytes of the typed arrays and byte buffers (capacity, not just what is used). */
  readonly heldBytes: number;
  /** Packs one row of {@link LogRowBuffer.tenant}. */
  add(record: LogRecord, mined: MinedFields): void;
  /** The effective time (u64 ns) of row `row` (in arrival order). */
  effectiveTimeAt(row: number): bigint;
  /** Row numbers in effective-time order; rows with equal times keep their arrival order (a stable sort). */
  sortedOrder(): Int32Array;
  /** Rows `order[from, to)` as one row group's columns, in that order. */
  rowGroup(order: Int32Array, from: number, to: number): RowGroupColumns;
}

/** Creates an empty buffer for `tenant`'s rows. */
export function createLogRowBuffer(tenant: string): LogRowBuffer {
  return new ColumnRowBuffer(tenant);
}

const utf8 = new TextEncoder();
/** Values up to this many UTF-16 code units take the ASCII byte loop first. */
const SHORT_VALUE_CHARS = 256;

/** Growable UTF-8 values back to back: value `v` is `data.buf[starts[v], starts[v + 1])`. */
/**
 * A partition starts small and doubles: a flush may hold one partition per (tenant, hour) seen, most of them a few
 * rows, and what a partition holds before its first row is outside the sink's byte estimate (its wire bytes).
 */
const INITIAL_ROWS = 16;
const INITIAL_VALUE_BYTES = 256;

class Utf8Values {
  readonly data = new ByteSink(INITIAL_VALUE_BYTES);
  starts = new Int32Array(INITIAL_ROWS + 1);
  count = 0;
  add(s: string): void {
    const data = this.data;
    const len = s.length;
    data.reserve(len * 3);
    const buf = data.buf;
    let at = data.length;
    let i = 0;
    // Short values are mostly ASCII: a byte loop beats a TextEncoder call and its subarray; the first non-ASCII
    // code unit hands the rest of the string to the encoder.
    if (len <= SHORT_VALUE_CHARS) {
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at++] = c;
      }
    }
    if (i < len) at += utf8.encodeInto(i === 0 ? s : s.slice(i), buf.subarray(at)).written;
    data.length = at;
    this.close();
  }
  /** Ends the current value (an empty one when nothing was appended since the last). */
  close(): void {
    if (this.count + 2 > this.starts.length) this.starts = grow(this.starts, this.count + 2);
    this.starts[++this.count] = this.data.length;
  }
  get heldBytes(): number {
    return this.data.buf.byteLength + this.starts.byteLength;
  }
}

type Typed = Int32Array | Uint8Array | Float32Array | BigUint64Array;

function grow<T extends Typed>(a: T, need: number): T {
  let cap = a.length * 2;
  while (cap < need) cap *= 2;
  const next = new (a.constructor as new (n: number) => T)(cap);
  next.set(a as never);
  return next;
}

/** An interning table of strings: index per distinct value, in first-seen order. */
class StringTable {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();
  of(s: string): number {
    let ix = this.index.get(s);
    if (ix === undefined) {
      ix = this.values.length;
      this.values.push(s);
      this.index.set(s, ix);
    }
    return ix;
  }
}

/** What rows of one ResourceLogs/ScopeLogs share, rendered once. */
interface Context {
  readonly resourceAttributes: string;
  readonly resourceSchemaUrl: string;
  readonly serviceName: string | null;
  readonly scopeName: string | null;
  readonly scopeVersion: string | null;
  readonly scopeAttributes: string | null;
  readonly scopeSchemaUrl: string;
}

const emptyToNull = (s: string): string | null => (s === '' ? null : s);

class ColumnRowBuffer implements LogRowBuffer {
  rows = 0;
  private cap = INITIAL_ROWS;
  private time = new BigUint64Array(this.cap);
  private observed = new BigUint64Array(this.cap);
  private effective = new BigUint64Array(this.cap);
  private templateId = new BigUint64Array(this.cap);
  private templateVersion = new Int32Array(this.cap);
  private severity = new Int32Array(this.cap);
  private dropped = new Int32Array(this.cap);
  private flags = new Int32Array(this.cap);
  private bodyKind = new Int32Array(this.cap);
  private confidence = new Float32Array(this.cap);
  private lossy = new Uint8Array(this.cap);
  /** Index into {@link contexts}. */
  private context = new Int32Array(this.cap);
  /** Index into {@link texts}, -1 for an empty severity text (stored NULL). */
  private severityText = new Int32Array(this.cap);
  /** Index into {@link texts}, -1 for an empty event name (stored NULL). */
  private eventName = new Int32Array(this.cap);
  private traceIds = new Uint8Array(this.cap * 16);
  private traceDefs = new Uint8Array(this.cap);
  private spanIds = new Uint8Array(this.cap * 8);
  private spanDefs = new Uint8Array(this.cap);
  /** Row `r`'s params are `[paramStart[r], paramStart[r + 1])` of {@link paramTags} / {@link paramValues}. */
  private paramStart = new Int32Array(this.cap + 1);
  private paramTags = new Int32Array(this.cap);
  private readonly paramValues = new Utf8Values();
  private readonly attributes = new Utf8Values();
  /** One value per row; empty for an absent body (its `body_kind` says NULL). */
  private readonly body = new Utf8Values();
  private readonly texts = new StringTable();
  private readonly contexts: Context[] = [];
  private readonly contextIndex = new Map<string, number>();
  /** The last record's resource and scope objects and their context: records of one ScopeLogs share both. */
  private lastResource: object | null = null;
  private lastScope: object | null = null;
  private lastContext = -1;

  constructor(readonly tenant: string) {}

  get heldBytes(): number {
    let n = this.attributes.heldBytes + this.body.heldBytes + this.paramValues.heldBytes;
    n += this.cap * (4 * 8 + 4 * 10 + 1 * 3 + 24) + this.paramTags.byteLength;
    return n;
  }

  private ensure(): void {
    if (this.rows < this.cap) return;
    const cap = this.cap * 2;
    this.cap = cap;
    this.time = grow(this.time, cap);
    this.observed = grow(this.observed, cap);
    this.effective = grow(this.effective, cap);
    this.templateId = grow(this.templateId, cap);
    this.templateVersion = grow(this.templateVersion, cap);
    this.severity = grow(this.severity, cap);
    this.dropped = grow(this.dropped, cap);
    this.flags = grow(this.flags, cap);
    this.bodyKind = grow(this.bodyKind, cap);
    this.confidence = grow(this.confidence, cap);
    this.lossy = grow(this.lossy, cap);
    this.context = grow(this.context, cap);
    this.severityText = grow(this.severityText, cap);
    this.eventName = grow(this.eventName, cap);
    this.traceIds = grow(this.traceIds, cap * 16);
    this.traceDefs = grow(this.traceDefs, cap);
    this.spanIds = grow(this.spanIds, cap * 8);
    this.spanDefs = grow(this.spanDefs, cap);
    this.paramStart = grow(this.paramStart, cap + 1);
  }

  private contextOf(r: LogRecord): number {
    if (r.resource === this.lastResource && r.scope === this.lastScope) return this.lastContext;
    const ctx: Context = {
      resourceAttributes: keyValuesToJson(r.resource.attributes),
      resourceSchemaUrl: r.resource.schemaUrl,
      serviceName: serviceNameOf(r),
      scopeName: emptyToNull(r.scope.name),
      scopeVersion: emptyToNull(r.scope.version),
      scopeAttributes: r.scope.attributes.length === 0 ? null : keyValuesToJson(r.scope.attributes),
      scopeSchemaUrl: r.scope.schemaUrl,
    };
    // Distinct contexts are few (one per resource and scope), so a JSON key per new object pair is cheap.
    const key = JSON.stringify(ctx);
    let ix = this.contextIndex.get(key);
    if (ix === undefined) {
      ix = this.contexts.length;
      this.contexts.push(ctx);
      this.contextIndex.set(key, ix);
    }
    this.lastResource = r.resource;
    this.lastScope = r.scope;
    this.lastContext = ix;
    return ix;
  }

  add(r: LogRecord, m: MinedFields): void {
    this.ensure();
    const i = this.rows;
    this.time[i] = r.timeUnixNano;
    this.observed[i] = r.observedTimeUnixNano;
    this.effective[i] = r.timeUnixNano !== 0n ? r.timeUnixNano : r.observedTimeUnixNano;
    this.templateId[i] = m.templateId;
    this.templateVersion[i] = m.templateVersion;
    this.severity[i] = r.severityNumber;
    this.dropped[i] = r.droppedAttributesCount | 0;
    this.flags[i] = r.flags | 0;
    this.confidence[i] = m.confidence;
    this.lossy[i] = m.lossy ? 1 : 0;
    this.context[i] = this.contextOf(r);
    this.severityText[i] = r.severityText === '' ? -1 : this.texts.of(r.severityText);
    this.eventName[i] = r.eventName === '' ? -1 : this.texts.of(r.eventName);
    if (r.traceId.length === 16) {
      this.traceIds.set(r.traceId, i * 16);
      this.traceDefs[i] = 1;
    }
    if (r.spanId.length === 8) {
      this.spanIds.set(r.spanId, i * 8);
      this.spanDefs[i] = 1;
    }
    this.attributes.add(keyValuesToJson(r.attributes));
    const b = r.body;
    if (b === null) {
      this.bodyKind[i] = BODY_KIND.ABSENT;
      this.body.close();
    } else if (b.kind === 'string') {
      this.bodyKind[i] = BODY_KIND.STRING;
      this.body.add(b.value);
    } else {
      this.bodyKind[i] = BODY_KIND.STRUCTURED;
      this.body.add(anyValueToJson(b));
    }
    const ps = m.params;
    let p = this.paramStart[i]!;
    if (p + ps.length > this.paramTags.length) this.paramTags = grow(this.paramTags, p + ps.length);
    for (let k = 0; k < ps.length; k++) {
      this.paramTags[p++] = ps[k]!.typeTag;
      this.paramValues.add(ps[k]!.value);
    }
    this.paramStart[i + 1] = p;
    this.rows = i + 1;
  }

  effectiveTimeAt(row: number): bigint {
    if (row < 0 || row >= this.rows) throw new RangeError(`row ${row} of ${this.rows}`);
    return this.effective[row]!;
  }

  sortedOrder(): Int32Array {
    const n = this.rows;
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    // The u64 effective times as (high, low) 32-bit words: compared without making a bigint per comparison.
    const w = new Uint32Array(this.effective.buffer, 0, n * 2);
    let sorted = true;
    for (let i = 1; i < n && sorted; i++) {
      const d = w[2 * i + 1]! - w[2 * i - 1]! || w[2 * i]! - w[2 * i - 2]!;
      if (d < 0) sorted = false;
    }
    if (sorted) return order;
    // Ties broken by arrival, so the order is the one a stable sort of the rows gives (what the sink always wrote).
    return order.sort((a, b) => w[2 * a + 1]! - w[2 * b + 1]! || w[2 * a]! - w[2 * b]! || a - b);
  }

  rowGroup(order: Int32Array, from: number, to: number): RowGroupColumns {
    if (from < 0 || to > order.length || from >= to) throw new RangeError(`rows [${from}, ${to}) of ${order.length}`);
    const n = to - from;
    // 64-bit and float columns are copied as 32-bit words: bit-exact, and no bigint or number per value.
    const w32 = (a: BigUint64Array | Float32Array) => new Int32Array(a.buffer, 0, a.length * (a.BYTES_PER_ELEMENT / 4));
    // Exact sizes of the PLAIN buffers (a length prefix per value), so they are allocated once.
    let paramCount = 0;
    let attrBytes = 4 * n;
    let bodyBytes = 4 * n;
    let paramBytes = 0;
    for (let k = from; k < to; k++) {
      const r = order[k]!;
      const p0 = this.paramStart[r]!;
      const p1 = this.paramStart[r + 1]!;
      paramCount += p1 - p0;
      paramBytes += 4 * (p1 - p0) + this.paramValues.starts[p1]! - this.paramValues.starts[p0]!;
      attrBytes += this.attributes.starts[r + 1]! - this.attributes.starts[r]!;
      bodyBytes += this.body.starts[r + 1]! - this.body.starts[r]!;
    }
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
    const attrs = new ByteArrayBuilder(n, false, attrBytes);
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
    const body = new OptionalString(n, false, bodyBytes);
    const paramTags = new Int32Array(paramCount);
    const paramValues = new ByteArrayBuilder(Math.max(n, paramCount), false, paramBytes);
    const paramReps = new ByteSink(n);
    const paramDefs = new ByteSink(n);
    const confidence = new Float32Array(n);
    const lossy = new Uint8Array(n);
    const service = new OptionalString(n, true);

    const srcTime = w32(this.time);
    const srcObserved = w32(this.observed);
    const srcEffective = w32(this.effective);
    const srcTemplate = w32(this.templateId);
    const srcConfidence = w32(this.confidence);
    const dstTime = new Int32Array(time.buffer);
    const dstObserved = new Int32Array(observed.buffer);
    const dstEffective = new Int32Array(effective.buffer);
    const dstTemplate = new Int32Array(templateId.buffer);
    const dstConfidence = new Int32Array(confidence.buffer);
    const texts = this.texts.values;
    const { attributes: attrSrc, body: bodySrc, paramValues: paramSrc } = this;
    let p = 0;
    for (let i = 0; i < n; i++) {
      const r = order[from + i]!;
      tenant.add(this.tenant);
      dstTemplate[2 * i] = srcTemplate[2 * r]!;
      dstTemplate[2 * i + 1] = srcTemplate[2 * r + 1]!;
      templateVersion[i] = this.templateVersion[r]!;
      dstTime[2 * i] = srcTime[2 * r]!;
      dstTime[2 * i + 1] = srcTime[2 * r + 1]!;
      if ((srcObserved[2 * r]! | srcObserved[2 * r + 1]!) !== 0) {
        dstObserved[2 * observedCount] = srcObserved[2 * r]!;
        dstObserved[2 * observedCount + 1] = srcObserved[2 * r + 1]!;
        observedCount++;
        observedDefs[i] = 1;
      }
      dstEffective[2 * i] = srcEffective[2 * r]!;
      dstEffective[2 * i + 1] = srcEffective[2 * r + 1]!;
      severity[i] = this.severity[r]!;
      const st = this.severityText[r]!;
      severityText.set(i, st < 0 ? null : texts[st]!);
      const ctx = this.contexts[this.context[r]!]!;
      scopeName.set(i, ctx.scopeName);
      scopeVersion.set(i, ctx.scopeVersion);
      scopeAttrs.set(i, ctx.scopeAttributes);
      const en = this.eventName[r]!;
      eventName.set(i, en < 0 ? null : texts[en]!);
      attrs.addUtf8(attrSrc.data.buf, attrSrc.starts[r]!, attrSrc.starts[r + 1]!);
      resAttrs.add(ctx.resourceAttributes);
      resSchema.add(ctx.resourceSchemaUrl);
      scopeSchema.add(ctx.scopeSchemaUrl);
      dropped[i] = this.dropped[r]!;
      flags[i] = this.flags[r]!;
      if (this.traceDefs[r] === 1) {
        const s = r * 16;
        const d = traceCount++ * 16;
        for (let b = 0; b < 16; b++) traceId[d + b] = this.traceIds[s + b]!;
        traceDefs[i] = 1;
      }
      if (this.spanDefs[r] === 1) {
        const s = r * 8;
        const d = spanCount++ * 8;
        for (let b = 0; b < 8; b++) spanId[d + b] = this.spanIds[s + b]!;
        spanDefs[i] = 1;
      }
      const kind = this.bodyKind[r]!;
      bodyKind[i] = kind;
      if (kind !== BODY_KIND.ABSENT) {
        body.defs[i] = 1;
        body.b.addUtf8(bodySrc.data.buf, bodySrc.starts[r]!, bodySrc.starts[r + 1]!);
      }
      const p0 = this.paramStart[r]!;
      const p1 = this.paramStart[r + 1]!;
      if (p0 === p1) {
        paramReps.byte(0);
        paramDefs.byte(0);
      }
      for (let k = p0; k < p1; k++) {
        paramReps.byte(k === p0 ? 0 : 1);
        paramDefs.byte(1);
        paramTags[p++] = this.paramTags[k]!;
        paramValues.addUtf8(paramSrc.data.buf, paramSrc.starts[k]!, paramSrc.starts[k + 1]!);
      }
      dstConfidence[i] = srcConfidence[r]!;
      lossy[i] = this.lossy[r]!;
      service.set(i, ctx.serviceName);
    }
    return {
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
    };
  }
}
