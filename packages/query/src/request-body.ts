/**
 * @module request-body
 * `POST /v1/query` body modes: with `Content-Type: application/json` (parameters ignored, case-insensitive), a
 * body that is exactly `{"query": "<dsl>"}` is DSL text (an object with a `query` key that is not a lone string is
 * refused naming that key) and any other JSON is the structured form; any other or missing content type means the
 * body is raw DSL text. The 1 MiB body cap (413) belongs to the HTTP layer, before this runs.
 */
import { err, parseJsonExact, type Result } from '@sluice/core';
import { queryError, type QueryError } from './errors.js';
import type { Query } from './ir.js';
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
  // Strict: a duplicate key is refused rather than silently resolved, and u64 values arrive exact.
  const json = parseJsonExact(bodyText);
  if (!json.ok) {
    const { message, at } = json.error;
    return err(
      queryError(`request body is not valid JSON: ${message} at ${at}`, at, Math.min(at + 1, bodyText.length)),
    );
  }
  const v = json.value;
  if (typeof v === 'object' && v !== null && !Array.isArray(v) && 'query' in v) {
    // The {"query": "<dsl>"} form: its one key must hold the DSL text (the structured form has no "query" key).
    const keys = Object.keys(v);
    const q = (v as Readonly<Record<string, unknown>>).query;
    if (typeof q !== 'string') {
      return {
        ok: false,
        error: queryError(`$.query: "query" must be a string (a DSL statement), got ${describeJson(q)}`),
      };
    }
    if (keys.length > 1) {
      const others = keys.filter((k) => k !== 'query').map((k) => JSON.stringify(k));
      return {
        ok: false,
        error: queryError(
          `$: {"query": "<dsl>"} takes no other keys, got ${others.join(', ')}; put stages such as limit in the DSL text`,
        ),
      };
    }
    return parseQuery(q);
  }
  return parseStructuredQuery(v);
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'bigint') return 'an integer';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  return `a ${typeof value}`;
}
