/**
 * @module logql-labels
 * How Loki label names map onto Sluice's record model (docs/grafana.md, "Labels"), both ways:
 * - a resource attribute is a stream label, its key with every character outside `[A-Za-z0-9_]` replaced by `_`
 *   (`service.name` → `service_name`, `k8s.pod.name` → `k8s_pod_name`), as Loki names OTLP resource attributes;
 * - a log attribute is structured metadata under the same renaming;
 * - the severity is `level` and `detected_level` (`trace`, `debug`, `info`, `warn`, `error`, `fatal`, or
 *   `unknown` for severity 0).
 * The renaming loses the difference between `.` and `_`, so a label name read back to keys gives candidates: the
 * name as written and the name with every `_` as `.`, plus the semantic-convention keys below whose own name has
 * an `_`. A matcher tests every candidate.
 */
import { SEVERITY_NAMES, type Path, type SeverityName } from './ir.js';

/** The severity labels. */
export const LEVEL_LABELS: ReadonlySet<string> = new Set(['level', 'detected_level']);

/** The value of `level`/`detected_level` for each severity band, and `unknown` for severity 0. */
export type LokiLevel = SeverityName | 'unknown';

/** Every level value, in severity order. */
export const LOKI_LEVELS: readonly LokiLevel[] = Object.freeze(['unknown', ...SEVERITY_NAMES]);

/** The level of a severity number (OTLP bands of four; 0 and anything above 24 read as `unknown`). */
export function levelOfSeverity(severity: number): LokiLevel {
  if (severity < 1 || severity > 24) return 'unknown';
  return SEVERITY_NAMES[Math.floor((severity - 1) / 4)]!;
}

/** A Loki label name for an attribute key. */
export function labelNameOfKey(key: string): string {
  const name = key.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

// Semantic-convention resource and log attribute keys that themselves contain `_`, so that `_` → `.` alone would
// not find them.
const UNDERSCORE_KEYS = [
  'cloud.availability_zone',
  'process.command_line',
  'process.command_args',
  'process.parent_pid',
  'process.executable_path',
  'host.image_id',
  'k8s.replicaset.uid',
  'exception.stacktrace',
  'exception.type',
  'code.function_name',
  'code.file_path',
  'code.line_number',
  'http.request.method_original',
];
const BY_LABEL = new Map(UNDERSCORE_KEYS.map((k) => [labelNameOfKey(k), k]));

/** The attribute keys a label name may stand for, most likely first, without duplicates. */
export function candidateKeys(label: string): readonly string[] {
  const out = [label.replace(/_/g, '.'), label];
  const known = BY_LABEL.get(label);
  if (known !== undefined) out.unshift(known);
  return [...new Set(out)];
}

/** The key a label is grouped by (grouping needs one path): the first candidate. */
export function groupKeyOfLabel(label: string): string {
  return candidateKeys(label)[0]!;
}

/** The paths a stream-selector label reads: `service_name` is the service column, others resource attributes. */
export function streamLabelPaths(label: string): readonly Path[] {
  if (label === 'service_name') return [{ kind: 'field', name: 'service' }];
  return candidateKeys(label).map((key) => ({ kind: 'attr', scope: 'resource', key }));
}

/** The paths a label filter reads: structured metadata (log attributes) first, then stream labels. */
export function labelFilterPaths(label: string): readonly Path[] {
  if (label === 'service_name') return streamLabelPaths(label);
  return [
    ...candidateKeys(label).map((key): Path => ({ kind: 'attr', scope: 'attr', key })),
    ...streamLabelPaths(label),
  ];
}
