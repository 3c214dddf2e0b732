/**
 * @module testing/corpus
 * A deterministic test corpus: StoredLogRows across tenants, services, hours, templates and severities, written
 * as real data files (encodeLogsParquet) under real keys into a store, plus audit files. Tests compute expected
 * answers from the same rows with naive JS (the oracle).
 */
import type { AnyValue, KeyValue, LogRecord, TemplateAuditEvent } from '@sluice/core';
import type { ObjectStore, StoredLogRow } from '@sluice/storage';
import { auditFileKey, dataFileKey, encodeAuditParquet, encodeLogsParquet, uuidv7 } from '@sluice/storage';

/** 2026-06-01T00:00:00Z in ns. */
export const T0 = 1_780_272_000_000_000_000n;
/** One hour in ns. */
export const H = 3_600_000_000_000n;
/** A template id above 2^53 (exactness check). */
export const BIG_TEMPLATE = 9_007_199_254_740_993n + 1_000_000_000n;
/** Template ids used by the corpus. */
export const TEMPLATES: readonly bigint[] = [1n, 2n, 3n, 4n, 5n, 6n, 7n, BIG_TEMPLATE];
/** Severities used by the corpus (0, band edges, out-of-band values). */
export const SEVERITIES: readonly number[] = [0, 1, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 30];
/** Services. */
export const SERVICES: readonly string[] = ['checkout', 'api', 'billing'];

/** A small deterministic PRNG (mulberry32) for corpora and random queries. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  'request',
  'completed',
  'timeout',
  'connection',
  'cache',
  'miss',
  'retry',
  'upstream',
  'ok',
  'db',
  'Ünïcödé',
];

/** Options of {@link makeRows}. */
export interface RowOptions {
  readonly tenant: string;
  readonly count: number;
  readonly startNs: bigint;
  readonly spanNs: bigint;
  readonly seed: number;
}

