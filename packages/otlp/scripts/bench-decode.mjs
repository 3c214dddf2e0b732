// Measures decodeLogsProtobuf / validateLogsProtobuf / decodeLogsJson throughput on a realistic 1,000-record request (about 150-char
// bodies, 8 attributes, trace context, 10 resource attributes). Run after building:
//   npx tsc -b packages/otlp && node packages/otlp/scripts/bench-decode.mjs
import { Buffer } from 'node:buffer';
import { decodeLogsJson, decodeLogsProtobuf, encodeLogsProtobuf, validateLogsProtobuf } from '../dist/index.js';
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';

const RECORDS = 1000;
const str = (value) => ({ kind: 'string', value });
const resource = {
  attributes: [
    ['service.name', 'checkout'],
    ['service.version', '1.42.0'],
    ['service.namespace', 'shop'],
    ['deployment.environment.name', 'production'],
    ['host.name', 'ip-10-0-3-17'],
    ['host.arch', 'amd64'],
    ['os.type', 'linux'],
    ['process.pid', 4242],
    ['telemetry.sdk.language', 'nodejs'],
    ['telemetry.sdk.version', '2.12.1'],
  ].map(([key, v]) => ({ key, value: typeof v === 'number' ? { kind: 'int', value: BigInt(v) } : str(v) })),
  droppedAttributesCount: 0,
  schemaUrl: '',
};
const scope = { name: 'checkout-logger', version: '1.0.0', attributes: [], droppedAttributesCount: 0, schemaUrl: '' };
const hex = (n, i) =>
  Buffer.from(
    ((i + 1) * 2654435761)
      .toString(16)
      .padStart(n * 2, 'a')
      .slice(0, n * 2),
    'hex',
  );
const records = [];
for (let i = 0; i < RECORDS; i++) {
  const body = `order ${100000 + i} for customer c-${i % 97} processed in ${i % 500} ms via payment provider stripe; items=${i % 7} total=${(i * 3.17).toFixed(2)} EUR currency conversion none`;
  records.push({
    timeUnixNano: 1_764_547_200_000_000_000n + BigInt(i) * 1_000_123n,
    observedTimeUnixNano: 1_764_547_200_000_500_000n + BigInt(i) * 1_000_123n,
    severityNumber: 9,
    severityText: 'INFO',
    body: str(body),
    attributes: [
      { key: 'http.request.method', value: str('POST') },
      { key: 'http.route', value: str('/api/v1/orders/:id') },
      { key: 'http.response.status_code', value: { kind: 'int', value: 200n } },
      { key: 'user.id', value: str(`u-${i}`) },
      { key: 'order.id', value: str(`o-${100000 + i}`) },
      { key: 'duration_ms', value: { kind: 'double', value: i * 0.37 } },
      { key: 'retry', value: { kind: 'bool', value: i % 5 === 0 } },
      { key: 'region', value: str('eu-west-1') },
    ],
    droppedAttributesCount: 0,
    flags: 1,
    traceId: hex(16, i),
    spanId: hex(8, i),
    eventName: '',
    resource,
    scope,
  });
}
const protobuf = encodeLogsProtobuf(records);

// The same shape through the real SDK JSON serializer, for the JSON figure.
const sdkResource = resourceFromAttributes(
  Object.fromEntries(
    resource.attributes.map((kv) => [kv.key, kv.value.kind === 'int' ? Number(kv.value.value) : kv.value.value]),
  ),
);
const sdkScope = { name: scope.name, version: scope.version };
const sdk = records.map((r) => ({
  hrTime: [Number(r.timeUnixNano / 1_000_000_000n), Number(r.timeUnixNano % 1_000_000_000n)],
  hrTimeObserved: [Number(r.observedTimeUnixNano / 1_000_000_000n), Number(r.observedTimeUnixNano % 1_000_000_000n)],
  severityNumber: 9,
  severityText: 'INFO',
  body: r.body.value,
  attributes: Object.fromEntries(
    r.attributes.map((kv) => [kv.key, kv.value.kind === 'int' ? Number(kv.value.value) : kv.value.value]),
  ),
  droppedAttributesCount: 0,
  spanContext: {
    traceId: Buffer.from(r.traceId).toString('hex'),
    spanId: Buffer.from(r.spanId).toString('hex'),
    traceFlags: 1,
  },
  resource: sdkResource,
  instrumentationScope: sdkScope,
}));
const json = JsonLogsSerializer.serializeRequest(sdk);
const sdkProtobuf = ProtobufLogsSerializer.serializeRequest(sdk);

function bench(name, bytes, decode) {
  const check = decode(bytes);
  const count = check.ok ? (typeof check.value === 'number' ? check.value : check.value.length) : -1;
  if (count !== RECORDS) throw new Error(`${name}: decode failed`);
  for (let i = 0; i < 200; i++) decode(bytes); // warm-up
  const runs = [];
  for (let round = 0; round < 5; round++) {
    const iters = 200;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iters; i++) decode(bytes);
    const ns = Number(process.hrtime.bigint() - t0);
    runs.push((iters * RECORDS) / (ns / 1e9));
  }
  runs.sort((a, b) => a - b);
  const median = runs[2];
  console.log(
    `${name}: ${(bytes.length / 1024).toFixed(0)} KiB, median ${Math.round(median / 1000)}k rec/s (min ${Math.round(runs[0] / 1000)}k, max ${Math.round(runs[4] / 1000)}k)`,
  );
}

bench('decodeLogsProtobuf (encodeLogsProtobuf input)', protobuf, decodeLogsProtobuf);
bench('decodeLogsProtobuf (SDK ProtobufLogsSerializer input)', sdkProtobuf, decodeLogsProtobuf);
bench('validateLogsProtobuf (SDK ProtobufLogsSerializer input)', sdkProtobuf, validateLogsProtobuf);
bench('decodeLogsJson (SDK JsonLogsSerializer input)', json, decodeLogsJson);
