/**
 * @module loki-metadata
 * The metadata endpoints Grafana's label browser and Logs Drilldown call (docs/grafana.md): label names, label
 * values, series, index stats, volume, detected labels and fields, patterns. Each is one or two ordinary queries
 * through the query service.
 *
 * Exact: label values, index stats' entries, volume and patterns (aggregations over the whole window). From a
 * sample of the newest `querier.loki.sample_rows` records of the window: label names, series, detected labels and
 * detected fields — Sluice has no index of label sets, and reading every record to list names would make a label
 * browser as costly as a full scan.
 */
import type { JsonValue, Result } from '@sluice/core';
import { levelOfSeverity, type GroupTerm, type LogQuery, type LokiGroupLabel, type Predicate } from '@sluice/query';
import type { LokiFailure } from './loki-error.js';
import { evaluateMetric, type LokiSeries, type Points } from './loki-metric.js';
import type { LokiRange } from './loki-params.js';
import { lokiEntryOf, parsedLabels, streamLabelsOf } from './loki-record.js';
import { runLokiQuery, runTemplateList, statsOf, type JsonObject, type LokiRunContext } from './loki-run.js';

const range = (r: LokiRange) =>
  ({ kind: 'range', from: { kind: 'absolute', ns: r.startNs }, to: { kind: 'absolute', ns: r.endNs } }) as const;

/** The newest `n` records of the window matching `predicate`. */
export async function sampleRows(
  ctx: LokiRunContext,
  predicate: Predicate,
  window: LokiRange,
  n: number,
): Promise<Result<JsonObject[], LokiFailure>> {
  const query: LogQuery = {
    kind: 'logs',
    predicate,
    stages: [range(window), { kind: 'sort', key: 'ts', descending: true }, { kind: 'limit', n: BigInt(n) }],
  };
  const r = await runLokiQuery(ctx, query);
  if (!r.ok) return r;
  const records = r.value['records'];
  return { ok: true, value: Array.isArray(records) ? (records as JsonValue[] as JsonObject[]) : [] };
}

/** Label names of the sampled records' streams, sorted. */
export function labelNames(rows: readonly JsonObject[]): string[] {
  const names = new Set<string>();
  for (const row of rows) for (const k of Object.keys(streamLabelsOf(row))) names.add(k);
  return [...names].sort();
}

/** Distinct stream label sets of the sampled records. */
export function seriesOf(rows: readonly JsonObject[]): Record<string, string>[] {
  const seen = new Map<string, Record<string, string>>();
  for (const row of rows) {
    const labels = streamLabelsOf(row);
    seen.set(
      JSON.stringify(
        Object.keys(labels)
          .sort()
          .map((k) => [k, labels[k]]),
      ),
      labels,
    );
  }
  return [...seen.values()];
}

/** `detected_labels`: each stream label of the sample with its number of distinct values. */
export function detectedLabels(rows: readonly JsonObject[]): { label: string; cardinality: number }[] {
  const values = new Map<string, Set<string>>();
  for (const row of rows) {
    for (const [k, v] of Object.entries(streamLabelsOf(row))) {
      if (!values.has(k)) values.set(k, new Set());
      values.get(k)!.add(v);
    }
  }
  return [...values.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([label, set]) => ({ label, cardinality: set.size }));
}

type FieldType = 'string' | 'int' | 'float' | 'boolean';

function typeOf(v: string): FieldType {
  if (/^-?[0-9]+$/.test(v)) return 'int';
  if (/^-?[0-9]*\.[0-9]+([eE][+-]?[0-9]+)?$/.test(v)) return 'float';
  if (v === 'true' || v === 'false') return 'boolean';
  return 'string';
}

/** One entry of `detected_fields`. */
export interface DetectedField {
  readonly label: string;
  readonly type: FieldType;
  readonly cardinality: number;
  readonly parsers: string[] | null;
}

interface FieldSeen {
  readonly values: Set<string>;
  readonly types: Set<FieldType>;
  parsers: Set<string> | null;
}

/** Every field of the sampled records: structured metadata (no parser), then what `json` or else `logfmt` finds. */
function fieldsOf(rows: readonly JsonObject[]): Map<string, FieldSeen> {
  const fields = new Map<string, FieldSeen>();
  const note = (label: string, value: string, parser: string | null): void => {
    let f = fields.get(label);
    if (f === undefined) {
      f = { values: new Set(), types: new Set(), parsers: parser === null ? null : new Set() };
      fields.set(label, f);
    }
    f.values.add(value);
    f.types.add(typeOf(value));
    if (parser !== null) (f.parsers ??= new Set()).add(parser);
  };
  for (const row of rows) {
    const e = lokiEntryOf(row);
    for (const [k, v] of Object.entries(e.metadata)) note(k, v, null);
    const json = parsedLabels(e.line, ['json']);
    const parser = Object.keys(json).length > 0 ? 'json' : 'logfmt';
    const parsed = parser === 'json' ? json : parsedLabels(e.line, ['logfmt']);
    for (const [k, v] of Object.entries(parsed)) if (e.metadata[k] === undefined) note(k, v, parser);
  }
  return fields;
}

/**
 * `detected_fields`: structured metadata (log attributes, `detected_level`) with `parsers: null`, and the fields
 * `json` or `logfmt` find in the lines with the parser named. The type is the narrowest that fits every value.
 */
