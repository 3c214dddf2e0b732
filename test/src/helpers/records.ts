/**
 * @module records
 * Deterministic synthetic log records for tests and benchmarks (core model, encodable with @sluice/otlp).
 */
import type { KeyValue, LogRecord, ResourceInfo, ScopeInfo } from '@sluice/core';

const TEMPLATES = [
  (i: number) => `user u${i % 97} logged in from 10.0.${i % 250}.${(i * 7) % 250} after ${i % 1000} ms`,
  (i: number) => `GET /api/v1/items/${i} returned ${200 + (i % 5)} in ${i % 300}ms`,
  (i: number) => `connection to db-${i % 8} timed out after ${i % 5} retries`,
  (i: number) => `cache miss for key session:${(i * 2654435761) % 100000} shard ${i % 16}`,
  (i: number) => `payment ${i} for order ${i * 3} accepted amount ${(i % 10000) / 100} EUR`,
];

/** A resource with `service.name` plus a few attributes. */
export function testResource(service: string): ResourceInfo {
  return {
    attributes: [
      { key: 'service.name', value: { kind: 'string', value: service } },
      { key: 'host.name', value: { kind: 'string', value: 'host-1' } },
      { key: 'process.pid', value: { kind: 'int', value: 4242n } },
    ],
    droppedAttributesCount: 0,
    schemaUrl: 'https://opentelemetry.io/schemas/1.30.0',
  };
}

/** A scope. */
export function testScope(name = 'test-scope'): ScopeInfo {
  return { name, version: '1.2.3', attributes: [], droppedAttributesCount: 0, schemaUrl: '' };
}

/** `n` records starting at index `start`, ns timestamps from `baseNs` (1 ms apart), sharing one resource/scope. */
export function makeRecords(
  n: number,
  options: { start?: number; baseNs?: bigint; service?: string; tag?: string } = {},
): LogRecord[] {
  const start = options.start ?? 0;
  const baseNs = options.baseNs ?? 1_767_225_600_000_000_000n; // 2026-01-01T00:00:00Z
  const resource = testResource(options.service ?? 'checkout');
  const scope = testScope();
  const out: LogRecord[] = [];
  for (let k = 0; k < n; k++) {
    const i = start + k;
    const attributes: KeyValue[] = [
      { key: 'seq', value: { kind: 'int', value: BigInt(i) } },
      { key: 'http.method', value: { kind: 'string', value: i % 2 ? 'GET' : 'POST' } },
      { key: 'ok', value: { kind: 'bool', value: i % 3 !== 0 } },
    ];
    if (options.tag !== undefined) attributes.push({ key: 'tag', value: { kind: 'string', value: options.tag } });
    const traceId = new Uint8Array(16);
    const spanId = new Uint8Array(8);
    new DataView(traceId.buffer).setUint32(12, i + 1);
    new DataView(spanId.buffer).setUint32(4, i + 1);
    out.push({
      timeUnixNano: baseNs + BigInt(i) * 1_000_000n + 123n,
      observedTimeUnixNano: baseNs + BigInt(i) * 1_000_000n + 456n,
      severityNumber: [5, 9, 13, 17][i % 4]!,
      severityText: ['DEBUG', 'INFO', 'WARN', 'ERROR'][i % 4]!,
      body: { kind: 'string', value: TEMPLATES[i % TEMPLATES.length]!(i) },
      attributes,
      droppedAttributesCount: 0,
      flags: 1,
      traceId,
      spanId,
      eventName: '',
      resource,
      scope,
    });
  }
  return out;
}
