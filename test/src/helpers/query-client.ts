/**
 * @module query-client
 * POSTs to `/v1/query` and parses the answer exactly (integers beyond 2^53 stay `bigint`).
 */
import { parseJsonExact, type JsonValue } from '@sluice/core';

/** A parsed /v1/query answer. */
export interface QueryAnswer {
  readonly status: number;
  readonly text: string;
  readonly json: JsonValue;
}

/** Sends `query` as `{"query": …}` JSON (or raw text / structured JSON with `mode`). */
export async function postQuery(
  baseUrl: string,
  tenant: string | null,
  query: string | object,
  options: { mode?: 'json' | 'text' | 'structured'; header?: string } = {},
): Promise<QueryAnswer> {
  const mode = options.mode ?? (typeof query === 'string' ? 'json' : 'structured');
  const headers: Record<string, string> = {};
  if (tenant !== null) headers[options.header ?? 'X-Sluice-Tenant'] = tenant;
  let body: string;
  if (mode === 'text') {
    headers['content-type'] = 'text/plain';
    body = String(query);
  } else {
    headers['content-type'] = 'application/json';
    body = mode === 'json' ? JSON.stringify({ query }) : JSON.stringify(query);
  }
  const res = await fetch(`${baseUrl}/v1/query`, { method: 'POST', headers, body });
  const text = await res.text();
  const parsed = parseJsonExact(text);
  if (!parsed.ok) throw new Error(`response is not JSON (${res.status}): ${text.slice(0, 200)}`);
  return { status: res.status, text, json: parsed.value };
}

/** Field access on a parsed JSON object. */
export function field(value: JsonValue | undefined, key: string): JsonValue | undefined {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return undefined;
  return (value as { readonly [k: string]: JsonValue })[key];
}

/** A JSON integer (number or bigint) as bigint. */
export function big(value: JsonValue | undefined): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  throw new Error(`not an integer: ${String(value)}`);
}
