/**
 * @module records
 * LogRow rendering (the `records` of a `/v1/query` response) straight from decoded columns — attribute columns are emitted as the stored
 * canonical JSON text, u64/ns values as exact integers — and the record collector: the first `limit` matches in
 * file/time order, or with `sort` a bounded top-k heap of `limit` rows. Every retained row is reserved first.
 */
import type { CeilingEnforcement } from '@sluice/limits';
import type { FieldName, Path } from '@sluice/query';
import { toHex } from '@sluice/core';
import { BODY_KIND, LOG_COLUMNS } from '@sluice/storage';
import type { Columns } from './predicate-eval.js';
import { FIELD_COLUMN } from './fields.js';
import type { MemoryTracker } from './tracker.js';
import { QueryAbort } from './failures.js';
import { jsonString, jsonU64 } from './render-json.js';
import { cell } from './decode/string-vector.js';
import { RecordBytes, renderLogRowBytes } from './record-bytes.js';

const C = LOG_COLUMNS;

/** Columns a LogRow needs. */
export const RECORD_COLUMNS: readonly string[] = Object.freeze([
  C.timeUnixNano,
  C.observedTimeUnixNano,
  C.severityNumber,
  C.severityText,
  C.traceId,
  C.spanId,
  C.flags,
  C.eventName,
  C.scopeName,
  C.scopeVersion,
  C.scopeAttributes,
  C.attributes,
  C.resourceAttributes,
  C.resourceSchemaUrl,
  C.scopeSchemaUrl,
  C.droppedAttributesCount,
  C.templateId,
  C.templateVersion,
  C.bodyKind,
  C.body,
  C.lossyFlag,
]);

/** The LogRow keys a `project` path keeps. */
export function projectedKeys(paths: readonly Path[]): Set<string> {
  const keys = new Set<string>();
  for (const p of paths) {
    if (p.kind === 'attr') {
      keys.add(p.scope === 'attr' ? 'attributes' : 'resource_attributes');
      continue;
    }
    switch (p.name) {
      case 'severity':
        keys.add('severity_number').add('severity_text');
        break;
      case 'ts':
        keys.add('time_unix_nano');
        break;
      case 'observed_ts':
        keys.add('observed_time_unix_nano');
        break;
      case 'scope':
        keys.add('scope_name').add('scope_version');
        break;
      case 'service':
        keys.add('resource_attributes');
        break;
      case 'template_id':
        keys.add('template_id').add('template_version');
        break;
      case 'lossy':
      case 'confidence':
        break; // not LogRow keys
      default:
        keys.add(p.name);
    }
  }
  return keys;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function u64(v: unknown): string {
  return typeof v === 'bigint' ? jsonU64(v) : typeof v === 'number' ? String(Math.trunc(v)) : '0';
}

/** Renders row `i` as one LogRow JSON object; `keep` restricts the keys (project). */
export function renderLogRow(cols: Columns, i: number, keep: ReadonlySet<string> | undefined): string {
  const parts: string[] = [];
  const add = (key: string, json: string | undefined): void => {
    if (json === undefined) return;
    if (keep !== undefined && !keep.has(key)) return;
    parts.push(`"${key}":${json}`);
  };
  const v = (name: string): unknown => cell(cols[name], i);
  add('time_unix_nano', u64(v(C.timeUnixNano)));
  const obs = v(C.observedTimeUnixNano);
  add('observed_time_unix_nano', obs === null || obs === undefined ? undefined : u64(obs));
  add('severity_number', String(Number(v(C.severityNumber) ?? 0)));
  const st = str(v(C.severityText));
  add('severity_text', st === undefined || st === '' ? undefined : jsonString(st));
  const tr = v(C.traceId);
  add('trace_id', tr instanceof Uint8Array && tr.length > 0 ? `"${toHex(tr)}"` : undefined);
  const sp = v(C.spanId);
  add('span_id', sp instanceof Uint8Array && sp.length > 0 ? `"${toHex(sp)}"` : undefined);
  add('flags', String(Number(v(C.flags) ?? 0)));
  const ev = str(v(C.eventName));
  add('event_name', ev === undefined || ev === '' ? undefined : jsonString(ev));
  const sn = str(v(C.scopeName));
  add('scope_name', sn === undefined || sn === '' ? undefined : jsonString(sn));
  const sv = str(v(C.scopeVersion));
  add('scope_version', sv === undefined || sv === '' ? undefined : jsonString(sv));
  add('scope_attributes', str(v(C.scopeAttributes)) ?? '[]');
  add('attributes', str(v(C.attributes)) ?? '[]');
  add('resource_attributes', str(v(C.resourceAttributes)) ?? '[]');
  const rs = str(v(C.resourceSchemaUrl));
  add('resource_schema_url', rs === undefined || rs === '' ? undefined : jsonString(rs));
  const ss = str(v(C.scopeSchemaUrl));
  add('scope_schema_url', ss === undefined || ss === '' ? undefined : jsonString(ss));
  add('dropped_attributes_count', String(Number(v(C.droppedAttributesCount) ?? 0)));
  add('template_id', u64(v(C.templateId)));
  add('template_version', String(Number(v(C.templateVersion) ?? 0)));
  const kind = Number(v(C.bodyKind) ?? BODY_KIND.ABSENT);
  const body = str(v(C.body));
  if (kind === BODY_KIND.STRING && body !== undefined) {
    const rec = v(C.lossyFlag) === true ? 'retained_verbatim' : 'faithful';
    add('body', `{"kind":"rendered","line":${jsonString(body)},"reconstruction":"${rec}"}`);
  } else if (kind === BODY_KIND.STRUCTURED && body !== undefined) {
    add('body', `{"kind":"structured","value":${body}}`);
  }
  return `{${parts.join(',')}}`;
}

/** A sort key value (`null` sorts last in either direction). */
export type SortValue = string | number | bigint | boolean | null;

/** The sort key of row `i` for a field. */
export function sortValue(cols: Columns, i: number, field: FieldName): SortValue {
  const raw = cell(cols[FIELD_COLUMN[field]], i);
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'bigint') return BigInt.asUintN(64, raw);
  if (raw instanceof Uint8Array) return raw.length === 0 ? null : toHex(raw);
  if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') return raw;
  return null;
}

