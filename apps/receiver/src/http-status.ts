/**
 * @module http-status
 * IngestOutcome → OTLP/HTTP status. Transient failures are 503 + Retry-After (retryable by OTLP clients);
 * every 4xx is final, as OTLP/HTTP specifies.
 */
import { assertNever } from '@sluice/core';
import type { IngestOutcome } from './ingest-outcome.js';

/** The HTTP status for an outcome, and whether the connection must close (413: the body was not drained). */
export function httpStatusFor(outcome: IngestOutcome): { readonly status: number; readonly close: boolean } {
  switch (outcome.status) {
    case 'accepted':
      return { status: 200, close: false };
    case 'invalid':
    case 'bad_tenant':
      return { status: 400, close: false };
    case 'unauthenticated':
      return { status: 401, close: false };
    case 'tenant_denied':
      return { status: 403, close: false };
    case 'too_large':
      return { status: 413, close: true };
    case 'unsupported_media_type':
      return { status: 415, close: false };
    case 'unavailable':
    case 'disk_low':
      return { status: 503, close: false };
    default:
      return assertNever(outcome, 'ingest outcome');
  }
}
