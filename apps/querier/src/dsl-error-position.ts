/**
 * @module dsl-error-position
 * Where a statement went wrong, for the 400 `invalid_query` of `POST /v1/query` (docs/rejections.md). Only a raw
 * DSL body (any content type but `application/json`) has offsets that mean "into the statement as typed"; a JSON
 * body's offsets would point into the JSON text or a structured tree, so none is given for it.
 */
import type { TextPosition } from './query-error.js';

/** The position to report for a parse error of a body of `contentType`; `undefined` for a JSON body. */
export function dslErrorPosition(
  contentType: string | undefined,
  error: { readonly start: number; readonly end: number },
): TextPosition | undefined {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json') return undefined;
  return { start: error.start, end: error.end };
}
