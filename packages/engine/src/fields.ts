/**
 * @module fields
 * Where each DSL path lives in a data file (packages/query/README.md, docs/design/storage-format.md): built-in fields map to one
 * column; `attr.k` / `resource.k` read the canonical-JSON attribute columns, except `resource.service.name`, which
 * has its own promoted column.
 */
import type { FieldName, Path } from '@sluice/query';
import { LOG_COLUMNS } from '@sluice/storage';

const C = LOG_COLUMNS;

/** The column holding a built-in field. */
export const FIELD_COLUMN: Readonly<Record<FieldName, string>> = Object.freeze({
  severity: C.severityNumber,
  body: C.body,
  ts: C.timeUnixNano,
  observed_ts: C.observedTimeUnixNano,
  trace_id: C.traceId,
  span_id: C.spanId,
  scope: C.scopeName,
  event_name: C.eventName,
  flags: C.flags,
  service: C.serviceName,
  template_id: C.templateId,
  confidence: C.confidence,
  lossy: C.lossyFlag,
  // Derived: the size of the body column's UTF-8 bytes (aggregations only; body-bytes.ts).
  body_bytes: C.body,
});

/** True for `resource.service.name`, which reads the promoted column. */
export function isPromotedService(p: Path): boolean {
  return p.kind === 'attr' && p.scope === 'resource' && p.key === 'service.name';
}

/** The column a path reads. */
export function pathColumn(p: Path): string {
  if (p.kind === 'field') return FIELD_COLUMN[p.name];
  if (isPromotedService(p)) return C.serviceName;
  return p.scope === 'attr' ? C.attributes : C.resourceAttributes;
}

/** A path's short name (`service`, `attr.http.route`). */
export function pathName(p: Path): string {
  return p.kind === 'field' ? p.name : `${p.scope}.${p.key}`;
}