export function detectedFields(rows: readonly JsonObject[]): DetectedField[] {
  const narrowest = (types: Set<FieldType>): FieldType => {
    if (types.size === 1) return [...types][0]!;
    if ([...types].every((t) => t === 'int' || t === 'float')) return 'float';
    return 'string';
  };
  return [...fieldsOf(rows).entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([label, f]) => ({
      label,
      type: narrowest(f.types),
      cardinality: f.values.size,
      parsers: f.parsers === null ? null : [...f.parsers].sort(),
    }));
}

/** `detected_field/<name>/values`: the values one detected field takes in the sample, sorted. */
export function detectedFieldValues(rows: readonly JsonObject[], name: string): string[] {
  return [...(fieldsOf(rows).get(name)?.values ?? [])].sort();
}

/** Values of one label over the window (exact: an aggregation by that label). */
export async function labelValues(
  ctx: LokiRunContext,
  label: LokiGroupLabel,
  predicate: Predicate,
  window: LokiRange,
): Promise<Result<string[], LokiFailure>> {
  const query: LogQuery = { kind: 'logs', predicate, stages: [range(window), { kind: 'count', by: [label.term] }] };
  const r = await runLokiQuery(ctx, query);
  if (!r.ok) return r;
  const values = new Set<string>();
  const agg = r.value['aggregate'];
  for (const g of Array.isArray(agg) ? (agg as JsonValue[]) : []) {
    const key = (g as JsonObject)['key'];
    const v = Array.isArray(key) ? key[0] : undefined;
    if (typeof v !== 'string') continue;
    values.add(label.level ? levelOfSeverity(Number(v)) : v);
  }
  if (label.label === 'service_name' && (statsOf(r.value)['rows_excluded'] ?? 0) > 0) values.add('unknown_service');
  return { ok: true, value: [...values].sort() };
}

/** `index/stats`: entries (exact), streams (distinct services), chunks (row groups read), bytes (bytes read). */
export async function indexStats(
  ctx: LokiRunContext,
  predicate: Predicate,
  window: LokiRange,
): Promise<Result<{ streams: number; chunks: number; entries: number; bytes: number }, LokiFailure>> {
  const service: GroupTerm = { kind: 'path', path: { kind: 'field', name: 'service' } };
  const query: LogQuery = { kind: 'logs', predicate, stages: [range(window), { kind: 'count', by: [service] }] };
  const r = await runLokiQuery(ctx, query);
  if (!r.ok) return r;
  const agg = r.value['aggregate'];
  const groups = Array.isArray(agg) ? (agg as JsonValue[] as JsonObject[]) : [];
  const stats = statsOf(r.value);
  const excluded = stats['rows_excluded'] ?? 0;
  return {
    ok: true,
    value: {
      streams: groups.length + (excluded > 0 ? 1 : 0),
      chunks: stats['row_groups_scanned'] ?? 0,
      entries: groups.reduce((n, g) => n + Number(g['count'] ?? 0), 0) + excluded,
      bytes: stats['bytes_read'] ?? 0,
    },
  };
}

/** `index/volume` / `volume_range`: record counts per label set (Loki counts bytes; Sluice counts lines). */
export function volume(
  ctx: LokiRunContext,
  predicate: Predicate,
  by: readonly LokiGroupLabel[],
  points: Points,
  rangeNs: bigint,
): Promise<Result<LokiSeries[], LokiFailure>> {
  return evaluateMetric(ctx, { predicate, fn: 'count_over_time', rangeNs, by, outer: [] }, points);
}

/** One pattern of `/patterns`. */
export interface LokiPattern {
  readonly pattern: string;
  readonly samples: [number, number][];
}

/**
 * `/patterns`: the mined templates of the matching records with their counts per step, most frequent first; a
 * template's wildcards (`<*>`) are written as Loki's `<_>`. Records without a template (id 0) are left out.
 */
export async function patterns(
  ctx: LokiRunContext,
  predicate: Predicate,
  window: LokiRange,
  stepNs: bigint,
): Promise<Result<LokiPattern[], LokiFailure>> {
  const terms: GroupTerm[] = [
    { kind: 'path', path: { kind: 'field', name: 'template_id' } },
    { kind: 'bucket', widthNs: stepNs },
  ];
  const query: LogQuery = { kind: 'logs', predicate, stages: [range(window), { kind: 'count', by: terms }] };
  const counted = await runLokiQuery(ctx, query);
  if (!counted.ok) return counted;
  const templates = await runTemplateList(ctx);
  if (!templates.ok) return templates;
  const text = new Map<string, string>();
  const list = templates.value['templates'];
  for (const t of Array.isArray(list) ? (list as JsonValue[] as JsonObject[]) : []) {
    // Sorted by (id, version): the last version of an id wins.
    text.set(String(t['template_id']), String(t['rendered_template']));
  }
  const byId = new Map<string, [number, number][]>();
  const agg = counted.value['aggregate'];
  for (const g of Array.isArray(agg) ? (agg as JsonValue[] as JsonObject[]) : []) {
    const [id, bucket] = g['key'] as string[];
    if (id === undefined || id === '0' || bucket === undefined) continue;
    const samples = byId.get(id) ?? [];
    samples.push([Math.floor(Date.parse(bucket) / 1000), Number(g['count'] ?? 0)]);
    byId.set(id, samples);
  }
  const total = (s: [number, number][]): number => s.reduce((n, [, c]) => n + c, 0);
  return {
    ok: true,
    value: [...byId.entries()]
      .filter(([id]) => text.has(id))
      .map(([id, samples]) => ({
        pattern: text.get(id)!.replaceAll('<*>', '<_>'),
        samples: samples.sort((a, b) => a[0] - b[0]),
      }))
      .sort((a, b) => total(b.samples) - total(a.samples)),
  };
}
