/**
 * @module parquet-schema
 * The Parquet schemas Sluice writes: data files (column names: docs/design/storage-format.md) and template audit files.
 * Column order and names are a storage contract: never rename or renumber; add new columns only as OPTIONAL.
 */
import type { ParquetWriter } from 'hyparquet-writer';

/** A Parquet schema element as hyparquet-writer takes it. */
export type SchemaElement = ConstructorParameters<typeof ParquetWriter>[0]['schema'][number];

/** Data-file column names, in file order. */
export const LOG_COLUMNS = Object.freeze({
  tenantId: 'tenant_id',
  templateId: 'template_id',
  templateVersion: 'template_version',
  timeUnixNano: 'time_unix_nano',
  observedTimeUnixNano: 'observed_time_unix_nano',
  effectiveTimeUnixNano: 'effective_time_unix_nano',
  severityNumber: 'severity_number',
  severityText: 'severity_text',
  scopeName: 'scope_name',
  scopeVersion: 'scope_version',
  scopeAttributes: 'scope_attributes',
  eventName: 'event_name',
  attributes: 'attributes',
  resourceAttributes: 'resource_attributes',
  resourceSchemaUrl: 'resource_schema_url',
  scopeSchemaUrl: 'scope_schema_url',
  droppedAttributesCount: 'dropped_attributes_count',
  flags: 'flags',
  traceId: 'trace_id',
  spanId: 'span_id',
  bodyKind: 'body_kind',
  body: 'body',
  params: 'params',
  confidence: 'confidence',
  lossyFlag: 'lossy_flag',
  serviceName: 'resource.service.name',
} as const);

/** One data-file column name. */
export type LogColumnName = (typeof LOG_COLUMNS)[keyof typeof LOG_COLUMNS];

/** Every data-file column, in file order. */
export const LOG_COLUMN_NAMES: readonly LogColumnName[] = Object.freeze(Object.values(LOG_COLUMNS));

/** `body_kind` values. */
export const BODY_KIND = Object.freeze({ STRING: 0, STRUCTURED: 1, ABSENT: 2 } as const);

/** Audit `event_kind` ordinals (docs/design/storage-format.md). */
export const AUDIT_EVENT_KIND = Object.freeze({ template_widened: 0, template_created: 6 } as const);

/** Key-value metadata key carrying the Sluice schema version. */
export const SCHEMA_VERSION_KEY = 'sluice.schema_version';
/**
 * Current data/audit schema version. 2: data files from the columnar encoder carry a page index (an offset index
 * on every chunk, a column index on the effective time) and ~128 KiB pages; version 1 files have neither, and
 * every reader keeps reading them (docs/design/storage-format.md, "Versions").
 */
export const SCHEMA_VERSION = '2';

type Rep = 'REQUIRED' | 'OPTIONAL';

const str = (name: string, rep: Rep): SchemaElement => ({
  name,
  type: 'BYTE_ARRAY',
  converted_type: 'UTF8',
  logical_type: { type: 'STRING' },
  repetition_type: rep,
});
/**
 * Nanosecond timestamps: INT64 + TIMESTAMP(NANOS). Values are UTC epoch ns, but `isAdjustedToUTC` is false on
 * purpose: DuckDB reads `true` as a microsecond TIMESTAMPTZ (dropping the last 3 digits) and `false` as an exact
 * TIMESTAMP_NS. u64 values ≥ 2^63 are stored as the int64 with the same bits.
 */
const tsNanos = (name: string, rep: Rep): SchemaElement => ({
  name,
  type: 'INT64',
  logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' },
  repetition_type: rep,
});
const u64 = (name: string): SchemaElement => ({
  name,
  type: 'INT64',
  converted_type: 'UINT_64',
  repetition_type: 'REQUIRED',
});
const u32 = (name: string): SchemaElement => ({
  name,
  type: 'INT32',
  converted_type: 'UINT_32',
  repetition_type: 'REQUIRED',
});
const u8 = (name: string): SchemaElement => ({
  name,
  type: 'INT32',
  converted_type: 'UINT_8',
  repetition_type: 'REQUIRED',
});
const fixed = (name: string, length: number): SchemaElement => ({
  name,
  type: 'FIXED_LEN_BYTE_ARRAY',
  type_length: length,
  repetition_type: 'OPTIONAL',
});

