/**
 * @module quarantine
 * Where corrupt objects go (docs/design/storage-format.md, "Quarantine"): `quarantine/<original key>`, the object's
 * bytes exactly as found, next to `quarantine/<original key>.quarantine.json`, a one-line record of what, why and
 * when. No reader lists `quarantine/` (queries list `data/tenant_id=…/` and `audit/tenant_id=…/`, the compactor
 * `data/`), so a quarantined object is out of every read path while its bytes stay for an operator.
 *
 * The record is also how later sweeps recognise a quarantined data file whose original is still in the partition
 * (it is left there for the grace period, for readers of the previous manifest): such a file is neither adopted
 * as late data nor resurrected by a manifest rebuild, and it is deleted once the grace since its quarantine has
 * passed.
 */
import { uuidv7 } from '@sluice/storage';
import type { CorruptReason, ObjectStore } from '@sluice/storage';

/** The root every quarantined object is kept under. */
export const QUARANTINE_ROOT = 'quarantine/';

/** Suffix of the record next to a quarantined object. */
export const QUARANTINE_RECORD_SUFFIX = '.quarantine.json';

const NS_PER_MS = 1_000_000n;

/** `quarantine/<key>`: the same key under the quarantine root (valid wherever `key` is). */
export function quarantineKeyOf(key: string): string {
  return `${QUARANTINE_ROOT}${key}`;
}

/** What the record next to a quarantined object says. */
export interface QuarantineRecord {
  /** The original key. */
  readonly key: string;
  readonly reason: CorruptReason;
  readonly quarantineKey: string;
  /** Size of the quarantined bytes. */
  readonly bytes: number;
  readonly timestampUnixNano: bigint;
  readonly partition: string;
  readonly detail: string;
}

/** Encodes a record as one JSON line. */
export function encodeQuarantineRecord(r: QuarantineRecord): Uint8Array {
  const line = JSON.stringify({
    key: r.key,
    reason: r.reason,
    quarantine_key: r.quarantineKey,
    bytes: r.bytes,
    timestamp_unix_nano: r.timestampUnixNano.toString(),
    partition: r.partition,
    detail: r.detail,
  });
  return new TextEncoder().encode(`${line}\n`);
}

/** The original key, size and time of a record, or `null` when it is not one (records are only ever advisory). */
export function parseQuarantineRecord(bytes: Uint8Array): { key: string; bytes: number; atMs: number } | null {
  try {
    const v: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof v !== 'object' || v === null) return null;
    const o = v as Record<string, unknown>;
    const ts = o['timestamp_unix_nano'];
    if (typeof o['key'] !== 'string' || typeof o['bytes'] !== 'number' || typeof ts !== 'string' || !/^\d+$/.test(ts))
      return null;
    return { key: o['key'], bytes: o['bytes'], atMs: Number(BigInt(ts) / NS_PER_MS) };
  } catch {
    return null;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

/**
 * Copies `bytes` (the object at `key`, as read) to `quarantine/<key>` and writes its record. The copy is created
 * with `ifNoneMatch: '*'` so an earlier quarantine is never overwritten: when that key already holds the same bytes
 * (a sweep redoing an interrupted quarantine) it is reused; when it holds other bytes, the copy goes to
 * `quarantine/<key>.<uuidv7>`. Returns the key the bytes are under. The caller removes `key` from the live set
 * afterwards, so a crash in between leaves a copy too many, never an object lost.
 */
export async function moveToQuarantine(
  store: ObjectStore,
  key: string,
  bytes: Uint8Array,
  what: { readonly reason: CorruptReason; readonly detail: string; readonly partition: string; readonly nowMs: number },
): Promise<string> {
  let target = quarantineKeyOf(key);
  const created = await store.putConditional(target, bytes, { ifNoneMatch: '*' });
  if (created.status === 'conflict') {
    const existing = await store.get(target);
    if (existing === null) await store.put(target, bytes);
    else if (!sameBytes(existing, bytes)) {
      target = `${target}.${uuidv7(what.nowMs)}`;
      await store.put(target, bytes);
    }
  }
  await store.put(
    `${target}${QUARANTINE_RECORD_SUFFIX}`,
    encodeQuarantineRecord({
      key,
      reason: what.reason,
      quarantineKey: target,
      bytes: bytes.byteLength,
      timestampUnixNano: BigInt(Math.floor(what.nowMs)) * NS_PER_MS,
      partition: what.partition,
      detail: what.detail,
    }),
  );
  return target;
}

/**
 * The data files of partition `prefix` that have been quarantined, by name: their size when quarantined and the
 * time of the (latest) quarantine. One listing of `quarantine/<prefix>` plus one GET per record there.
 */
export async function quarantinedFiles(
  store: ObjectStore,
  prefix: string,
  signal?: AbortSignal,
): Promise<Map<string, { readonly bytes: number; readonly atMs: number }>> {
  const out = new Map<string, { bytes: number; atMs: number }>();
  const root = quarantineKeyOf(prefix);
  for await (const e of store.list({ prefix: root, ...(signal !== undefined ? { signal } : {}) })) {
    if (e.kind !== 'object' || !e.key.endsWith(QUARANTINE_RECORD_SUFFIX)) continue;
    const raw = await store.get(e.key);
    const r = raw === null ? null : parseQuarantineRecord(raw);
    if (r === null || !r.key.startsWith(prefix)) continue;
    const name = r.key.slice(prefix.length);
    if (name.includes('/') || !name.endsWith('.parquet')) continue;
    const seen = out.get(name);
    if (seen === undefined || seen.atMs < r.atMs) out.set(name, { bytes: r.bytes, atMs: r.atMs });
  }
  return out;
}
