/**
 * @module query-corpus
 * A deterministic corpus for query tests: several tenants, services, printf-style templates with params,
 * every severity band (and 0), three hours, typed attributes and trace ids. Exported as OTLP protobuf batches
 * through the real receiver.
 */
import type { KeyValue, LogRecord, ResourceInfo, ScopeInfo } from '@sluice/core';
import { encodeLogsProtobuf } from '@sluice/otlp';
import { post } from './http-client.js';

/** 2026-03-01T10:00:00Z in ns. */
export const CORPUS_BASE_NS = 1_772_359_200_000_000_000n;
/** The corpus spans [base, base + 3h). */
export const CORPUS_END_NS = CORPUS_BASE_NS + 3n * 3_600_000_000_000n;
export const SERVICES = ['checkout', 'payments', 'search'] as const;
const NAMES = ['alice', 'bob', 'carol', 'dave'];
const SEVERITIES = [0, 1, 5, 9, 9, 9, 10, 13, 14, 17, 18, 21];

function body(i: number): string {
  switch (i % 5) {
    case 0:
      return `GET /api/v1/items/${i} returned ${200 + (i % 3) * 100} in ${i % 97}ms`;
    case 1:
      return `connection to db-${i % 6} timed out after ${i % 4} retries`;
    case 2:
      return `user ${NAMES[i % 4]} logged in from 10.0.${i % 7}.${i % 11}`;
    case 3:
      return `payment ${1000 + i} accepted amount ${(i % 50) + 0.5} EUR`;
    default:
      return `cache miss for key session:${i} on shard ${i % 5}`;
  }
}

/**
 * {@link corpusRecords} with bodies for byte-size queries (`body_bytes`, `bytes_over_time`): of every eight, two
 * empty, one absent, three with 2-, 3- and 4-byte UTF-8 characters, two as they were.
 */
export function utf8CorpusRecords(tenantIndex: number, n: number): LogRecord[] {
  return corpusRecords(tenantIndex, n).map((r, i) => {
    const text = r.body?.kind === 'string' ? r.body.value : '';
    const k = i % 8;
    if (k === 7) return { ...r, body: null };
    const value =
      k === 0 || k === 4
        ? ''
        : k === 1
          ? `héllo wörld 日本語 🚀 ${text}`
          : k === 2
            ? '😀'.repeat(1 + (i % 9))
            : k === 3
              ? `ünïcödé ${text}`
              : text;
    return { ...r, body: { kind: 'string', value } };
  });
}

/** The records of one tenant: `n` of them, `tenantIndex` keeps their times disjoint from other tenants'. */
export function corpusRecords(tenantIndex: number, n: number): LogRecord[] {
  const scope: ScopeInfo = {
    name: 'corpus',
    version: '1.0.0',
    attributes: [],
    droppedAttributesCount: 0,
    schemaUrl: '',
  };
  const resources: ResourceInfo[] = SERVICES.map((service) => ({
    attributes: [
      { key: 'service.name', value: { kind: 'string', value: service } },
      { key: 'deployment.environment', value: { kind: 'string', value: service === 'search' ? 'dev' : 'prod' } },
    ],
    droppedAttributesCount: 0,
    schemaUrl: '',
  }));
  const out: LogRecord[] = [];
  const step = (3n * 3_600_000_000_000n) / BigInt(n);
  for (let i = 0; i < n; i++) {
    const attributes: KeyValue[] = [
      { key: 'http.method', value: { kind: 'string', value: i % 3 === 0 ? 'POST' : 'GET' } },
      { key: 'latency_ms', value: { kind: 'int', value: BigInt((i * 37) % 500) } },
      { key: 'ratio', value: { kind: 'double', value: (i % 10) / 4 } },
      { key: 'cached', value: { kind: 'bool', value: i % 2 === 0 } },
    ];
    const traceId = new Uint8Array(16);
    new DataView(traceId.buffer).setUint32(0, tenantIndex + 1);
    new DataView(traceId.buffer).setUint32(12, i + 1);
    const t = CORPUS_BASE_NS + BigInt(i) * step + BigInt(tenantIndex) * 1000n + 7n;
    out.push({
      timeUnixNano: t,
      observedTimeUnixNano: t + 5n,
      severityNumber: SEVERITIES[i % SEVERITIES.length]!,
      severityText: '',
      body: { kind: 'string', value: body(i) },
      attributes,
      droppedAttributesCount: 0,
      flags: 0,
      traceId,
      spanId: new Uint8Array(0),
      eventName: i % 25 === 0 ? 'audit.tick' : '',
      resource: resources[i % SERVICES.length]!,
      scope,
    });
  }
  return out;
}

/** Exports `records` for `tenant` in batches of `batch` through OTLP/HTTP protobuf. */
export async function exportRecords(
  otlpHttpUrl: string,
  tenant: string,
  records: readonly LogRecord[],
  batch = 200,
): Promise<void> {
  for (let i = 0; i < records.length; i += batch) {
    const res = await post(`${otlpHttpUrl}/v1/logs`, encodeLogsProtobuf(records.slice(i, i + batch)), {
      'content-type': 'application/x-protobuf',
      'x-sluice-tenant': tenant,
    });
    if (res.status !== 200) throw new Error(`export failed: ${res.status} ${res.body.toString('utf8')}`);
  }
}
