/**
 * @module @sluice/core
 * Layer 0: the record model, result unions, canonical JSON and tenant rules. No I/O, no node imports.
 */
export type { AnyValue, KeyValue } from './any-value.js';
export { EMPTY_VALUE } from './any-value.js';
export type { LogRecord, ResourceInfo, ScopeInfo } from './log-record.js';
export { effectiveTimeUnixNano } from './log-record.js';
export type { Result } from './result.js';
export { ok, err, assertNever } from './result.js';
export { anyValueToJson, keyValuesToJson, toBase64, toHex } from './canonical-json.js';
export type { TenantError } from './tenant.js';
export { parseTenant, describeTenantError, encodeTenantForKey, MAX_TENANT_BYTES } from './tenant.js';
export type { Param, ParamTypeTag, MinedFields, TemplateAuditEvent, TemplateAuditEventType } from './mined.js';
export { PARAM_TYPE, NO_TEMPLATE } from './mined.js';
export type { ProbeOptions, ProbeRefusal, ProbeResponse, Probes } from './probes.js';
export { PROBE_PATHS, answerProbe } from './probes.js';
export { HTTP_KEEP_ALIVE_TIMEOUT_MS } from './http-timeouts.js';
export type { JsonSyntaxError, JsonValue, ParseJsonExactOptions } from './json-exact.js';
export { MAX_JSON_DEPTH, parseJsonExact } from './json-exact.js';
