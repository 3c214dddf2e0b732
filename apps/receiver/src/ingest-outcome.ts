/**
 * @module ingest-outcome
 * The result of one export, as a value. Both surfaces (HTTP and gRPC) map it with one exhaustive switch each
 * (`http-status.ts`, `grpc-status.ts`), so a new outcome fails compilation until each surface has a status.
 */

/** Which wire encoding an export arrived in (the response uses the same). */
export type OtlpEncoding = 'protobuf' | 'json';

/** Transport and encoding an export arrived with (values of `sluice.ingest.protocol`). */
export type IngestProtocol = 'http_protobuf' | 'http_json' | 'grpc';

/** Outcome of one export request. */
export type IngestOutcome =
  /** Durable (or empty): acknowledge. */
  | { readonly status: 'accepted'; readonly records: number }
  /** The request cannot be decoded or violates the protocol; never retried. */
  | { readonly status: 'invalid'; readonly message: string }
  /** Auth is enabled and the request has no valid bearer token for ingest (`auth.*`). */
  | { readonly status: 'unauthenticated'; readonly message: string }
  /** The tenant header is missing (and no default tenant is configured), repeated, empty or breaks the grammar. */
  | { readonly status: 'bad_tenant'; readonly message: string }
  /** The token is valid, but the tenant is outside the token's set. */
  | { readonly status: 'tenant_denied'; readonly message: string }
  /** Body or decompressed body over its configured cap. */
  | { readonly status: 'too_large'; readonly message: string }
  /** Content-Type or Content-Encoding not supported (HTTP only). */
  | { readonly status: 'unsupported_media_type'; readonly message: string }
  /** Transient: not made durable (WAL failure, backlog over its cap, shutting down). Retry later. */
  | { readonly status: 'unavailable'; readonly message: string; readonly retryAfterSecs: number }
  /**
   * Transient: the WAL volume is below `receiver.limits.min_free_disk_percent` free space (the disk guard), so
   * nothing was written. Retry later.
   */
  | { readonly status: 'disk_low'; readonly message: string; readonly retryAfterSecs: number };
