/**
 * @module keys
 * Hive-style object keys (docs/design/storage-format.md):
 * `data/tenant_id=<pct-enc>/year=YYYY/month=MM/day=DD/hour=HH/<uuidv7>.parquet` and
 * `audit/tenant_id=<pct-enc>/year=YYYY/month=MM/day=DD/<uuidv7>.parquet`. Partitions are UTC and zero-padded;
 * time 0 lands in `1970/01/01/00`.
 */
import { encodeTenantForKey } from '@sluice/core';
import { UUIDV7_RE } from './uuidv7.js';

const NS_PER_MS = 1_000_000n;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** UTC calendar parts of a time given in ms. */
function parts(ms: number): { year: string; month: string; day: string; hour: string } {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) throw new RangeError(`time out of range: ${ms} ms`);
  return {
    year: pad(d.getUTCFullYear(), 4),
    month: pad(d.getUTCMonth() + 1, 2),
    day: pad(d.getUTCDate(), 2),
    hour: pad(d.getUTCHours(), 2),
  };
}

/** Floor division of ns to ms (u64 input; values past JS Date's range throw RangeError). */
function nsToMs(ns: bigint): number {
  if (ns < 0n) throw new RangeError(`negative time: ${ns} ns`);
  return Number(ns / NS_PER_MS);
}

/** `data/tenant_id=<enc>/` — everything one tenant has. */
export function tenantDataPrefix(tenant: string): string {
  return `data/tenant_id=${encodeTenantForKey(tenant)}/`;
}

/** `data/tenant_id=<enc>/year=YYYY/month=MM/day=DD/hour=HH/` for the hour containing `hourStartMs` (UTC). */
export function dataPartitionPrefix(tenant: string, hourStartMs: number): string {
  const p = parts(hourStartMs);
  return `${tenantDataPrefix(tenant)}year=${p.year}/month=${p.month}/day=${p.day}/hour=${p.hour}/`;
}

/** Key of a data file whose rows' effective time (ns) falls in the partition's hour. */
export function dataFileKey(tenant: string, effectiveTimeNs: bigint, uuid: string): string {
  return `${dataPartitionPrefix(tenant, nsToMs(effectiveTimeNs))}${uuid}.parquet`;
}

/** Key of an audit file: `audit/tenant_id=<enc>/year=YYYY/month=MM/day=DD/<uuid>.parquet`. */
export function auditFileKey(tenant: string, timeNs: bigint, uuid: string): string {
  const p = parts(nsToMs(timeNs));
  return `audit/tenant_id=${encodeTenantForKey(tenant)}/year=${p.year}/month=${p.month}/day=${p.day}/${uuid}.parquet`;
}

/** The parts of a data-file key. */
export interface DataKeyParts {
  /** Decoded tenant. */
  readonly tenant: string;
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  /** File name, e.g. `<uuidv7>.parquet`. */
  readonly file: string;
  /** Start of the partition's hour in ms since the epoch (UTC). */
  readonly hourStartMs: number;
}

const DATA_KEY_RE =
  /^data\/tenant_id=((?:[A-Za-z0-9\-_.~]|%[0-9A-F]{2})+)\/year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\/([^/]+\.parquet)$/;

/** Decodes `%XX` (uppercase) sequences of a tenant key segment; `null` if the bytes are not valid UTF-8. */
export function decodeTenantFromKey(enc: string): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < enc.length; i++) {
    const c = enc.charCodeAt(i);
    if (c === 0x25) {
      bytes.push(parseInt(enc.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(c);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(new Uint8Array(bytes));
  } catch {
    return null;
  }
}

/**
 * Parses a data-file key, or returns `null` if it is not one (wrong shape, non-canonical tenant encoding,
 * impossible date, a name not ending in `.parquet`). `file` is not required to be a UUIDv7 (compaction outputs
 * may use other names); use {@link isUuidV7FileName} to check.
 */
export function parseDataKey(key: string): DataKeyParts | null {
  const m = DATA_KEY_RE.exec(key);
  if (m === null) return null;
  const [, enc, y, mo, d, h, file] = m;
  if (
    enc === undefined ||
    y === undefined ||
    mo === undefined ||
    d === undefined ||
    h === undefined ||
    file === undefined
  )
    return null;
  const tenant = decodeTenantFromKey(enc);
  if (tenant === null || encodeTenantForKey(tenant) !== enc) return null;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const hourStartMs = Date.UTC(year, month - 1, day, hour);
  const check = new Date(hourStartMs);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23)
    return null;
  return { tenant, year, month, day, hour, file, hourStartMs };
}

/** True for `<uuidv7>.parquet`. */
export function isUuidV7FileName(file: string): boolean {
  return file.endsWith('.parquet') && UUIDV7_RE.test(file.slice(0, -'.parquet'.length));
}
