/**
 * @module loki-record
 * One record of a `/v1/query` result as Loki sees it (docs/grafana.md, "Labels"): its stream labels (resource
 * attributes, renamed), its structured metadata (log attributes, renamed, plus `detected_level`), its line and
 * its timestamp in ns. Parsed labels of `| json` / `| logfmt` are computed from the line here too, since they are
 * only shown, never filtered on.
 */
import type { JsonValue } from '@sluice/core';
import { labelNameOfKey, levelOfSeverity } from '@sluice/query';
import type { JsonObject } from './loki-run.js';

/** A record in Loki's terms. */
export interface LokiEntry {
  readonly ns: bigint;
  readonly line: string;
  readonly stream: Readonly<Record<string, string>>;
  readonly metadata: Readonly<Record<string, string>>;
}

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** An OTLP AnyValue (proto3 JSON) as plain JSON: what a structured body or a nested attribute reads as. */
function plain(v: JsonValue | undefined): unknown {
  if (!isObject(v)) return null;
  if ('stringValue' in v) return v['stringValue'];
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return v['doubleValue'];
  if ('boolValue' in v) return v['boolValue'];
  if ('bytesValue' in v) return v['bytesValue'];
  if ('arrayValue' in v) {
    const a = v['arrayValue'];
    const values = isObject(a) && Array.isArray(a['values']) ? (a['values'] as JsonValue[]) : [];
    return values.map(plain);
  }
  if ('kvlistValue' in v) {
    const kv = v['kvlistValue'];
    const values = isObject(kv) && Array.isArray(kv['values']) ? (kv['values'] as JsonValue[]) : [];
    const out: Record<string, unknown> = {};
    for (const e of values) if (isObject(e) && typeof e['key'] === 'string') out[e['key']] = plain(e['value']);
    return out;
  }
  return null;
}

/** An attribute value as a label value: strings as they are, numbers and booleans as text, the rest as JSON. */
function labelValue(v: JsonValue | undefined): string {
  if (!isObject(v)) return '';
  if (typeof v['stringValue'] === 'string') return v['stringValue'];
  if ('intValue' in v) return String(v['intValue']);
  if ('doubleValue' in v) return String(v['doubleValue']);
  if ('boolValue' in v) return String(v['boolValue']);
  return JSON.stringify(plain(v));
}

function labelsOf(kvs: JsonValue | undefined, into: Record<string, string>): void {
  if (!Array.isArray(kvs)) return;
  for (const kv of kvs as JsonValue[]) {
    if (isObject(kv) && typeof kv['key'] === 'string') into[labelNameOfKey(kv['key'])] = labelValue(kv['value']);
  }
}

/** The stream labels of a record: its resource attributes; `service_name` is `unknown_service` when absent. */
export function streamLabelsOf(row: JsonObject): Record<string, string> {
  const stream: Record<string, string> = {};
  labelsOf(row['resource_attributes'], stream);
  if (stream['service_name'] === undefined) stream['service_name'] = 'unknown_service';
  return stream;
}

/** A row of `records` in Loki's terms. */
export function lokiEntryOf(row: JsonObject): LokiEntry {
  const metadata: Record<string, string> = {};
  labelsOf(row['attributes'], metadata);
  const severity = Number(row['severity_number'] ?? 0);
  metadata['detected_level'] = levelOfSeverity(severity);
  const body = row['body'];
  let line = '';
  if (isObject(body)) {
    if (typeof body['line'] === 'string') line = body['line'];
    else if ('value' in body) {
      const v = plain(body['value']);
      line = typeof v === 'string' ? v : JSON.stringify(v);
    }
  }
  const t = row['time_unix_nano'];
  const observed = row['observed_time_unix_nano'];
  const ns = BigInt(
    (t === 0 || t === undefined) && observed !== undefined
      ? (observed as number | bigint)
      : ((t ?? 0) as number | bigint),
  );
  return { ns, line, stream: streamLabelsOf(row), metadata };
}

/** Labels `| json` extracts from a line: the fields of a JSON object, nested keys joined with `_`. */
function jsonLabels(line: string, into: Record<string, string>): void {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return;
  }
  const walk = (o: unknown, prefix: string): void => {
    if (typeof o !== 'object' || o === null || Array.isArray(o)) {
      if (prefix !== '') into[prefix] = typeof o === 'string' ? o : JSON.stringify(o);
      return;
    }
    for (const [k, val] of Object.entries(o as Record<string, unknown>)) {
      walk(val, prefix === '' ? labelNameOfKey(k) : `${prefix}_${labelNameOfKey(k)}`);
    }
  };
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) walk(v, '');
}

/** Labels `| logfmt` extracts from a line: `key=value` and `key="quoted value"` pairs. */
function logfmtLabels(line: string, into: Record<string, string>): void {
  const re = /([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)/g;
  for (const m of line.matchAll(re)) {
    const raw = m[2]!;
    into[labelNameOfKey(m[1]!)] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
}

/** The labels the parsers extract from a line, in order (a later parser does not overwrite an earlier one). */
export function parsedLabels(line: string, parsers: readonly ('json' | 'logfmt')[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of parsers) {
    const found: Record<string, string> = {};
    if (p === 'json') jsonLabels(line, found);
    else logfmtLabels(line, found);
    for (const [k, v] of Object.entries(found)) if (out[k] === undefined) out[k] = v;
  }
  return out;
}
