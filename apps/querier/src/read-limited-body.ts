/**
 * @module read-limited-body
 * Reads a request body as UTF-8 text with a byte cap, counting while reading (never buffering past the cap).
 */

/** Largest query request body, bytes (1 MiB, a fixed cap: docs/design/query-governance.md). */
export const MAX_QUERY_BODY_BYTES = 1_048_576;

/** The body text, or `too_large` / `invalid_utf8`. */
export type BodyText =
  | { readonly status: 'ok'; readonly text: string }
  | { readonly status: 'too_large' }
  | { readonly status: 'invalid_utf8' };

/** Reads `request`'s body within `maxBytes`. */
export async function readLimitedBody(request: Request, maxBytes = MAX_QUERY_BODY_BYTES): Promise<BodyText> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxBytes) return { status: 'too_large' };
  if (request.body === null) return { status: 'ok', text: '' };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return { status: 'too_large' };
    }
    chunks.push(value);
  }
  try {
    return { status: 'ok', text: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, total)) };
  } catch {
    return { status: 'invalid_utf8' };
  }
}
