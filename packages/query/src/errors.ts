/**
 * @module errors
 * The one error value every front-end step returns: `invalid_query` with a user-safe message and the source span
 * it cites. Bad input is never thrown (house style rule 8); only bugs throw.
 */

/**
 * A rejected query. `start`/`end` are UTF-16 code-unit offsets into the query text (equal to byte offsets for
 * ASCII input), half-open. For the structured JSON form they are 0 and the message names the JSON path instead.
 */
export interface QueryError {
  readonly kind: 'invalid_query';
  readonly message: string;
  readonly start: number;
  readonly end: number;
}

/** Longest accepted query text, in UTF-8 bytes. */
export const MAX_QUERY_BYTES = 16 * 1024;

/** Deepest accepted nesting of parentheses, `not` and structured `and`/`or`/`not` nodes. */
export const MAX_NESTING_DEPTH = 64;

/** Builds a {@link QueryError}. */
export function queryError(message: string, start = 0, end = start): QueryError {
  return Object.freeze({ kind: 'invalid_query', message, start, end });
}
