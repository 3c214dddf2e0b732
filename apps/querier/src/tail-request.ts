/**
 * @module tail-request
 * What a `POST /v1/tail` asks for (docs/design/query-governance.md, "Live tail"): the body is a `/v1/query` body
 * (raw DSL, `{"query": "<dsl>"}` or the structured form) whose statement is a predicate, optionally followed by
 * `project`; every other stage (`range`, `limit`, `sort`, `count`, `aggregate`, `render`) and drift statements are
 * refused `invalid_query`, naming the stage. The look-back is the `since` URL parameter: whole seconds before now
 * (`since=300`) or an RFC 3339 time (`since=2026-06-01T00:00:00Z`); absent = 0, only records that arrive later.
 */
import { parseQueryRequest, parseTimestamp, type Predicate } from '@sluice/query';
import { projectedKeys } from '@sluice/engine';

/** The URL parameter of the look-back. */
export const SINCE_PARAM = 'since';

/** A parsed tail request. */
export interface TailRequest {
  readonly predicate: Predicate;
  /** `project` keys; absent = whole records. */
  readonly projectKeys?: readonly string[];
  /** Records with an effective time at or after this are sent by the first poll. */
  readonly sinceNs: bigint;
}

const NS_PER_SEC = 1_000_000_000n;

/** Parses the body and the `since` parameter; `error` is the user-facing message of an `invalid_query`. */
export function parseTailRequest(
  contentType: string | undefined,
  bodyText: string,
  since: readonly string[],
  nowNs: bigint,
): { readonly ok: true; readonly value: TailRequest } | { readonly ok: false; readonly error: string } {
  const parsed = parseQueryRequest(contentType, bodyText);
  if (!parsed.ok) return { ok: false, error: parsed.error.message };
  const { query } = parsed.value;
  if (query.kind !== 'logs') return { ok: false, error: 'a live tail takes a log predicate, not a drift statement' };
  let keep: string[] | undefined;
  for (const stage of query.stages) {
    if (stage.kind === 'project') {
      keep = [...projectedKeys(stage.paths)];
      continue;
    }
    return {
      ok: false,
      error: `a live tail takes a predicate and at most a project stage, got a ${stage.kind} stage; the look-back is the ${SINCE_PARAM} parameter`,
    };
  }
  const from = sinceNs(since, nowNs);
  if (!from.ok) return from;
  return {
    ok: true,
    value: { predicate: query.predicate, sinceNs: from.value, ...(keep !== undefined ? { projectKeys: keep } : {}) },
  };
}

/** The look-back's start: `now` minus whole seconds, or an RFC 3339 time (never after now). */
function sinceNs(
  values: readonly string[],
  nowNs: bigint,
): { readonly ok: true; readonly value: bigint } | { readonly ok: false; readonly error: string } {
  if (values.length > 1) return { ok: false, error: `${SINCE_PARAM} must be given at most once` };
  const text = values[0]?.trim();
  if (text === undefined || text === '') return { ok: true, value: nowNs };
  if (/^[0-9]{1,10}$/.test(text)) return { ok: true, value: nowNs - BigInt(text) * NS_PER_SEC };
  const ts = parseTimestamp(text);
  if (!ts.ok)
    return {
      ok: false,
      error: `${SINCE_PARAM} must be whole seconds before now (e.g. 300) or an RFC 3339 time (e.g. 2026-06-01T00:00:00Z): ${ts.reason}`,
    };
  return { ok: true, value: ts.ns < nowNs ? ts.ns : nowNs };
}