/** Compares sort values ascending, nulls last. */
export function compareSortValues(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a !== typeof b) return typeof a < typeof b ? -1 : 1;
  return a < b ? -1 : 1;
}

interface Held {
  readonly text: string;
  readonly reserved: number;
  readonly key: SortValue;
  readonly seq: number;
}

/** Bytes reserved for retaining a rendered row (UTF-16 string plus bookkeeping). */
export function retainedRowBytes(text: string): number {
  return text.length * 2 + 96;
}

/** Options of {@link RecordCollector}. */
export interface CollectorOptions {
  readonly limit: number;
  readonly tracker: MemoryTracker;
  readonly maxResultBytes: number;
  /** Observe mode: rows past `maxResultBytes` are kept (the result budget reports the crossing). Default enforce. */
  readonly enforcement?: CeilingEnforcement;
  readonly sort?: { readonly field: FieldName; readonly descending: boolean };
  /**
   * Without sort: render rows straight to bytes ({@link RecordBytes}) rather than one string each. For a JSON
   * answer; an Arrow answer reads the rows as text.
   */
  readonly bytes?: boolean;
}

/**
 * Keeps the rows of the response. Without sort: the first `limit` matches (order of arrival). With sort: a
 * binary heap whose root is the row to evict next (bounded to `limit` entries, each reserved).
 */
export class RecordCollector {
  readonly #o: CollectorOptions;
  readonly #rows: Held[] = [];
  /** The rendered rows, in byte mode. */
  readonly #bytes: RecordBytes | undefined;
  #seq = 0;
  #utf8 = 0;

  constructor(options: CollectorOptions) {
    this.#o = options;
    this.#bytes = options.bytes === true && options.sort === undefined ? new RecordBytes(options.tracker) : undefined;
  }

