/**
 * @module arrow-accept
 * Content negotiation for Arrow answers on `/v1/query` (docs/design/query-engine.md, "Arrow results"). JSON stays
 * the answer to every request that does not prefer Arrow, byte for byte as before; there is no 406: a request that
 * accepts neither JSON nor Arrow gets JSON, as it always did.
 */
import { ARROW_STREAM } from '@sluice/engine';

/** One media range of an `Accept` header: its type (lower case, no parameters) and its quality. */
interface MediaRange {
  readonly type: string;
  readonly q: number;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(',').map((range) => {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    return { type, q: Number.isFinite(q) ? q : 0 };
  });
}

/** The quality a request gives `type`: from its most specific matching range (exact, then `major/*`, then `*\/*`). */
function qualityOf(ranges: readonly MediaRange[], type: string): number {
  const major = `${type.split('/')[0] ?? ''}/*`;
  for (const candidate of [type, major, '*/*']) {
    const hit = ranges.filter((r) => r.type === candidate);
    if (hit.length > 0) return Math.max(...hit.map((r) => r.q));
  }
  return 0;
}

/**
 * True when the request's `Accept` names `application/vnd.apache.arrow.stream` with a quality above 0 and at
 * least the quality it gives `application/json`. A wildcard never selects Arrow: a client that sends `*\/*` or
 * `application/json` (or no `Accept`) gets JSON.
 */
export function wantsArrow(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = mediaRanges(accept);
  const named = ranges.filter((r) => r.type === ARROW_STREAM);
  if (named.length === 0) return false;
  const arrow = Math.max(...named.map((r) => r.q));
  return arrow > 0 && arrow >= qualityOf(ranges, 'application/json');
}
