/**
 * @module loki-streams
 * The `streams` result of a log query (docs/grafana.md): records grouped by label set, in the order the query
 * returned them (newest first for `backward`). Without `X-Loki-Response-Encoding-Flags: categorize-labels`,
 * structured metadata and parsed labels are merged into the stream's labels, as Loki does (a parsed label that
 * collides with another gets the `_extracted` suffix); with it, the stream holds the stream labels only and each
 * entry carries `{structuredMetadata, parsed}` as its third element.
 */
import { lokiEntryOf, parsedLabels } from './loki-record.js';
import type { JsonObject } from './loki-run.js';

/** One stream of the result. */
export interface LokiStream {
  readonly stream: Record<string, string>;
  readonly values: (readonly [string, string] | readonly [string, string, Record<string, Record<string, string>>])[];
}

function sortedKey(labels: Record<string, string>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}

/** Groups result rows into Loki streams. */
export function streamsOf(
  rows: readonly JsonObject[],
  options: { readonly categorize: boolean; readonly parsers: readonly ('json' | 'logfmt')[] },
): LokiStream[] {
  const streams = new Map<string, LokiStream>();
  for (const row of rows) {
    const e = lokiEntryOf(row);
    const parsed = options.parsers.length > 0 ? parsedLabels(e.line, options.parsers) : {};
    let labels: Record<string, string>;
    let extra: Record<string, Record<string, string>> | null = null;
    if (options.categorize) {
      labels = { ...e.stream };
      extra = {};
      if (Object.keys(e.metadata).length > 0) extra['structuredMetadata'] = { ...e.metadata };
      if (Object.keys(parsed).length > 0) extra['parsed'] = parsed;
    } else {
      labels = { ...e.stream };
      for (const [k, v] of Object.entries(e.metadata)) if (labels[k] === undefined) labels[k] = v;
      for (const [k, v] of Object.entries(parsed)) labels[labels[k] === undefined ? k : `${k}_extracted`] = v;
    }
    const key = sortedKey(labels);
    let s = streams.get(key);
    if (s === undefined) {
      s = { stream: labels, values: [] };
      streams.set(key, s);
    }
    s.values.push(extra === null ? [e.ns.toString(), e.line] : [e.ns.toString(), e.line, extra]);
  }
  return [...streams.values()];
}
