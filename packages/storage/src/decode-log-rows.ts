/**
 * @module decode-log-rows
 * Maps a fully read data-file row group back into {@link StoredLogRow}s (the inverse of the writer), for
 * round-trip tests, the compactor and record materialisation. Lossy only where the schema is: invalid-length
 * trace/span ids read back empty, resource/scope `dropped_attributes_count` are not stored (read back 0), and
 * `confidence` is a float32.
 */
import type { AnyValue, LogRecord, MinedFields, Param, ParamTypeTag } from '@sluice/core';
import { parseAnyValueJson, parseKeyValuesJson } from './canonical-json-parse.js';
import type { StoredLogRow } from './log-parquet-writer.js';
import type { ColumnValues } from './parquet-reader.js';
import { BODY_KIND, LOG_COLUMNS, LOG_COLUMN_NAMES } from './parquet-schema.js';

/** Thrown when a stored row violates the data-file schema. */
export class StoredRowError extends Error {
  override readonly name = 'StoredRowError';
}

const EMPTY = new Uint8Array(0);

function col(columns: Readonly<Record<string, ColumnValues>>, name: string): ColumnValues {
  const c = columns[name];
  if (c === undefined) throw new StoredRowError(`column ${name} was not read`);
  return c;
}

/** An int64 read back as the u64 it was written from. */
function u64(v: unknown): bigint {
  if (typeof v === 'bigint') return BigInt.asUintN(64, v);
  if (typeof v === 'number') return BigInt(v);
  throw new StoredRowError(`expected an integer, got ${typeof v}`);
}

function optString(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new StoredRowError(`${what}: expected a string`);
  return v;
}

function bytes(v: unknown): Uint8Array {
  return v instanceof Uint8Array ? v : EMPTY;
}

function num(v: unknown, what: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  throw new StoredRowError(`${what}: expected a number`);
}

function params(v: unknown): Param[] {
  if (!Array.isArray(v)) throw new StoredRowError('params: expected a list');
  return v.map((p: unknown) => {
    if (typeof p !== 'object' || p === null || !('type_tag' in p) || !('value' in p))
      throw new StoredRowError('params: bad element');
    return { typeTag: num(p.type_tag, 'params.type_tag') as ParamTypeTag, value: str(p.value, 'params.value') };
  });
}

/**
 * Rebuilds the rows of one row group from all of its data-file columns (read with
 * `readRowGroup(i, LOG_COLUMN_NAMES)`). Resource and scope objects are shared between consecutive rows with the
 * same stored values, as the OTLP decoder produces them.
 */
export function decodeLogRows(columns: Readonly<Record<string, ColumnValues>>): StoredLogRow[] {
  const c = LOG_COLUMNS;
  const get = (name: string) => col(columns, name);
  const tenant = get(c.tenantId);
  const n = tenant.length;
  for (const name of LOG_COLUMN_NAMES) {
    if (get(name).length !== n)
      throw new StoredRowError(`column ${name} has ${get(name).length} values, expected ${n}`);
  }
  const [
    templateId,
    templateVersion,
    time,
    observed,
    severity,
    severityText,
    scopeName,
    scopeVersion,
    scopeAttrs,
    eventName,
  ] = [
    get(c.templateId),
    get(c.templateVersion),
    get(c.timeUnixNano),
    get(c.observedTimeUnixNano),
    get(c.severityNumber),
    get(c.severityText),
    get(c.scopeName),
    get(c.scopeVersion),
    get(c.scopeAttributes),
    get(c.eventName),
  ];
  const [
    attrs,
    resAttrs,
    resSchema,
    scopeSchema,
    dropped,
    flags,
    traceId,
    spanId,
    bodyKind,
    body,
    prm,
    confidence,
    lossy,
  ] = [
    get(c.attributes),
    get(c.resourceAttributes),
    get(c.resourceSchemaUrl),
    get(c.scopeSchemaUrl),
    get(c.droppedAttributesCount),
    get(c.flags),
    get(c.traceId),
    get(c.spanId),
    get(c.bodyKind),
    get(c.body),
    get(c.params),
    get(c.confidence),
    get(c.lossyFlag),
  ];
  const rows: StoredLogRow[] = new Array<StoredLogRow>(n);
  let resource: LogRecord['resource'] | undefined;
  let resourceKey = '';
  let scope: LogRecord['scope'] | undefined;
  let scopeKey = '';
  for (let i = 0; i < n; i++) {
    const rJson = str(resAttrs[i], c.resourceAttributes);
    const rUrl = optString(resSchema[i]);
    const rKey = `${rUrl}\u0000${rJson}`;
    if (resource === undefined || rKey !== resourceKey) {
      resource = { attributes: parseKeyValuesJson(rJson), droppedAttributesCount: 0, schemaUrl: rUrl };
      resourceKey = rKey;
    }
    const sName = optString(scopeName[i]);
    const sVersion = optString(scopeVersion[i]);
    const sJson = typeof scopeAttrs[i] === 'string' ? (scopeAttrs[i] as string) : '[]';
    const sUrl = optString(scopeSchema[i]);
    const sKey = `${sName}\u0000${sVersion}\u0000${sUrl}\u0000${sJson}`;
    if (scope === undefined || sKey !== scopeKey) {
      scope = {
        name: sName,
        version: sVersion,
        attributes: parseKeyValuesJson(sJson),
        droppedAttributesCount: 0,
        schemaUrl: sUrl,
      };
      scopeKey = sKey;
    }
    const kind = num(bodyKind[i], c.bodyKind);
    let b: AnyValue | null;
    if (kind === BODY_KIND.ABSENT) b = null;
    else if (kind === BODY_KIND.STRING) b = { kind: 'string', value: str(body[i], c.body) };
    else if (kind === BODY_KIND.STRUCTURED) b = parseAnyValueJson(str(body[i], c.body));
    else throw new StoredRowError(`body_kind ${kind} is unknown`);
    const obs = observed[i];
    const record: LogRecord = {
      timeUnixNano: u64(time[i]),
      observedTimeUnixNano: obs === null || obs === undefined ? 0n : u64(obs),
      severityNumber: num(severity[i], c.severityNumber),
      severityText: optString(severityText[i]),
      body: b,
      attributes: parseKeyValuesJson(str(attrs[i], c.attributes)),
      droppedAttributesCount: num(dropped[i], c.droppedAttributesCount),
      flags: num(flags[i], c.flags),
      traceId: bytes(traceId[i]),
      spanId: bytes(spanId[i]),
      eventName: optString(eventName[i]),
      resource,
      scope,
    };
    const mined: MinedFields = {
      templateId: u64(templateId[i]),
      templateVersion: num(templateVersion[i], c.templateVersion),
      params: params(prm[i]),
      confidence: num(confidence[i], c.confidence),
      lossy: lossy[i] === true,
    };
    rows[i] = { tenantId: str(tenant[i], c.tenantId), record, mined };
  }
  return rows;
}
