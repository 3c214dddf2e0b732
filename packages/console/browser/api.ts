/**
 * @module api
 * The console's only way to the querier: the public HTTP API (docs/console.md). Every call sends the tenant
 * header (the name `/v1/status` reports, `tenancy.header`) when a tenant is chosen, and the bearer token when one
 * is entered. Failures are values, carrying the server's error object as it is.
 */
// Types only, so the served module never loads it: the declaration the Node build of this package emits.
import type { StatusBody } from '../dist/status-body.js';

/** The error object of every failed call (`{"error": {...}}`, docs/rejections.md). */
export interface ApiError {
  readonly kind: string;
  readonly message: string;
  readonly retryable?: boolean;
  readonly limit?: string;
  readonly value?: number | null;
  readonly ceiling?: number | null;
  readonly position?: { readonly start: number; readonly end: number };
}

/** An HTTP status and the error the server named (or one the console made up for a network failure). */
export interface ApiFailure {
  readonly ok: false;
  readonly status: number;
  readonly error: ApiError;
}

export type ApiResult<T> = { readonly ok: true; readonly value: T } | ApiFailure;

/** `GET /v1/status`: the type the querier sends it with. */
export type { StatusBody };

/** One OTLP-style attribute of a record. */
export interface KeyValue {
  readonly key: string;
  readonly value: Readonly<Record<string, unknown>>;
}

/** A record as `/v1/query` and `/v1/tail` send it. */
export interface LogRecordJson {
  readonly time_unix_nano: number | string;
  readonly severity_number?: number;
  readonly severity_text?: string;
  readonly trace_id?: string;
  readonly span_id?: string;
  readonly attributes?: readonly KeyValue[];
  readonly resource_attributes?: readonly KeyValue[];
  readonly scope_name?: string;
  readonly scope_version?: string;
  readonly template_id?: number | string;
  readonly template_version?: number;
  readonly params?: unknown;
  readonly body?: unknown;
  readonly [key: string]: unknown;
}

/** The answer of `/v1/query` (a log query). */
export interface QueryBody {
  readonly rows: number;
  readonly stats: Readonly<Record<string, number>>;
  readonly records: readonly LogRecordJson[];
  readonly aggregate?: readonly { readonly key: readonly string[]; readonly count?: number; readonly value?: number }[];
}

/** One template version of `list_templates`. */
export interface TemplateJson {
  readonly template_id: number | string;
  readonly version: number;
  readonly rendered_template: string;
}

/** Who the console is: the tenant (empty = the default tenant) and the token (empty = none). */
export interface Credentials {
  readonly tenantHeader: string;
  readonly tenant: string;
  readonly token: string;
}

function headers(creds: Credentials, extra: Record<string, string>): Record<string, string> {
  const h: Record<string, string> = { ...extra };
  if (creds.tenant !== '') h[creds.tenantHeader] = creds.tenant;
  if (creds.token !== '') h['authorization'] = `Bearer ${creds.token}`;
  return h;
}

async function failureOf(res: Response): Promise<ApiFailure> {
  const text = await res.text();
  try {
    const parsed = JSON.parse(text) as { error?: ApiError };
    if (parsed.error && typeof parsed.error.kind === 'string')
      return { ok: false, status: res.status, error: parsed.error };
  } catch {
    // not our JSON: fall through
  }
  return {
    ok: false,
    status: res.status,
    error: { kind: `http_${res.status}`, message: text.trim() || res.statusText },
  };
}

function networkFailure(e: unknown): ApiFailure {
  const aborted = e instanceof DOMException && e.name === 'AbortError';
  return {
    ok: false,
    status: 0,
    error: { kind: aborted ? 'aborted' : 'network', message: aborted ? 'cancelled' : 'the querier did not answer' },
  };
}

/** `GET /v1/status` (a token is sent when entered; no tenant is needed). */
export async function fetchStatus(creds: Credentials): Promise<ApiResult<StatusBody>> {
  try {
    const res = await fetch('/v1/status', { headers: headers({ ...creds, tenant: '' }, {}) });
    if (!res.ok) return failureOf(res);
    return { ok: true, value: (await res.json()) as StatusBody };
  } catch (e) {
    return networkFailure(e);
  }
}

/** `POST /v1/query` with the statement as raw DSL text, so a 400 carries `position` into it. */
export async function runQuery(creds: Credentials, text: string, signal?: AbortSignal): Promise<ApiResult<QueryBody>> {
  try {
    const res = await fetch('/v1/query', {
      method: 'POST',
      headers: headers(creds, { 'content-type': 'text/plain; charset=utf-8' }),
      body: text,
      ...(signal ? { signal } : {}),
    });
    if (!res.ok) return failureOf(res);
    return { ok: true, value: (await res.json()) as QueryBody };
  } catch (e) {
    return networkFailure(e);
  }
}

/** `list_templates` over `POST /mcp` (one stateless JSON-RPC call, JSON answer). */
export async function listTemplates(creds: Credentials, signal?: AbortSignal): Promise<ApiResult<TemplateJson[]>> {
  try {
    const res = await fetch('/mcp', {
      method: 'POST',
      headers: headers(creds, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_templates', arguments: {} },
      }),
      ...(signal ? { signal } : {}),
    });
    const body = (await res.json().catch(() => null)) as {
      result?: { content?: { text?: string }[] };
      error?: { message: string; data?: { kind?: string } };
    } | null;
    if (body?.error) {
      const kind = body.error.data?.kind ?? 'mcp_error';
      return { ok: false, status: res.status, error: { ...body.error.data, kind, message: body.error.message } };
    }
    const text = body?.result?.content?.[0]?.text;
    if (!res.ok || text === undefined)
      return { ok: false, status: res.status, error: { kind: `http_${res.status}`, message: 'templates unavailable' } };
    return { ok: true, value: (JSON.parse(text) as { templates: TemplateJson[] }).templates };
  } catch (e) {
    return networkFailure(e);
  }
}

/** What a live tail may say besides records (its last line). */
export type TailEnd =
  | { readonly kind: 'end'; readonly detail: Readonly<Record<string, unknown>> }
  | { readonly kind: 'error'; readonly failure: ApiFailure };

/**
 * `POST /v1/tail?since=N`: calls `onRecord` for each record line until the stream ends; resolves with why it
 * ended (the server's last line, an error, or the caller's abort).
 */
export async function tail(
  creds: Credentials,
  predicate: string,
  sinceSecs: number,
  onRecord: (record: LogRecordJson) => void,
  signal: AbortSignal,
): Promise<TailEnd> {
  let res: Response;
  try {
    res = await fetch(`/v1/tail?since=${sinceSecs}`, {
      method: 'POST',
      headers: headers(creds, { 'content-type': 'text/plain; charset=utf-8' }),
      body: predicate,
      signal,
    });
  } catch (e) {
    return { kind: 'error', failure: networkFailure(e) };
  }
  if (!res.ok || res.body === null) return { kind: 'error', failure: await failureOf(res) };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { kind: 'end', detail: {} };
      pending += value;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() === '') continue;
        const obj = JSON.parse(line) as Record<string, unknown>;
        if ('time_unix_nano' in obj) onRecord(obj as LogRecordJson);
        else if ('error' in obj)
          return { kind: 'error', failure: { ok: false, status: 200, error: obj['error'] as ApiError } };
        else return { kind: 'end', detail: obj };
      }
    }
  } catch (e) {
    return { kind: 'error', failure: networkFailure(e) };
  }
}
