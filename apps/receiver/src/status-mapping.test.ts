/** Each ingest outcome maps to the OTLP status its surface specifies. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { grpcStatusFor } from './grpc-status.js';
import { httpStatusFor } from './http-status.js';
import type { IngestOutcome } from './ingest-outcome.js';

const cases: [IngestOutcome, number, boolean, GrpcStatus][] = [
  [{ status: 'accepted', records: 1 }, 200, false, GrpcStatus.OK],
  [{ status: 'invalid', message: 'x' }, 400, false, GrpcStatus.INVALID_ARGUMENT],
  [{ status: 'bad_tenant', message: 'x' }, 400, false, GrpcStatus.INVALID_ARGUMENT],
  [{ status: 'unauthenticated', message: 'x' }, 401, false, GrpcStatus.UNAUTHENTICATED],
  [{ status: 'tenant_denied', message: 'x' }, 403, false, GrpcStatus.PERMISSION_DENIED],
  [{ status: 'too_large', message: 'x' }, 413, true, GrpcStatus.RESOURCE_EXHAUSTED],
  [{ status: 'unsupported_media_type', message: 'x' }, 415, false, GrpcStatus.INVALID_ARGUMENT],
  [{ status: 'unavailable', message: 'x', retryAfterSecs: 1 }, 503, false, GrpcStatus.UNAVAILABLE],
  [{ status: 'disk_low', message: 'x', retryAfterSecs: 1 }, 503, false, GrpcStatus.UNAVAILABLE],
];

test('HTTP: 200 / 400 / 401 / 403 / 413 (closing the connection) / 415 / 503; gRPC: OK / INVALID_ARGUMENT / UNAUTHENTICATED / PERMISSION_DENIED / RESOURCE_EXHAUSTED / UNAVAILABLE', () => {
  for (const [outcome, http, close, grpc] of cases) {
    assert.deepEqual(httpStatusFor(outcome), { status: http, close }, outcome.status);
    assert.equal(grpcStatusFor(outcome), grpc, outcome.status);
  }
});
