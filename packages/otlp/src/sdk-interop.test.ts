/**
 * @module sdk-interop.test
 * Property tests against the real OpenTelemetry JS serializers (@opentelemetry/otlp-transformer 0.223.1): random
 * SDK log records, serialized to protobuf and to OTLP/JSON, must decode to exactly the expected records.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { Result } from '@sluice/core';
import type { OtlpDecodeError } from './errors.js';
import { decodeLogsJson } from './decode-json.js';
import { decodeLogsProtobuf } from './decode-protobuf.js';
import { encodeLogsProtobuf } from './encode-protobuf.js';
import { expectedRecords, sdkRecordsArb } from './testing/sdk-records.js';

const RUNS = 150;

function mustDecode<T>(r: Result<T, OtlpDecodeError>): T {
  if (r.ok) return r.value;
  return assert.fail(`decode failed: ${r.error.message}`);
}

void describe('decoding what the real OTel JS SDK serializers write', () => {
  void test('protobuf from ProtobufLogsSerializer decodes to the expected records, field by field', () => {
    fc.assert(
      fc.property(sdkRecordsArb({ jsonSafe: false }), (sdk) => {
        const bytes = ProtobufLogsSerializer.serializeRequest(sdk)!;
        assert.deepStrictEqual(mustDecode(decodeLogsProtobuf(bytes)), expectedRecords(sdk));
      }),
      { numRuns: RUNS },
    );
  });

  void test('OTLP/JSON from JsonLogsSerializer decodes to the expected records, field by field', () => {
    fc.assert(
      fc.property(sdkRecordsArb({ jsonSafe: true }), (sdk) => {
        const bytes = JsonLogsSerializer.serializeRequest(sdk)!;
        assert.deepStrictEqual(mustDecode(decodeLogsJson(bytes)), expectedRecords(sdk));
      }),
      { numRuns: RUNS },
    );
  });

  void test('protobuf and JSON of the same SDK records decode to identical records', () => {
    fc.assert(
      fc.property(sdkRecordsArb({ jsonSafe: true }), (sdk) => {
        const fromProto = mustDecode(decodeLogsProtobuf(ProtobufLogsSerializer.serializeRequest(sdk)!));
        const fromJson = mustDecode(decodeLogsJson(JsonLogsSerializer.serializeRequest(sdk)!));
        assert.deepStrictEqual(fromJson, fromProto);
      }),
      { numRuns: RUNS },
    );
  });

  void test('re-encoding SDK-decoded records with encodeLogsProtobuf decodes to the same records', () => {
    fc.assert(
      fc.property(sdkRecordsArb({ jsonSafe: false }), (sdk) => {
        const decoded = mustDecode(decodeLogsProtobuf(ProtobufLogsSerializer.serializeRequest(sdk)!));
        assert.deepStrictEqual(mustDecode(decodeLogsProtobuf(encodeLogsProtobuf(decoded))), decoded);
      }),
      { numRuns: RUNS },
    );
  });

  void test('records emitted through a real LoggerProvider decode with their trace context and shared resource', async () => {
    const exporter = new InMemoryLogRecordExporter();
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': 'checkout', 'host.cores': 8 }),
      processors: [new SimpleLogRecordProcessor({ exporter })],
    });
    const logger = provider.getLogger('orders', '2.1.0', { schemaUrl: 'https://opentelemetry.io/schemas/1.30.0' });
    const big: [number, number] = [1_764_547_200, 987_654_321];
    logger.emit({
      severityNumber: SeverityNumber.WARN,
      severityText: 'WARN',
      body: 'slow order',
      timestamp: big,
      attributes: { n: -7, ok: true },
    });
    logger.emit({ body: { nested: [1, 'x', { deep: 2.5 }] }, eventName: 'order.slow' });
    await provider.forceFlush();
    const sdk = exporter.getFinishedLogRecords();
    assert.equal(sdk.length, 2);
    for (const bytes of [ProtobufLogsSerializer.serializeRequest(sdk)!]) {
      const got = mustDecode(decodeLogsProtobuf(bytes));
      assert.deepStrictEqual(got, expectedRecords(sdk));
      assert.equal(got[0]!.timeUnixNano, 1_764_547_200_987_654_321n);
      assert.equal(got[0]!.resource, got[1]!.resource, 'records of one ResourceLogs share one resource object');
      assert.equal(got[0]!.scope, got[1]!.scope, 'records of one ScopeLogs share one scope object');
    }
    assert.deepStrictEqual(mustDecode(decodeLogsJson(JsonLogsSerializer.serializeRequest(sdk)!)), expectedRecords(sdk));
    await provider.shutdown();
  });
});
