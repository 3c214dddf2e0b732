/**
 * @module testing/sample-rows
 * Deterministic, realistic log rows for large tests and benchmarks: 200 templates, ~100-byte bodies, 3–5
 * attributes, 5 services sharing resource/scope objects, trace context on most rows, increasing ns times.
 */
import type { KeyValue, LogRecord, MinedFields, ResourceInfo, ScopeInfo } from '@sluice/core';
import type { StoredLogRow } from '../log-parquet-writer.js';

/** Small deterministic PRNG (mulberry32). */
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
  'user',
  'failed',
  'timeout',
  'connection',
  'cache',
  'miss',
  'retry',
  'upstream',
  'ok',
  'db',
];

/** `count` rows for `tenant`, times starting at `startNs` and increasing. */
export function sampleRows(
  count: number,
  options?: { seed?: number; startNs?: bigint; tenant?: string },
): StoredLogRow[] {
  const rnd = prng(options?.seed ?? 1);
  const tenant = options?.tenant ?? 'acme';
  let t = options?.startNs ?? 1_764_547_200_000_000_000n;
  const resources: ResourceInfo[] = Array.from({ length: 5 }, (_, i) => ({
    attributes: [
      { key: 'service.name', value: { kind: 'string', value: `svc-${i}` } },
      { key: 'host.name', value: { kind: 'string', value: `host-${i}.example.internal` } },
      {
        key: 'k8s.pod.uid',
        value: { kind: 'string', value: `0f8e${i}c2a-1b2c-4d5e-8f90-${String(i).padStart(12, '0')}` },
      },
    ],
    droppedAttributesCount: 0,
    schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
  }));
  const scope: ScopeInfo = {
    name: 'app.logger',
    version: '1.2.3',
    attributes: [],
    droppedAttributesCount: 0,
    schemaUrl: '',
  };
  const templates = Array.from({ length: 200 }, (_, i) => {
    const n = 6 + (i % 7);
    return Array.from({ length: n }, (_, j) => (j % 3 === 2 ? '<*>' : WORDS[(i * 7 + j * 3) % WORDS.length]!)).join(
      ' ',
    );
  });
  const rows: StoredLogRow[] = new Array<StoredLogRow>(count);
  for (let i = 0; i < count; i++) {
    t += BigInt(1 + Math.floor(rnd() * 20_000));
    const tpl = Math.floor(rnd() * 200);
    const params = [String(Math.floor(rnd() * 1e6)), `10.0.${Math.floor(rnd() * 255)}.${Math.floor(rnd() * 255)}`];
    let p = 0;
    const body = templates[tpl]!.replace(/<\*>/g, () => params[p++ % 2]!) + ` trace=${(i * 2654435761) >>> 0}`;
    const attributes: KeyValue[] = [
      { key: 'http.method', value: { kind: 'string', value: rnd() < 0.7 ? 'GET' : 'POST' } },
      { key: 'http.status_code', value: { kind: 'int', value: BigInt(rnd() < 0.9 ? 200 : 503) } },
      { key: 'duration_ms', value: { kind: 'double', value: Math.round(rnd() * 100_000) / 100 } },
    ];
    if (rnd() < 0.3)
      attributes.push({ key: 'user.id', value: { kind: 'string', value: `u-${Math.floor(rnd() * 10_000)}` } });
    const traced = rnd() < 0.8;
    const traceId = traced ? Uint8Array.from({ length: 16 }, () => Math.floor(rnd() * 256)) : new Uint8Array(0);
    const spanId = traced ? Uint8Array.from({ length: 8 }, () => Math.floor(rnd() * 256)) : new Uint8Array(0);
    const severity = rnd() < 0.9 ? 9 : 17;
    const record: LogRecord = {
      timeUnixNano: t,
      observedTimeUnixNano: t + 1_000_000n,
      severityNumber: severity,
      severityText: severity === 9 ? 'INFO' : 'ERROR',
      body: { kind: 'string', value: body },
      attributes,
      droppedAttributesCount: 0,
      flags: traced ? 1 : 0,
      traceId,
      spanId,
      eventName: '',
      resource: resources[tpl % 5]!,
      scope,
    };
    const mined: MinedFields = {
      templateId: BigInt(1000 + tpl),
      templateVersion: 1,
      params: [
        { typeTag: 2, value: params[0]! },
        { typeTag: 0, value: params[1]! },
      ],
      confidence: 1,
      lossy: false,
    };
    rows[i] = { tenantId: tenant, record, mined };
  }
  return rows;
}