  /** Rows held. */
  get #held(): number {
    return this.#bytes?.count ?? this.#rows.length;
  }

  /** True when the collector would take the next arriving row without a key (no sort, not full). */
  get wantsMore(): boolean {
    return this.#o.sort === undefined ? this.#held < this.#o.limit : this.#o.limit > 0;
  }

  /** Without sort: how many more rows it takes (a sorted collector may take any number). */
  get remaining(): number {
    return this.#o.sort === undefined ? Math.max(0, this.#o.limit - this.#held) : Infinity;
  }

  /**
   * Without sort: renders row `i` of `cols` and adds it (straight to bytes in byte mode). `keep` restricts the
   * keys (project).
   */
  addRow(cols: Columns, i: number, keep: ReadonlySet<string> | undefined): void {
    const bytes = this.#bytes;
    if (bytes === undefined) {
      this.add(renderLogRow(cols, i, keep));
      return;
    }
    this.#utf8 += renderLogRowBytes(cols, i, keep, bytes) + 1;
    if (this.#utf8 > this.#o.maxResultBytes && this.#o.enforcement !== 'observe')
      throw new QueryAbort({ kind: 'query_result_limit', limitBytes: this.#o.maxResultBytes });
  }

  /**
   * In byte mode, the rows as byte chunks in response order (commas between rows included), each reserved until the
   * tracker is released; `undefined` otherwise.
   */
  drainBytes(): { readonly count: number; readonly chunks: readonly Buffer[] } | undefined {
    const bytes = this.#bytes;
    return bytes === undefined ? undefined : { count: bytes.count, chunks: bytes.chunks() };
  }

  /** True for sorted collection. */
  get sorted(): boolean {
    return this.#o.sort !== undefined;
  }

  #worse(a: Held, b: Held): boolean {
    // true when a should be evicted before b
    const s = this.#o.sort;
    let c = s === undefined ? 0 : compareSortValues(a.key, b.key);
    if (s?.descending === true && a.key !== null && b.key !== null) c = -c;
    if (c !== 0) return c > 0;
    return a.seq > b.seq;
  }

  /** With sort: true when a row with `key` would enter the heap now. */
  accepts(key: SortValue, order?: number): boolean {
    if (this.#o.limit <= 0) return false;
    if (this.#rows.length < this.#o.limit) return true;
    const root = this.#rows[0];
    return root !== undefined && this.#worse(root, { text: '', reserved: 0, key, seq: order ?? this.#seq });
  }

  /**
   * Adds a rendered row (reserving it first). `order` is the row's place in the scan's file order, which decides
   * between equal sort keys (earlier wins); without it, the order of arrival does. A scan that visits files in
   * another order passes it so the answer does not depend on the visit order.
   */
  add(text: string, key: SortValue = null, order?: number): void {
    const reserved = this.#o.tracker.grow(retainedRowBytes(text));
    const held: Held = { text, reserved, key, seq: order ?? this.#seq++ };
    if (this.#o.sort === undefined) {
      this.#utf8 += Buffer.byteLength(text, 'utf8') + 1;
      if (this.#utf8 > this.#o.maxResultBytes && this.#o.enforcement !== 'observe')
        throw new QueryAbort({ kind: 'query_result_limit', limitBytes: this.#o.maxResultBytes });
      this.#rows.push(held);
      return;
    }
    const h = this.#rows;
    if (h.length < this.#o.limit) {
      h.push(held);
      this.#up(h.length - 1);
      return;
    }
    const root = h[0] as Held;
    h[0] = held;
    this.#o.tracker.shrink(root.reserved);
    this.#down(0);
  }

  #up(i: number): void {
    const h = this.#rows;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#worse(h[i] as Held, h[p] as Held)) break;
      [h[i], h[p]] = [h[p] as Held, h[i] as Held];
      i = p;
    }
  }

  #down(i: number): void {
    const h = this.#rows;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.#worse(h[l] as Held, h[m] as Held)) m = l;
      if (r < h.length && this.#worse(h[r] as Held, h[m] as Held)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m] as Held, h[i] as Held];
      i = m;
    }
  }

  /** The rows in response order, each with the bytes reserved for it (the caller shrinks as it serializes). */
  drain(): { text: string; reserved: number }[] {
    const out = [...this.#rows];
    if (this.#o.sort !== undefined) out.sort((a, b) => (this.#worse(a, b) ? 1 : this.#worse(b, a) ? -1 : 0));
    this.#rows.length = 0;
    return out;
  }
}
