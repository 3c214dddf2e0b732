/**
 * @module log-parquet-writer
 * Encodes stored log rows into a data-file Parquet (ZSTD level 3, statistics on the pruning columns, 65,536-row
 * groups): by default with the columnar encoder (./columnar/, docs/design/storage-format.md "Columnar encoder"),
 * with hyparquet-writer when bloom filters are asked for or `encoder: 'hyparquet-writer'` is set. Input is
 * columnised one row group at a time, so besides the output bytes the writer holds at most one row group of
 * column arrays. Row order is kept exactly (the caller sorts).
 */
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { LogRecord, MinedFields, TemplateAuditEvent } from '@sluice/core';
import { anyValueToJson, effectiveTimeUnixNano, keyValuesToJson } from '@sluice/core';
import {
  AUDIT_EVENT_KIND,
  BODY_KIND,
  type LogColumnName,
  LOG_COLUMNS,
  SCHEMA_VERSION,
  SCHEMA_VERSION_KEY,
  auditSchema,
  logSchema,
} from './parquet-schema.js';
import { ensureZstd, zstdCompress } from './zstd.js';
import type { ColumnarLogsWriter } from './columnar/columnar-logs-writer.js';
import { createColumnarLogsWriter } from './columnar/columnar-logs-writer.js';
import { DEFAULT_ROW_GROUP_ROWS, serviceNameOf } from './log-row-fields.js';

export { DEFAULT_ROW_GROUP_ROWS, serviceNameOf } from './log-row-fields.js';

/** One row of a data file: the record as sent, its tenant and what the miner derived. */
export interface StoredLogRow {
  readonly tenantId: string;
  readonly record: LogRecord;
  readonly mined: MinedFields;
}

/** Options for {@link encodeLogsParquet} / {@link LogsParquetWriter}. */
export interface LogsParquetOptions {
  /** Rows per row group (default {@link DEFAULT_ROW_GROUP_ROWS}). */
  readonly rowGroupRows?: number;
  /**
   * Columns that get a split-block bloom filter (default none). Measured on 64k realistic rows: none ≈ 98k
   * rows/s, `template_id` + `resource.service.name` ≈ 61k rows/s, plus `trace_id` + `span_id` ≈ 37k rows/s.
   */
  readonly bloomFilterColumns?: readonly LogColumnName[];
  /**
   * Extra footer key-value metadata (after `sluice.schema_version`), e.g. the compactor's provenance record.
   * Readers see it in `ParquetFileHandle.metadata.key_value_metadata`.
   */
  readonly keyValueMetadata?: readonly { readonly key: string; readonly value: string }[];
  /**
   * Which encoder writes the file (default `'columnar'`; `'hyparquet-writer'` whenever `bloomFilterColumns` is
   * non-empty, because only hyparquet-writer writes bloom filters). Both write the same logical file
   * (docs/design/storage-format.md, "Columnar encoder"); the choice exists for the comparison tests and bench.
   */
  readonly encoder?: 'columnar' | 'hyparquet-writer';
  /**
   * Whether the columnar encoder writes each row group's filters — trace/span id bloom filters and the body
   * n-gram sketch (default true; docs/design/storage-format.md, "Row-group filters"). Off only for comparisons;
   * the hyparquet-writer path never writes them.
   */
  readonly sketches?: boolean;
  /**
   * Target uncompressed value bytes per data page for the columnar encoder (default `PAGE_TARGET_BYTES`, 128 KiB).
   * Tests set it small to get many pages per row group; operators have no reason to change it.
   */
  readonly pageTargetBytes?: number;
}

type ColumnData = Parameters<ParquetWriter['write']>[0]['columnData'];
type ColumnSource = ColumnData[number];

/** Columns without min/max statistics: large free text nobody prunes on (statistics cost ~10% of encode CPU). */
const NO_STATS = new Set<string>([
  LOG_COLUMNS.body,
  LOG_COLUMNS.attributes,
  LOG_COLUMNS.resourceAttributes,
  LOG_COLUMNS.scopeAttributes,
  LOG_COLUMNS.params,
]);

