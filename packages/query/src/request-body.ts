/**
 * @module request-body
 * `POST /v1/query` body modes: with `Content-Type: application/json` (parameters ignored, case-insensitive), a
 * body that is exactly `{"query": "<dsl>"}` is DSL text (an object with a `query` key that is not a lone string is
 * refused naming that key) and any other JSON is the structured form; any other or missing content type means the
 * body is raw DSL text. The 1 MiB body cap (413) belongs to the HTTP layer, before this runs.
 *
 * Both JSON forms may also carry `"timeout_ms": N` (an integer ≥ 1) beside the query: the deadline the request asks
 * for, which may shorten the querier's `query_timeout_ms` but never lengthen it (the service applies that rule).
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
  const r = parseQueryRequest(contentType, bodyText);
  return r.ok ? { ok: true, value: r.value.query } : r;
}

/** A parsed `/v1/query` request: the query and the deadline it asked for, if any. */
export interface QueryRequest {
  readonly query: Query;
  /** `timeout_ms` from a JSON body; `null` when absent (the raw-text form cannot carry one). */
  readonly timeoutMs: number | null;
}

/** The longest deadline a request may ask for, ms: what a timer can hold (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** The body key of a request's own deadline. */
export const TIMEOUT_KEY = 'timeout_ms';

/**
 * Checks a requested deadline in ms, from the body or a header: an integer ≥ 1.
 * @returns the value, or a message naming `source`
 */
export function checkRequestedTimeout(source: string, value: unknown): Result<number, string> {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > MAX_TIMEOUT_MS)
    return err(
      `${source} must be an integer number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${describeJson(value)}`,
    );
  return { ok: true, value: n };
}

/** Like {@link parseRequestBody}, and also returns the request's `timeout_ms`. Never throws for bad input. */
export function parseQueryRequest(contentType: string | undefined, bodyText: string): Result<QueryRequest, QueryError> {
  const parsed = parseBody(contentType, bodyText);
  if (!parsed.ok) return parsed;
  const { json } = parsed.value;
  let timeoutMs: number | null = null;
  if (json !== undefined && TIMEOUT_KEY in json) {
    const t = checkRequestedTimeout(`$.${TIMEOUT_KEY}`, json[TIMEOUT_KEY]);
    if (!t.ok) return err(queryError(t.error));
    timeoutMs = t.value;
  }
  const query = parsed.value.parse();
  return query.ok ? { ok: true, value: { query: query.value, timeoutMs } } : query;
}

/** The body as JSON (when it is a JSON mapping) and a parser of the query in it, with `timeout_ms` set aside. */
function parseBody(
  contentType: string | undefined,
  bodyText: string,
): Result<{ json: Readonly<Record<string, unknown>> | undefined; parse: () => Result<Query, QueryError> }, QueryError> {
  if (mediaType(contentType) !== 'application/json')
    return { ok: true, value: { json: undefined, parse: () => parseQuery(bodyText) } };
  // Strict: a duplicate key is refused rather than silently resolved, and u64 values arrive exact.
  const json = parseJsonExact(bodyText);
  if (!json.ok) {
    const { message, at } = json.error;
    return err(
      queryError(`request body is not valid JSON: ${message} at ${at}`, at, Math.min(at + 1, bodyText.length)),
    );
  }
  const v = json.value;
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return { ok: true, value: { json: undefined, parse: () => parseStructuredQuery(v) } };
  const record = v as Readonly<Record<string, unknown>>;
  const { [TIMEOUT_KEY]: _timeout, ...rest } = record;
  return { ok: true, value: { json: record, parse: () => parseJsonForm(rest) } };
}

/** The `{"query": "<dsl>"}` form or the structured form, `timeout_ms` already set aside. */
function parseJsonForm(v: Readonly<Record<string, unknown>>): Result<Query, QueryError> {
  if ('query' in v) {
    // The {"query": "<dsl>"} form: its one key must hold the DSL text (the structured form has no "query" key).
    const keys = Object.keys(v);
    const q = v['query'];
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
          `$: {"query": "<dsl>"} takes no other keys but "${TIMEOUT_KEY}", got ${others.join(', ')}; put stages such as limit in the DSL text`,
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
