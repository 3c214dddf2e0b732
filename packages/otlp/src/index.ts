/**
 * @module @sluice/otlp
 * OTLP logs request decoding (binary protobuf and OTLP/JSON) into the flat record model of `@sluice/core`,
 * an encoder back to protobuf (tests, benchmarks), and OTLP/HTTP response bodies.
 */
export type { OtlpDecodeError } from './errors.js';
export { decodeLogsProtobuf, MAX_ANY_VALUE_DEPTH } from './decode-protobuf.js';
export { decodeLogsJson } from './decode-json.js';
export { validateLogsProtobuf } from './validate-protobuf.js';
export { encodeLogsProtobuf } from './encode-protobuf.js';
export type { OtlpEncoding } from './responses.js';
export { encodeExportLogsResponse, encodeRpcStatus } from './responses.js';
