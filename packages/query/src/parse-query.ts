/**
 * @module parse-query
 * The text entry point: lex, parse and validate in one call.
 */
import type { Result } from '@sluice/core';
import type { QueryError } from './errors.js';
import type { Query } from './ir.js';
import { parseQuerySyntax } from './parser.js';
import { validateQuery } from './validate.js';

/**
 * Parses and validates DSL text (packages/query/README.md). Errors cite the offending
 * token and its offset, e.g. `unexpected token 'by' at 17: expected …`. Never throws for bad input.
 * @example
 * const r = parseQuery('service == "api" and severity >= warn | range(-15m, now) | limit 50');
 * if (r.ok) plan(r.value);
 */
export function parseQuery(text: string): Result<Query, QueryError> {
  const r = parseQuerySyntax(text);
  if (!r.ok) return r;
  return validateQuery(r.value.query, r.value.spans);
}