/** u64 → the int64 with the same bits (TIMESTAMP columns are signed INT64 in Parquet). */
function u64AsI64(v: bigint): bigint {
  return BigInt.asIntN(64, v);
}

function emptyToNull(s: string): string | null {
  return s === '' ? null : s;
}

/**
 * Memoises canonical JSON per KeyValue-list object: records decoded from one ResourceLogs/ScopeLogs share the
 * same resource/scope objects, so the JSON is rendered once per batch, not once per row.
 */
class JsonMemo {
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

function logColumns(rows: readonly StoredLogRow[], memo: JsonMemo, bloom: ReadonlySet<string>): ColumnData {
  const n = rows.length;
  const c = LOG_COLUMNS;
  const tenant = new Array<string>(n);
  const templateId = new Array<bigint>(n);
  const templateVersion = new Array<number>(n);
  const time = new Array<bigint>(n);
  const observed = new Array<bigint | null>(n);
  const effective = new Array<bigint>(n);
  const severity = new Array<number>(n);
  const severityText = new Array<string | null>(n);
  const scopeName = new Array<string | null>(n);
  const scopeVersion = new Array<string | null>(n);
  const scopeAttrs = new Array<string | null>(n);
  const eventName = new Array<string | null>(n);
  const attrs = new Array<string>(n);
  const resAttrs = new Array<string>(n);
  const resSchema = new Array<string>(n);
  const scopeSchema = new Array<string>(n);
  const dropped = new Array<number>(n);
  const flags = new Array<number>(n);
  const traceId = new Array<Uint8Array | null>(n);
  const spanId = new Array<Uint8Array | null>(n);
  const bodyKind = new Array<number>(n);
  const body = new Array<string | null>(n);
  const params = new Array<{ type_tag: number; value: string }[]>(n);
  const confidence = new Array<number>(n);
  const lossy = new Array<boolean>(n);
  const service = new Array<string | null>(n);
  for (let i = 0; i < n; i++) {
    const { tenantId, record: r, mined: m } = rows[i]!;
    tenant[i] = tenantId;
    templateId[i] = m.templateId;
    templateVersion[i] = m.templateVersion;
    time[i] = u64AsI64(r.timeUnixNano);
    observed[i] = r.observedTimeUnixNano === 0n ? null : u64AsI64(r.observedTimeUnixNano);
    effective[i] = u64AsI64(effectiveTimeUnixNano(r));
    severity[i] = r.severityNumber;
    severityText[i] = emptyToNull(r.severityText);
    scopeName[i] = emptyToNull(r.scope.name);
    scopeVersion[i] = emptyToNull(r.scope.version);
    scopeAttrs[i] = r.scope.attributes.length === 0 ? null : memo.of(r.scope.attributes);
    eventName[i] = emptyToNull(r.eventName);
    attrs[i] = keyValuesToJson(r.attributes);
    resAttrs[i] = memo.of(r.resource.attributes);
    resSchema[i] = r.resource.schemaUrl;
    scopeSchema[i] = r.scope.schemaUrl;
    dropped[i] = r.droppedAttributesCount;
    flags[i] = r.flags;
    traceId[i] = r.traceId.length === 16 ? r.traceId : null;
    spanId[i] = r.spanId.length === 8 ? r.spanId : null;
    const b = r.body;
    if (b === null) {
      bodyKind[i] = BODY_KIND.ABSENT;
      body[i] = null;
    } else if (b.kind === 'string') {
      bodyKind[i] = BODY_KIND.STRING;
      body[i] = b.value;
    } else {
      bodyKind[i] = BODY_KIND.STRUCTURED;
      body[i] = anyValueToJson(b);
    }
    params[i] = m.params.map((p) => ({ type_tag: p.typeTag, value: p.value }));
    confidence[i] = m.confidence;
    lossy[i] = m.lossy;
    service[i] = serviceNameOf(r);
  }
  const col = (name: string, data: unknown[]): ColumnSource => ({
    name,
    data: data as ColumnSource['data'],
    statistics: !NO_STATS.has(name),
    ...(bloom.has(name) ? { bloomFilter: true } : {}),
  });
  return [
    col(c.tenantId, tenant),
    col(c.templateId, templateId),
    col(c.templateVersion, templateVersion),
    col(c.timeUnixNano, time),
    col(c.observedTimeUnixNano, observed),
    col(c.effectiveTimeUnixNano, effective),
    col(c.severityNumber, severity),
    col(c.severityText, severityText),
    col(c.scopeName, scopeName),
    col(c.scopeVersion, scopeVersion),
    col(c.scopeAttributes, scopeAttrs),
    col(c.eventName, eventName),
    col(c.attributes, attrs),
    col(c.resourceAttributes, resAttrs),
    col(c.resourceSchemaUrl, resSchema),
    col(c.scopeSchemaUrl, scopeSchema),
    col(c.droppedAttributesCount, dropped),
    col(c.flags, flags),
    col(c.traceId, traceId),
    col(c.spanId, spanId),
    col(c.bodyKind, bodyKind),
    col(c.body, body),
    col(c.params, params),
    col(c.confidence, confidence),
    col(c.lossyFlag, lossy),
    col(c.serviceName, service),
  ];
}

/**
 * Incremental data-file writer: {@link LogsParquetWriter.writeRowGroup} once per ≤ `rowGroupRows` rows, then
 * {@link LogsParquetWriter.finish}. Create with {@link LogsParquetWriter.create} (initialises ZSTD). This is the
 * one switch point between the encoders: the columnar encoder unless bloom filters are asked for (see
 * {@link LogsParquetOptions.encoder}).
 */
export class LogsParquetWriter {
  private readonly bytes = new ByteWriter();
  private readonly writer: ParquetWriter | undefined;
  private readonly memo = new JsonMemo();
  private finished = false;
  /** Rows written so far. */
  rows = 0;

