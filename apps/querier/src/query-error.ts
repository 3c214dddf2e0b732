/**
 * @module query-error
 * Every way a query request can fail, and its mapping on each surface: one exhaustive switch for HTTP status
 * and one for the MCP JSON-RPC error code, so a new kind fails compilation until both surfaces map it.
 */
import { assertNever } from '@sluice/core';
import { limitErrorStatus, type LimitErrorDetails, type LimitErrorKind } from '@sluice/limits';
import type { CorruptReason, StorageOperation, UnavailableReason } from '@sluice/storage';

/** The `kind` of an error response (`{"error":{"kind","message"}}`), MCP `data.kind` and `error.type`. */
export type QueryErrorKind =
  | 'unauthenticated'
  | 'missing_tenant'
  | 'invalid_tenant'
  | 'tenant_denied'
  | 'invalid_query'
  | 'request_too_large'
  | 'too_many_connections'
  | 'query_tail_limit'
  | LimitErrorKind
  | 'storage_unavailable'
  | 'storage_corrupt'
  | 'internal';

/** The kinds that name a stored object: storage that did not answer, and an object that is not what we wrote. */
export type StorageErrorKind = Extract<QueryErrorKind, 'storage_unavailable' | 'storage_corrupt'>;

/**
 * A failed query as a value. `message` is user-safe: it names the limit, the rule or the object, never library
 * text. The storage kinds carry what an operator needs to find the object (the fields of the error object).
 */
export type QueryError =
  | {
      readonly kind: Exclude<QueryErrorKind, StorageErrorKind>;
      readonly message: string;
      /** For a limit rejection: the config key, what the query needed or did, the configured value. */
      readonly details?: Pick<LimitErrorDetails, 'limit' | 'value' | 'ceiling'>;
      /** For `invalid_query` of a DSL text body: where in the statement it went wrong (see {@link TextPosition}). */
      readonly position?: TextPosition;
    }
  | {
      readonly kind: 'storage_corrupt';
      readonly message: string;
      /** The corrupt object (for a manifest's problem, the manifest). */
      readonly key: string;
      readonly reason: CorruptReason;
    }
  | {
      readonly kind: 'storage_unavailable';
      readonly message: string;
      readonly operation: StorageOperation;
      /** The object key or listed prefix; `null` when none applies. */
      readonly key: string | null;
      /** Attempts made of the call that failed (or, for a call still waiting at the deadline, the one under way). */
      readonly attempts: number;
      readonly reason: UnavailableReason;
    };

/** Half-open UTF-16 offsets into the query text of a raw DSL body (docs/rejections.md). */
export interface TextPosition {
  readonly start: number;
  readonly end: number;
}

/**
 * HTTP status per kind: 401 no valid token, 400 bad request, 403 tenant outside the token's set, 413 body over
 * the cap, 422 "ask for less", 503 "busy, retry" (storage that does not answer is one more reason to retry), 500
 * (a corrupt object fails the same way every time until an operator repairs it).
 */
export function httpStatusFor(kind: QueryErrorKind): 400 | 401 | 403 | 413 | 422 | 500 | 503 {
  switch (kind) {
    case 'unauthenticated':
      return 401;
    case 'missing_tenant':
    case 'invalid_tenant':
    case 'invalid_query':
      return 400;
    case 'tenant_denied':
      return 403;
    case 'request_too_large':
      return 413;
    case 'too_many_connections':
    case 'query_tail_limit':
      return 503;
    case 'query_memory_limit':
    case 'query_file_limit':
    case 'query_result_limit':
    case 'query_time_limit':
    case 'query_memory_contended':
    case 'query_queue_full':
    case 'query_queue_timeout':
    case 'query_time_contended':
    case 'query_tenant_busy':
      // The RFC's 422 "ask for less" / 503 "busy, retry" split has one owner: @sluice/limits.
      return limitErrorStatus(kind);
    case 'storage_unavailable':
      return 503;
    case 'storage_corrupt':
    case 'internal':
      return 500;
    default:
      return assertNever(kind, 'query error kind');
  }
}

/** JSON-RPC error codes used by the MCP surface. */
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_INVALID_PARAMS = -32602;
export const JSONRPC_INTERNAL_ERROR = -32603;

/**
 * MCP error code per kind: bad input → invalid_params; "ask for less" and "not allowed" (tenant_denied) →
 * invalid_request; overload → internal_error. Authentication, tenant and connection refusals are answered at
 * the HTTP level before MCP dispatch, so only `tenant_denied` (a tool's tenant argument) reaches a tool.
 */
export function mcpErrorCodeFor(kind: QueryErrorKind): number {
  switch (kind) {
    case 'missing_tenant':
    case 'invalid_tenant':
    case 'invalid_query':
    case 'request_too_large':
      return JSONRPC_INVALID_PARAMS;
    case 'unauthenticated':
    case 'tenant_denied':
      return JSONRPC_INVALID_REQUEST;
    case 'too_many_connections':
    case 'query_tail_limit':
      return JSONRPC_INTERNAL_ERROR;
    case 'query_memory_limit':
    case 'query_file_limit':
    case 'query_result_limit':
    case 'query_time_limit':
    case 'query_memory_contended':
    case 'query_queue_full':
    case 'query_queue_timeout':
    case 'query_time_contended':
    case 'query_tenant_busy':
      return limitErrorStatus(kind) === 422 ? JSONRPC_INVALID_REQUEST : JSONRPC_INTERNAL_ERROR;
    case 'storage_unavailable':
    case 'storage_corrupt':
    case 'internal':
      return JSONRPC_INTERNAL_ERROR;
    default:
      return assertNever(kind, 'query error kind');
  }
}

/** True when the same request may succeed later unchanged (the 503 class). */
export function isRetryable(kind: QueryErrorKind): boolean {
  return httpStatusFor(kind) === 503;
}

/**
 * The error object of every surface: `kind` and `message` always; `retryable` always; for a limit rejection also
 * `limit` (the config key), `value` (what the query needed or did, `null` when unknown) and `ceiling` (the
 * configured value); for an `invalid_query` of a DSL text body also `position` ({start, end}); for `storage_corrupt` also `key` and `reason`; for `storage_unavailable` also `operation`,
 * `key`, `attempts` and `reason` — docs/rejections.md. Every field after `message` is additive.
 */
export function errorObject(error: QueryError): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: error.kind, message: error.message };
  switch (error.kind) {
    case 'storage_corrupt':
      out['key'] = error.key;
      out['reason'] = error.reason;
      break;
    case 'storage_unavailable':
      out['operation'] = error.operation;
      out['key'] = error.key;
      out['attempts'] = error.attempts;
      out['reason'] = error.reason;
      break;
    default:
      if (error.details !== undefined) {
        out['limit'] = error.details.limit;
        out['value'] = error.details.value;
        out['ceiling'] = error.details.ceiling;
      }
      if (error.position !== undefined) out['position'] = { start: error.position.start, end: error.position.end };
  }
  out['retryable'] = isRetryable(error.kind);
  return out;
}

/** The error envelope body. */
export function errorEnvelope(error: QueryError): string {
  return JSON.stringify({ error: errorObject(error) });
}
