/**
 * @module grpc-status
 * IngestOutcome → gRPC status code. Transient failures are UNAVAILABLE; oversized messages are
 * RESOURCE_EXHAUSTED without RetryInfo (not retryable), as OTLP/gRPC specifies; a missing or wrong token is
 * UNAUTHENTICATED and a tenant outside the token's set PERMISSION_DENIED.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { assertNever } from '@sluice/core';
import type { IngestOutcome } from './ingest-outcome.js';

/** The gRPC status code for an outcome. */
export function grpcStatusFor(outcome: IngestOutcome): GrpcStatus {
  switch (outcome.status) {
    case 'accepted':
      return GrpcStatus.OK;
    case 'invalid':
    case 'bad_tenant':
    case 'unsupported_media_type':
      return GrpcStatus.INVALID_ARGUMENT;
    case 'unauthenticated':
      return GrpcStatus.UNAUTHENTICATED;
    case 'tenant_denied':
      return GrpcStatus.PERMISSION_DENIED;
    case 'too_large':
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 'unavailable':
    case 'disk_low':
      return GrpcStatus.UNAVAILABLE;
    default:
      return assertNever(outcome, 'ingest outcome');
  }
}
