/**
 * @module loki-params
 * Loki's request parameters as Loki reads them (docs/grafana.md): times as RFC 3339, Unix seconds (with a
 * fraction when there is a `.`), or Unix nanoseconds (more than 10 digits); `step` as a duration (`15s`, `250ms`)
 * or seconds; `limit`, `direction` (`backward`, Loki's default, is newest first). Defaults are Loki's: `end` = now,
 * `start` = `end` − 1 h (or `end` − `since`), `limit` 100, `step` = max(⌊range / 250⌋ s, 1 s).
 */
import { err, ok, type Result } from '@sluice/core';
import { parseLogqlDuration } from '@sluice/query';

/** The parameters of one request (query string and, for POST, the form body); repeated keys keep every value. */
export type LokiParams = URLSearchParams;

const NS_PER_S = 1_000_000_000n;

/** A Loki timestamp parameter in ns, or `fallback` when absent. */
export function parseLokiTime(name: string, value: string | null, fallback: bigint): Result<bigint, string> {
  if (value === null || value === '') return ok(fallback);
  const text = value.trim();
  if (/^-?[0-9]+\.[0-9]*$/.test(text)) {
    const [s, frac = ''] = text.split('.');
    const ms = BigInt((frac + '000').slice(0, 3));
    const secs = BigInt(s!);
    return ok(secs * NS_PER_S + (text.startsWith('-') ? -ms : ms) * 1_000_000n);
  }
  if (/^-?[0-9]{1,19}$/.test(text)) {
    const n = BigInt(text);
    return ok(text.replace('-', '').length <= 10 ? n * NS_PER_S : n);
  }
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.exec(text);
  if (m !== null) {
    const ms = Date.parse(`${m[1]}${m[3]}`);
    if (!Number.isNaN(ms))
      return ok(BigInt(ms) * 1_000_000n + BigInt(((m[2] ?? '.').slice(1) + '000000000').slice(0, 9)));
  }
  return err(`invalid ${name} parameter ${JSON.stringify(value)}: expected RFC 3339, Unix seconds or Unix nanoseconds`);
}

/** A duration parameter (`step`, `since`, `interval`) in ns: a duration such as `15s`, or (fractional) seconds. */
export function parseLokiDuration(name: string, value: string): Result<bigint, string> {
  const text = value.trim();
  if (/^[0-9]+(\.[0-9]+)?$/.test(text)) {
    const ns = BigInt(Math.round(Number(text) * 1e9));
    return ns > 0n ? ok(ns) : err(`${name} must be greater than zero`);
  }
  const d = parseLogqlDuration(text);
  if (d === null)
    return err(`invalid ${name} parameter ${JSON.stringify(value)}: expected a duration such as 15s or seconds`);
  return d > 0n ? ok(d) : err(`${name} must be greater than zero`);
}

/** The time range of a range request: `[start, end)`. */
export interface LokiRange {
  readonly startNs: bigint;
  readonly endNs: bigint;
}

/** `start`/`end`/`since` with Loki's defaults. */
export function parseLokiRange(params: LokiParams, nowNs: bigint): Result<LokiRange, string> {
  const end = parseLokiTime('end', params.get('end'), nowNs);
  if (!end.ok) return end;
  let since = 3_600n * NS_PER_S;
  const sinceText = params.get('since');
  if (sinceText !== null && sinceText !== '') {
    const s = parseLokiDuration('since', sinceText);
    if (!s.ok) return s;
    since = s.value;
  }
  const start = parseLokiTime('start', params.get('start'), end.value - since);
  if (!start.ok) return start;
  if (end.value < start.value) return err('end timestamp must not be before start time');
  return ok({ startNs: start.value, endNs: end.value });
}

/** `step` for a range query; Loki's default when absent. */
export function parseLokiStep(params: LokiParams, range: LokiRange): Result<bigint, string> {
  const text = params.get('step');
  if (text === null || text === '') {
    const secs = (range.endNs - range.startNs) / NS_PER_S / 250n;
    return ok((secs > 1n ? secs : 1n) * NS_PER_S);
  }
  return parseLokiDuration('step', text);
}

/** `limit` (default 100), a positive integer. */
export function parseLokiLimit(params: LokiParams, name = 'limit', fallback = 100): Result<number, string> {
  const text = params.get(name);
  if (text === null || text === '') return ok(fallback);
  if (!/^[0-9]{1,9}$/.test(text.trim()) || Number(text) <= 0) {
    return err(`invalid ${name} parameter ${JSON.stringify(text)}: expected a positive integer`);
  }
  return ok(Number(text));
}

/** `direction`: `backward` (newest first, the default) or `forward`. */
export function parseLokiDirection(params: LokiParams): Result<'backward' | 'forward', string> {
  const text = (params.get('direction') ?? '').toLowerCase();
  if (text === '' || text === 'backward') return ok('backward');
  if (text === 'forward') return ok('forward');
  return err(`invalid direction ${JSON.stringify(params.get('direction'))}: expected forward or backward`);
}
