/**
 * @module time-range
 * The time range of the console: a relative preset (the last N) or an absolute [from, to). Every statement the
 * console sends carries it as a `range(...)` stage (last wins over one the user typed), and the histogram's bucket
 * width is chosen from its length.
 */

/** A range: relative (the last `secs` seconds, to now) or absolute (ms since the epoch, `to` exclusive). */
export type TimeRange =
  | { readonly kind: 'relative'; readonly secs: number; readonly label: string }
  | { readonly kind: 'absolute'; readonly fromMs: number; readonly toMs: number };

/** The presets offered, shortest first. */
export const PRESETS: readonly { readonly label: string; readonly secs: number }[] = [
  { label: '5m', secs: 300 },
  { label: '15m', secs: 900 },
  { label: '1h', secs: 3600 },
  { label: '3h', secs: 10800 },
  { label: '6h', secs: 21600 },
  { label: '24h', secs: 86400 },
  { label: '7d', secs: 604800 },
];

/** RFC 3339 with milliseconds, in UTC. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** The `range(...)` stage of `range`. */
export function rangeStage(range: TimeRange): string {
  return range.kind === 'relative'
    ? `range(-${range.label}, now)`
    : `range(${rfc3339(range.fromMs)}, ${rfc3339(range.toMs)})`;
}

/** The range as absolute ms at `nowMs`. */
export function resolveRange(range: TimeRange, nowMs: number): { readonly fromMs: number; readonly toMs: number } {
  return range.kind === 'relative' ? { fromMs: nowMs - range.secs * 1000, toMs: nowMs } : range;
}

/** Bucket widths the histogram may use, in seconds, with their DSL duration. */
const WIDTHS: readonly { readonly secs: number; readonly text: string }[] = [
  { secs: 1, text: '1s' },
  { secs: 5, text: '5s' },
  { secs: 10, text: '10s' },
  { secs: 30, text: '30s' },
  { secs: 60, text: '1m' },
  { secs: 300, text: '5m' },
  { secs: 600, text: '10m' },
  { secs: 1800, text: '30m' },
  { secs: 3600, text: '1h' },
  { secs: 10800, text: '3h' },
  { secs: 21600, text: '6h' },
  { secs: 43200, text: '12h' },
  { secs: 86400, text: '1d' },
];

/** At most this many bars: enough to see a shape, few enough to stay one pixel group wide. */
export const MAX_BARS = 90;

/** The smallest width that keeps a range of `spanMs` within {@link MAX_BARS} buckets. */
export function bucketWidth(spanMs: number): { readonly secs: number; readonly text: string } {
  for (const w of WIDTHS) if (spanMs / (w.secs * 1000) <= MAX_BARS) return w;
  return WIDTHS[WIDTHS.length - 1]!;
}

/** Text for a `datetime-local` input (local time, seconds). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 19);
}

/** Ms of a `datetime-local` input's value; `null` when empty or invalid. */
export function fromLocalInput(text: string): number | null {
  if (text === '') return null;
  const ms = new Date(text).getTime();
  return Number.isFinite(ms) ? ms : null;
}