  private constructor(
    readonly rowGroupRows: number,
    private readonly bloom: ReadonlySet<string>,
    extraMetadata: readonly { readonly key: string; readonly value: string }[],
    private readonly columnar: ColumnarLogsWriter | undefined,
  ) {
    this.writer =
      columnar !== undefined
        ? undefined
        : new ParquetWriter({
            writer: this.bytes,
            schema: logSchema(),
            codec: 'ZSTD',
            compressors: { ZSTD: zstdCompress },
            statistics: true,
            kvMetadata: [
              { key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION },
              ...extraMetadata.map((m) => ({ key: m.key, value: m.value })),
            ],
            createdBy: 'sluice',
          });
  }

  /** A writer with ZSTD ready. */
  static async create(options?: LogsParquetOptions): Promise<LogsParquetWriter> {
    await ensureZstd();
    const rowGroupRows = options?.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
    if (!Number.isSafeInteger(rowGroupRows) || rowGroupRows < 1)
      throw new RangeError(`rowGroupRows must be ≥ 1, got ${rowGroupRows}`);
    const bloom = new Set(options?.bloomFilterColumns ?? []);
    const useColumnar = bloom.size === 0 && (options?.encoder ?? 'columnar') === 'columnar';
    return new LogsParquetWriter(
      rowGroupRows,
      bloom,
      options?.keyValueMetadata ?? [],
      useColumnar ? await createColumnarLogsWriter({ ...options, rowGroupRows }) : undefined,
    );
  }