/** Rows for one tenant, times spread evenly over `[startNs, startNs + spanNs)`. */
export function makeRows(o: RowOptions): StoredLogRow[] {
  const rnd = prng(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const rows: StoredLogRow[] = [];
  const resources = SERVICES.map((s) => ({
    attributes: [
      { key: 'service.name', value: { kind: 'string', value: s } },
      { key: 'k8s.namespace.name', value: { kind: 'string', value: s === 'billing' ? 'dev' : 'prod' } },
    ] as KeyValue[],
    droppedAttributesCount: 0,
    schemaUrl: s === 'api' ? 'https://opentelemetry.io/schemas/1.26.0' : '',
  }));
  for (let i = 0; i < o.count; i++) {
    const t = o.startNs + (o.spanNs * BigInt(i)) / BigInt(o.count);
    const tpl = pick(TEMPLATES);
    const sev = pick(SEVERITIES);
    const svc = Math.floor(rnd() * resources.length);
    const words = Array.from({ length: 3 + Math.floor(rnd() * 5) }, () => pick(WORDS));
    const p0 = String(Math.floor(rnd() * 5));
    const bodyRoll = rnd();
    let body: AnyValue | null;
    if (bodyRoll < 0.8) body = { kind: 'string', value: `${words.join(' ')} id=${p0}` };
    else if (bodyRoll < 0.9)
      body = {
        kind: 'kvlist',
        values: [
          { key: 'msg', value: { kind: 'string', value: words.join(' ') } },
          { key: 'n', value: { kind: 'int', value: BigInt(i) } },
        ],
      };
    else body = null;
    const attributes: KeyValue[] = [
      { key: 'http.method', value: { kind: 'string', value: rnd() < 0.6 ? 'GET' : 'POST' } },
      { key: 'http.status_code', value: { kind: 'int', value: BigInt(rnd() < 0.8 ? 200 : 503) } },
      { key: 'cost', value: { kind: 'double', value: Math.round(rnd() * 1000) / 100 } },
    ];
    if (rnd() < 0.3)
      attributes.push({ key: 'http.route', value: { kind: 'string', value: pick(['/cart', '/pay', '/home']) } });
    if (rnd() < 0.2) attributes.push({ key: 'cached', value: { kind: 'bool', value: rnd() < 0.5 } });
    const traced = rnd() < 0.7;
    const record: LogRecord = {
      timeUnixNano: t,
      observedTimeUnixNano: rnd() < 0.5 ? t + 1000n : 0n,
      severityNumber: sev,
      severityText: sev === 0 ? '' : `S${sev}`,
      body,
      attributes,
      droppedAttributesCount: i % 17 === 0 ? 2 : 0,
      flags: traced ? 1 : 0,
      traceId: traced ? Uint8Array.from({ length: 16 }, () => Math.floor(rnd() * 256)) : new Uint8Array(0),
      spanId: traced ? Uint8Array.from({ length: 8 }, () => Math.floor(rnd() * 256)) : new Uint8Array(0),
      eventName: rnd() < 0.1 ? 'app.login' : '',
      resource: resources[svc] as LogRecord['resource'],
      scope: {
        name: rnd() < 0.5 ? 'app.http' : 'app.db',
        version: '1.0',
        attributes: [],
        droppedAttributesCount: 0,
        schemaUrl: '',
      },
    };
    const nParams = tpl === 3n ? 0 : 1 + Math.floor(rnd() * 2);
    rows.push({
      tenantId: o.tenant,
      record,
      mined: {
        templateId: tpl,
        templateVersion: 1 + Math.floor(rnd() * 3),
        params: Array.from({ length: nParams }, (_, k) => ({
          typeTag: 6 as const,
          value: k === 0 ? p0 : `x${Math.floor(rnd() * 3)}`,
        })),
        confidence: Math.round(rnd() * 10) / 10,
        lossy: rnd() < 0.2,
      },
    });
  }
  return rows;
}

/** Effective time of a stored row. */
export function effective(r: StoredLogRow): bigint {
  return r.record.timeUnixNano !== 0n ? r.record.timeUnixNano : r.record.observedTimeUnixNano;
}

/** Writes rows as data files: grouped by hour, `filesPerHour` files, each sorted by template id. */
export async function writeDataFiles(
  store: ObjectStore,
  rows: readonly StoredLogRow[],
  opts: { filesPerHour: number; rowGroupRows: number },
): Promise<string[]> {
  const byHour = new Map<bigint, StoredLogRow[]>();
  for (const r of rows) {
    const h = effective(r) / H;
    const list = byHour.get(h) ?? [];
    list.push(r);
    byHour.set(h, list);
  }
  const keys: string[] = [];
  for (const [h, list] of [...byHour].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    for (let f = 0; f < opts.filesPerHour; f++) {
      const part = list.filter((_, i) => i % opts.filesPerHour === f);
      if (part.length === 0) continue;
      part.sort((a, b) =>
        a.mined.templateId < b.mined.templateId ? -1 : a.mined.templateId > b.mined.templateId ? 1 : 0,
      );
      const key = dataFileKey(part[0]?.tenantId ?? '', h * H, uuidv7());
      await store.put(key, await encodeLogsParquet(part, { rowGroupRows: opts.rowGroupRows }));
      keys.push(key);
    }
  }
  return keys;
}

/** Writes audit events as one audit file per tenant and day. */
export async function writeAuditFiles(store: ObjectStore, events: readonly TemplateAuditEvent[]): Promise<void> {
  const byDay = new Map<string, TemplateAuditEvent[]>();
  for (const e of events) {
    const d = `${e.tenantId}\u0000${e.timestampUnixNano / (24n * H)}`;
    byDay.set(d, [...(byDay.get(d) ?? []), e]);
  }
  for (const list of byDay.values()) {
    const first = list[0];
    if (first)
      await store.put(auditFileKey(first.tenantId, first.timestampUnixNano, uuidv7()), await encodeAuditParquet(list));
  }
}
