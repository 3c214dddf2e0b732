/**
 * @module loki-error
 * Errors of the Loki-compatible API in Loki's shape: the status, and the message as `text/plain` (what Loki's
 * `WriteError` sends and Grafana shows as is). A request Loki would call bad (malformed LogQL, a bad parameter,
 * a construct outside the subset) is 400; a rejection of the query service keeps its status (422 over a limit,
 * 503 contended or unavailable, 401/403 from the access gate), its kind in `X-Sluice-Error-Kind`.
 */
import { assertNever } from '@sluice/core';
import { httpStatusFor, type QueryError } from '../query-error.js';

/** What a Loki route answers instead of a result. */
export type LokiFailure =
  | { readonly kind: 'bad_request'; readonly message: string }
  | { readonly kind: 'unsupported'; readonly message: string }
  | { readonly kind: 'not_found'; readonly message: string }
  | { readonly kind: 'query'; readonly error: QueryError }
  /** The client went away: nobody reads the answer (499, as Loki logs it). */
  | { readonly kind: 'cancelled' };

/** The HTTP status of a failure. */
export function lokiStatus(f: LokiFailure): number {
  switch (f.kind) {
    case 'bad_request':
    case 'unsupported':
      return 400;
    case 'not_found':
      return 404;
    case 'query':
      return httpStatusFor(f.error.kind);
    case 'cancelled':
      return 499;
    default:
      return assertNever(f, 'Loki failure');
  }
}

/** The plain-text body and headers of a failure. */
export function lokiErrorResponse(f: LokiFailure): Response {
  const status = lokiStatus(f);
  const kind =
    f.kind === 'query'
      ? f.error.kind
      : f.kind === 'unsupported'
        ? 'unsupported_logql'
        : f.kind === 'bad_request'
          ? 'invalid_query'
          : f.kind;
  const message =
    f.kind === 'query'
      ? f.error.message
      : f.kind === 'cancelled'
        ? 'the request was cancelled by the client'
        : f.message;
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'x-sluice-error-kind': kind,
  };
  if (f.kind === 'query' && f.error.kind === 'too_many_connections') headers['connection'] = 'close';
  return new Response(`${message}\n`, { status, headers });
}
