/**
 * @module wal-payload
 * The receiver's WAL record: the tenant and the raw export body exactly as received (after gunzip), so replay
 * decodes the very bytes that were acknowledged.
 *
 * Layout: `u8 version (1) | u8 encoding (0 protobuf, 1 json) | u16le tenant byte length | tenant (ASCII) |
 * body`.
 */
import type { OtlpEncoding } from '@sluice/otlp';

const VERSION = 1;

/** A decoded WAL record. */
export interface WalExport {
  readonly tenant: string;
  readonly encoding: OtlpEncoding;
  readonly body: Uint8Array;
}

/** Encodes one export for the WAL. The tenant is already validated (ASCII, ≤ 128 bytes). */
export function encodeWalExport(tenant: string, encoding: OtlpEncoding, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + tenant.length + body.length);
  out[0] = VERSION;
  out[1] = encoding === 'protobuf' ? 0 : 1;
  out[2] = tenant.length & 0xff;
  out[3] = tenant.length >>> 8;
  for (let i = 0; i < tenant.length; i++) out[4 + i] = tenant.charCodeAt(i);
  out.set(body, 4 + tenant.length);
  return out;
}

/**
 * Decodes a WAL record.
 * @throws Error when the record is not a version-1 export record (a corrupt or foreign WAL: unrecoverable).
 */
export function decodeWalExport(payload: Uint8Array): WalExport {
  if (payload.length < 4 || payload[0] !== VERSION || (payload[1] !== 0 && payload[1] !== 1)) {
    throw new Error('WAL record is not a sluice export record (version 1)');
  }
  const tenantLength = payload[2]! | (payload[3]! << 8);
  if (4 + tenantLength > payload.length) throw new Error('WAL record tenant length exceeds the record');
  let tenant = '';
  for (let i = 0; i < tenantLength; i++) tenant += String.fromCharCode(payload[4 + i]!);
  return {
    tenant,
    encoding: payload[1] === 0 ? 'protobuf' : 'json',
    body: payload.subarray(4 + tenantLength),
  };
}
