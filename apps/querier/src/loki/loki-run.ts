/**
 * @module loki-run
 * Runs the IR a Loki request translates to through the query service — the same admission gate, pool, caps and
 * deadline as `POST /v1/query` — and reads the result body back with the exact JSON parser (u64 times stay
 * exact). The body's reservation and the admission permit are not released when the body is parsed: every
 * `done()` of a request is held until its Loki response has been sent (docs/grafana.md, "Governance").
 */
import { parseJsonExact, type JsonValue, type Result } from '@sluice/core';
import type { LogQuery } from '@sluice/query';
import type { QueryService } from '../query-service.js';
import type { LokiFailure } from './loki-error.js';

/** A JSON object as parsed (null prototype). */
export type JsonObject = { readonly [key: string]: JsonValue };

/** What every query of one Loki request shares. */
export interface LokiRunContext {
  readonly service: QueryService;
  readonly tenant: string;
  readonly signal: AbortSignal;
  /** The releases of every query run so far; called once the response has been sent. */
  readonly holds: (() => void)[];
  /** Wall clock in ns (the default `end` of a request). */
  readonly nowNs: () => bigint;
}

async function runJob(
  ctx: LokiRunContext,
  job: Parameters<QueryService['run']>[1],
): Promise<Result<JsonObject, LokiFailure>> {
  const outcome = await ctx.service.run(ctx.tenant, job, { signal: ctx.signal });
  if (outcome.status === 'cancelled') return { ok: false, error: { kind: 'cancelled' } };
  if (outcome.status === 'error') return { ok: false, error: { kind: 'query', error: outcome.error } };
  ctx.holds.push(() => outcome.done());
  const parsed = parseJsonExact(new TextDecoder().decode(outcome.body), { mode: 'json_parse' });
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
    // Our own engine wrote the body: not JSON is a bug, answered as internal without its text.
    return { ok: false, error: { kind: 'query', error: { kind: 'internal', message: 'internal error' } } };
  }
  return { ok: true, value: parsed.value as JsonObject };
}

/** Runs one log query (records or an aggregation). */
export function runLokiQuery(ctx: LokiRunContext, query: LogQuery): Promise<Result<JsonObject, LokiFailure>> {
  return runJob(ctx, { kind: 'query', query });
}

/** The tenant's template registry (`{"templates":[{template_id, version, rendered_template}]}`). */
export function runTemplateList(ctx: LokiRunContext): Promise<Result<JsonObject, LokiFailure>> {
  return runJob(ctx, { kind: 'list_templates' });
}

/** The `stats` object of a result, with numbers (bigints above 2^53 rounded: statistics only). */
export function statsOf(body: JsonObject): Record<string, number> {
  const stats = body['stats'];
  const out: Record<string, number> = {};
  if (typeof stats !== 'object' || stats === null || Array.isArray(stats)) return out;
  for (const [k, v] of Object.entries(stats as JsonObject)) {
    if (typeof v === 'number' || typeof v === 'bigint') out[k] = Number(v);
  }
  return out;
}