function root(children: readonly SchemaElement[][]): SchemaElement[] {
  return [{ name: 'schema', num_children: children.length }, ...children.flat()];
}

/**
 * The data-file schema (flattened Parquet schema elements, root first).
 *
 * Unsigned columns carry only the legacy `converted_type` (UINT_8/UINT_32/UINT_64): hyparquet-writer 0.17
 * serialises the `INTEGER` logical type's bit width with the wrong thrift type, which DuckDB rejects
 * ("TProtocolException: Invalid data"). DuckDB maps the converted types to UTINYINT/UINTEGER/UBIGINT.
 */
export function logSchema(): SchemaElement[] {
  const c = LOG_COLUMNS;
  return root([
    [str(c.tenantId, 'REQUIRED')],
    [u64(c.templateId)],
    [u32(c.templateVersion)],
    [tsNanos(c.timeUnixNano, 'REQUIRED')],
    [tsNanos(c.observedTimeUnixNano, 'OPTIONAL')],
    [tsNanos(c.effectiveTimeUnixNano, 'OPTIONAL')],
    [u8(c.severityNumber)],
    [str(c.severityText, 'OPTIONAL')],
    [str(c.scopeName, 'OPTIONAL')],
    [str(c.scopeVersion, 'OPTIONAL')],
    [str(c.scopeAttributes, 'OPTIONAL')],
    [str(c.eventName, 'OPTIONAL')],
    [str(c.attributes, 'REQUIRED')],
    [str(c.resourceAttributes, 'REQUIRED')],
    [str(c.resourceSchemaUrl, 'OPTIONAL')],
    [str(c.scopeSchemaUrl, 'OPTIONAL')],
    [u32(c.droppedAttributesCount)],
    [u32(c.flags)],
    [fixed(c.traceId, 16)],
    [fixed(c.spanId, 8)],
    [u8(c.bodyKind)],
    [str(c.body, 'OPTIONAL')],
    [
      {
        name: c.params,
        repetition_type: 'REQUIRED',
        num_children: 1,
        converted_type: 'LIST',
        logical_type: { type: 'LIST' },
      },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', num_children: 2 },
      { name: 'type_tag', type: 'INT32', repetition_type: 'REQUIRED' },
      str('value', 'REQUIRED'),
    ],
    [{ name: c.confidence, type: 'FLOAT', repetition_type: 'REQUIRED' }],
    [{ name: c.lossyFlag, type: 'BOOLEAN', repetition_type: 'REQUIRED' }],
    [str(c.serviceName, 'OPTIONAL')],
  ]);
}

/** Audit-file column names, in file order. */
export const AUDIT_COLUMN_NAMES = Object.freeze([
  'tenant_id',
  'timestamp',
  'event_kind',
  'event_type',
  'template_id',
  'old_version',
  'new_version',
  'old_template',
  'new_template',
  'positions_widened',
  'triggering_line_sample',
] as const);

/** The audit-file schema. */
export function auditSchema(): SchemaElement[] {
  return root([
    [str('tenant_id', 'REQUIRED')],
    [tsNanos('timestamp', 'REQUIRED')],
    [u8('event_kind')],
    [str('event_type', 'REQUIRED')],
    [u64('template_id')],
    [u32('old_version')],
    [u32('new_version')],
    [str('old_template', 'REQUIRED')],
    [str('new_template', 'REQUIRED')],
    [
      {
        name: 'positions_widened',
        repetition_type: 'REQUIRED',
        num_children: 1,
        converted_type: 'LIST',
        logical_type: { type: 'LIST' },
      },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', type: 'INT32', repetition_type: 'REQUIRED' },
    ],
    [str('triggering_line_sample', 'REQUIRED')],
  ]);
}