  /** Appends one row group (1..rowGroupRows rows). */
  writeRowGroup(rows: readonly StoredLogRow[]): void {
    if (this.finished) throw new Error('LogsParquetWriter: already finished');
    if (rows.length === 0) return;
    if (rows.length > this.rowGroupRows)
      throw new RangeError(`row group of ${rows.length} rows exceeds ${this.rowGroupRows}`);
    if (this.columnar !== undefined) this.columnar.writeRowGroup(rows);
    else {
      const r = this.writer!.write({
        columnData: logColumns(rows, this.memo, this.bloom),
        rowGroupSize: rows.length,
      });
      if (r !== undefined) throw new Error('LogsParquetWriter: unexpected asynchronous flush');
    }
    this.rows += rows.length;
  }

  /** Writes the footer and returns the whole file. */
  finish(): Uint8Array {
    if (this.finished) throw new Error('LogsParquetWriter: already finished');
    this.finished = true;
    if (this.columnar !== undefined) return this.columnar.finish();
    const r = this.writer!.finish();
    if (r !== undefined) throw new Error('LogsParquetWriter: unexpected asynchronous finish');
    return this.bytes.getBytes();
  }
}

/**
 * Encodes rows (already sorted by the caller) into one data file, `rowGroupRows` rows per row group.
 *
 * @example
 * const bytes = await encodeLogsParquet(rows);
 * await store.put(dataFileKey(tenant, effectiveTimeUnixNano(rows[0].record), uuidv7()), bytes);
 */
export async function encodeLogsParquet(
  rows: readonly StoredLogRow[],
  options?: LogsParquetOptions,
): Promise<Uint8Array> {
  const w = await LogsParquetWriter.create(options);
  for (let i = 0; i < rows.length; i += w.rowGroupRows) w.writeRowGroup(rows.slice(i, i + w.rowGroupRows));
  return w.finish();
}

/** Encodes template audit events into one audit file (single row group per 65,536 events). */
export async function encodeAuditParquet(events: readonly TemplateAuditEvent[]): Promise<Uint8Array> {
  await ensureZstd();
  const bytes = new ByteWriter();
  const writer = new ParquetWriter({
    writer: bytes,
    schema: auditSchema(),
    codec: 'ZSTD',
    compressors: { ZSTD: zstdCompress },
    statistics: true,
    kvMetadata: [{ key: SCHEMA_VERSION_KEY, value: SCHEMA_VERSION }],
    createdBy: 'sluice',
  });
  for (let start = 0; start < events.length; start += DEFAULT_ROW_GROUP_ROWS) {
    const ev = events.slice(start, start + DEFAULT_ROW_GROUP_ROWS);
    const colOf = (name: string, data: unknown[]): ColumnSource => ({ name, data: data as ColumnSource['data'] });
    const r = writer.write({
      rowGroupSize: ev.length,
      columnData: [
        colOf(
          'tenant_id',
          ev.map((e) => e.tenantId),
        ),
        colOf(
          'timestamp',
          ev.map((e) => u64AsI64(e.timestampUnixNano)),
        ),
        colOf(
          'event_kind',
          ev.map((e) => AUDIT_EVENT_KIND[e.eventType]),
        ),
        colOf(
          'event_type',
          ev.map((e) => e.eventType),
        ),
        colOf(
          'template_id',
          ev.map((e) => e.templateId),
        ),
        colOf(
          'old_version',
          ev.map((e) => e.oldVersion),
        ),
        colOf(
          'new_version',
          ev.map((e) => e.newVersion),
        ),
        colOf(
          'old_template',
          ev.map((e) => e.oldTemplate),
        ),
        colOf(
          'new_template',
          ev.map((e) => e.newTemplate),
        ),
        colOf(
          'positions_widened',
          ev.map((e) => [...e.positionsWidened]),
        ),
        colOf(
          'triggering_line_sample',
          ev.map((e) => e.triggeringLineSample),
        ),
      ],
    });
    if (r !== undefined) throw new Error('encodeAuditParquet: unexpected asynchronous flush');
  }
  if (writer.finish() !== undefined) throw new Error('encodeAuditParquet: unexpected asynchronous finish');
  return bytes.getBytes();
}
