/**
 * @module time-text
 * Durations (`30s`, `5m`, `1h`, `1d`, `1w`) and RFC 3339 timestamps as exact `bigint` nanoseconds, both ways.
 * Timestamps are proleptic Gregorian, years 0000–9999, any `Z`/`±HH:MM` offset, up to 9 fraction digits; they are
 * printed in UTC with `Z` and the shortest fraction.
 */

/** Duration units and their length in nanoseconds. */
export const DURATION_UNIT_NS: Readonly<Record<'s' | 'm' | 'h' | 'd' | 'w', bigint>> = Object.freeze({
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
  d: 86_400_000_000_000n,
  w: 604_800_000_000_000n,
});

/** Nanoseconds per second. */
export const NS_PER_SECOND = 1_000_000_000n;

/**
 * Canonical text of a non-negative whole-second duration: the largest of `d`, `h`, `m`, `s` that divides it
 * exactly (`60s` → `1m`, `1w` → `7d`; weeks are read but never printed, days read more naturally).
 * @throws Error if `ns` is negative or not a whole number of seconds (the parser never builds such a value).
 */
export function formatDuration(ns: bigint): string {
  if (ns < 0n || ns % NS_PER_SECOND !== 0n) throw new Error(`not a whole-second duration: ${ns}`);
  if (ns === 0n) return '0s';
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const u = DURATION_UNIT_NS[unit];
    if (ns % u === 0n) return `${ns / u}${unit}`;
  }
  return `${ns / NS_PER_SECOND}s`;
}

const TS_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Days since 1970-01-01 of a proleptic Gregorian civil date (Howard Hinnant's algorithm). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d];
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(m) ? 30 : 31;
}

/** Parses an RFC 3339 timestamp to nanoseconds since the epoch, or returns a reason it is invalid. */
export function parseTimestamp(text: string): { ok: true; ns: bigint } | { ok: false; reason: string } {
  const m = TS_RE.exec(text);
  if (!m) return { ok: false, reason: 'expected an RFC 3339 timestamp like 2026-06-01T00:00:00Z' };
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((x) => Number(x)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12) return { ok: false, reason: 'month out of range' };
  if (d < 1 || d > daysInMonth(y, mo)) return { ok: false, reason: 'day out of range' };
  if (h > 23 || mi > 59 || s > 59) return { ok: false, reason: 'time of day out of range' };
  const frac = m[7] ?? '';
  if (frac.length > 9) return { ok: false, reason: 'more than 9 fraction digits (finer than a nanosecond)' };
  let offsetMin = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return { ok: false, reason: 'offset out of range' };
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const secs = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + s - offsetMin * 60);
  return { ok: true, ns: secs * NS_PER_SECOND + BigInt(frac.padEnd(9, '0') || '0') };
}

const p2 = (n: number): string => String(n).padStart(2, '0');

/**
 * RFC 3339 UTC text of `ns` with the shortest fraction (`2026-06-01T00:00:00.5Z`).
 * @throws Error if the year falls outside 0000–9999.
 */
export function formatTimestamp(ns: bigint): string {
  let secs = ns / NS_PER_SECOND;
  let frac = ns % NS_PER_SECOND;
  if (frac < 0n) {
    frac += NS_PER_SECOND;
    secs -= 1n;
  }
  let days = secs / 86400n;
  let sod = secs % 86400n;
  if (sod < 0n) {
    sod += 86400n;
    days -= 1n;
  }
  const [y, mo, d] = civilFromDays(Number(days));
  if (y < 0 || y > 9999) throw new Error(`timestamp year out of range: ${y}`);
  const s = Number(sod);
  const fracText = frac === 0n ? '' : `.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${String(y).padStart(4, '0')}-${p2(mo)}-${p2(d)}T${p2(Math.floor(s / 3600))}:${p2(Math.floor(s / 60) % 60)}:${p2(s % 60)}${fracText}Z`;
}

/** Smallest and largest instants {@link formatTimestamp} can print (0000-01-01 … 9999-12-31T23:59:59.999999999Z). */
export const MIN_TIMESTAMP_NS = BigInt(daysFromCivil(0, 1, 1)) * 86400n * NS_PER_SECOND;
export const MAX_TIMESTAMP_NS = BigInt(daysFromCivil(10000, 1, 1)) * 86400n * NS_PER_SECOND - 1n;
