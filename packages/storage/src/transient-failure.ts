/**
 * @module transient-failure
 * Which object-store failures are worth another attempt. Only conditions that say nothing about the object are:
 * a slow or lost connection, an overloaded or failing server, an answer cut short. Everything else (a missing
 * object, a bad key or range, a refused credential, an unknown error) gives the same answer next time and is
 * passed on unchanged.
 */
import { TruncatedBodyError } from './object-store.js';
import type { UnavailableReason } from './storage-errors.js';

/** Socket and resolver codes of a connection that failed or ended early. DNS failures count: they pass. */
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** SDK error names of a lost connection, and S3's own "your socket was idle too long" answer. */
const CONNECTION_NAMES = new Set(['NetworkingError', 'RequestTimeout']);

/** S3 error codes of an overloaded or failing server (whatever status they arrive with). */
const SERVER_ERROR_NAMES = new Set(['SlowDown', 'InternalError', 'ServiceUnavailable']);

function field(e: unknown, name: string): unknown {
  return typeof e === 'object' && e !== null && name in e ? (e as Record<string, unknown>)[name] : undefined;
}

function httpStatusOf(e: unknown): number | undefined {
  const status = field(field(e, '$metadata'), 'httpStatusCode');
  return typeof status === 'number' ? status : undefined;
}

/** The error and the causes it wraps (a few levels: SDKs and fetch wrap socket errors). */
function chain(e: unknown): unknown[] {
  const out: unknown[] = [];
  for (let cur = e; cur !== undefined && cur !== null && out.length < 4; cur = field(cur, 'cause')) out.push(cur);
  return out;
}

function reasonOf(e: unknown): UnavailableReason | null {
  if (e instanceof TruncatedBodyError) return 'truncated';
  const name = field(e, 'name');
  const code = field(e, 'code');
  // The SDK's connect and request timeouts (name TimeoutError, code ETIMEDOUT) and the OS's connect timeout.
  if (name === 'TimeoutError' || code === 'ETIMEDOUT') return 'timeout';
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return 'connection';
  if (typeof name === 'string' && CONNECTION_NAMES.has(name)) return 'connection';
  if (field(e, 'message') === 'socket hang up') return 'connection';
  if (typeof name === 'string' && SERVER_ERROR_NAMES.has(name)) return 'server_error';
  const status = httpStatusOf(e);
  if (status !== undefined && (status >= 500 || status === 429)) return 'server_error';
  return null;
}

/**
 * Why `error` is transient, or `null` when another attempt would fail the same way (the error is then passed on
 * as it is). Does not know about attempt timeouts or caller aborts; the caller of this function decides those.
 */
export function transientReason(error: unknown): UnavailableReason | null {
  for (const e of chain(error)) {
    const reason = reasonOf(e);
    if (reason !== null) return reason;
  }
  return null;
}
