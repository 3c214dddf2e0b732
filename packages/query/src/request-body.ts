/**
 * @module request-body
 * `POST /v1/query` body modes (ourios-surface §1): with `Content-Type: application/json` (parameters ignored,
 * case-insensitive), a body that is exactly `{"query": "<dsl>"}` is DSL text and any other JSON is the structured
 * form; any other or missing content type means the body is raw DSL text. The 1 MiB body cap (413) belongs to
 * the HTTP layer, before this runs.
 */
import type { Result } from '@sluice/core';
import type { QueryError } from './errors.js';
import type { Query } from './ir.js';
import { parseJsonExact } from './json-exact.js';
import { parseQuery } from './parse-query.js';
import { parseStructuredQuery } from './structured.js';

/** The media type of a `Content-Type` header value: lower-cased, parameters dropped. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Parses a `/v1/query` request body into a validated query. Never throws for bad input.
 * @param contentType the request's `Content-Type` header, if any
 * @param bodyText the body decoded as UTF-8 (the caller rejects invalid UTF-8 as `invalid_query`)
 */
export function parseRequestBody(contentType: string | undefined, bodyText: string): Result<Query, QueryError> {
  if (mediaType(contentType) !== 'application/json') return parseQuery(bodyText);
  const json = parseJsonExact(bodyText);
  if (!json.ok) return json;
  const v = json.value;
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const keys = Object.keys(v);
    const q = (v as Readonly<Record<string, unknown>>).query;
    if (keys.length === 1 && keys[0] === 'query' && typeof q === 'string') return parseQuery(q);
  }
  return parseStructuredQuery(v);
}
