/**
 * @module governance
 * Makes the querier's governance visible to the person who meets it (docs/console.md): a 422 is shown with its
 * message (which names the limit and the remedy) and the "ask for less" advice; a 503 with the limit's name and a
 * retry button; the status strip shows the pool's use against its size and the admission queue.
 */
import type { ApiFailure, StatusBody } from './api.js';
import { el } from './dom.js';

/** Bytes in binary units, one decimal. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** The class of a failure, as the person should read it. */
export type FailureClass = 'ask_for_less' | 'busy' | 'auth' | 'bad_request' | 'other';

/** 422/413 ask for less; 503 retry; 401/403 credentials; 400 a fix to the request. */
export function classify(failure: ApiFailure): FailureClass {
  if (failure.status === 422 || failure.status === 413) return 'ask_for_less';
  if (failure.status === 503) return 'busy';
  if (failure.status === 401 || failure.status === 403) return 'auth';
  if (failure.status === 400) return 'bad_request';
  return 'other';
}

const ADVICE: Readonly<Record<FailureClass, string>> = {
  ask_for_less:
    'Ask for less: narrow the time range (drag across the histogram), add a filter, or lower the limit. Retrying the same query will fail the same way; an operator may raise the limit named here.',
  busy: 'The querier is busy: the same query may succeed in a moment.',
  auth: 'Check the token and the tenant (top right).',
  bad_request: 'Fix the request and run it again.',
  other: 'The querier could not answer this request.',
};

/** Renders `failure` into `host` (`retry` is offered for the busy class). */
export function renderFailure(host: HTMLElement, what: string, failure: ApiFailure, retry: () => void): void {
  const cls = classify(failure);
  const e = failure.error;
  host.hidden = false;
  host.className = `banner banner-${cls}`;
  const parts: (HTMLElement | null)[] = [
    el(
      'div',
      { class: 'banner-head' },
      el('strong', { 'data-testid': 'error-kind' }, `${failure.status || 'network'} ${e.kind}`),
      el('span', { class: 'banner-what' }, ` — ${what}`),
    ),
    el('p', { class: 'banner-message', 'data-testid': 'error-message' }, e.message),
    e.limit
      ? el('p', { class: 'banner-limit' }, 'limit: ', el('code', { 'data-testid': 'error-limit' }, e.limit))
      : null,
    el('p', { class: 'banner-advice', 'data-testid': 'error-advice' }, ADVICE[cls]),
    cls === 'busy'
      ? el('button', { type: 'button', class: 'retry', 'data-testid': 'retry', onclick: retry }, 'Retry')
      : null,
  ];
  host.replaceChildren(...parts.filter((p): p is HTMLElement => p !== null));
}

/** Hides the banner. */
export function clearFailure(host: HTMLElement): void {
  host.hidden = true;
  host.replaceChildren();
}

/** The status strip's text for a status answer. */
export function renderStatus(host: HTMLElement, status: StatusBody): void {
  const { pool, queue, tails } = status;
  const share = pool.limit_bytes > 0 ? pool.reserved_bytes / pool.limit_bytes : 0;
  const meter = el('span', {
    class: 'meter',
    title: `${(share * 100).toFixed(1)} % of the query memory pool reserved`,
  });
  const fill = el('span', { class: 'meter-fill' });
  fill.style.width = `${Math.min(100, share * 100).toFixed(1)}%`;
  meter.append(fill);
  host.replaceChildren(
    el(
      'span',
      { class: 'stat' },
      'pool ',
      meter,
      ' ',
      el('span', { 'data-testid': 'pool' }, `${formatBytes(pool.reserved_bytes)} / ${formatBytes(pool.limit_bytes)}`),
    ),
    el('span', { class: 'stat' }, 'queue ', el('span', { 'data-testid': 'queue-depth' }, String(queue.depth))),
    el('span', { class: 'stat' }, 'running ', el('span', { 'data-testid': 'in-flight' }, String(queue.in_flight))),
    el('span', { class: 'stat' }, 'tails ', String(tails.open)),
    el('span', { class: 'stat version' }, `v${status.version}`),
  );
}
