/**
 * @module results
 * The result rows: newest first, one line each (time, severity, service, body); a click expands a row to the
 * whole record, and a click on an attribute, the service, a trace id or the template adds it as a filter.
 */
import type { KeyValue, LogRecordJson } from './api.js';
import { attributeFilter, stringLiteral } from './dsl.js';
import { el } from './dom.js';
import { bandOf } from './severity.js';

/** Nanoseconds since the epoch as ms (the record's exact integer may exceed 2^53; ms precision is what is shown). */
export function recordMs(record: LogRecordJson): number {
  const t = record.time_unix_nano;
  return typeof t === 'string' ? Number(t.slice(0, -6) || '0') : Math.floor(t / 1e6);
}

/** The body as one line of text. */
export function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body !== null && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (typeof b['line'] === 'string') return b['line'];
    if (typeof b['stringValue'] === 'string') return b['stringValue'];
  }
  return body === undefined ? '' : JSON.stringify(body);
}

function attr(list: readonly KeyValue[] | undefined, key: string): string {
  const v = list?.find((a) => a.key === key)?.value;
  return typeof v?.['stringValue'] === 'string' ? v['stringValue'] : '';
}

function show(value: Readonly<Record<string, unknown>>): string {
  const inner = Object.values(value)[0];
  return typeof inner === 'string' ? inner : JSON.stringify(inner);
}

/** Rows sorted newest first (stable for equal times). */
export function newestFirst(records: readonly LogRecordJson[]): LogRecordJson[] {
  return records
    .map((r, i) => ({ r, i, ms: recordMs(r) }))
    .sort((a, b) => b.ms - a.ms || a.i - b.i)
    .map((x) => x.r);
}

/** What a click on a part of a record asks for. */
export type AddFilter = (clause: string) => void;

function attributeTable(
  title: string,
  scope: 'attr' | 'resource',
  list: readonly KeyValue[] | undefined,
  add: AddFilter,
): HTMLElement | null {
  if (!list || list.length === 0) return null;
  return el(
    'div',
    { class: 'kv-block' },
    el('h4', {}, title),
    el(
      'dl',
      { class: 'kv' },
      ...list.flatMap((a) => {
        const clause = attributeFilter(scope, a.key, a.value);
        const dd = clause
          ? el(
              'dd',
              {},
              el(
                'button',
                {
                  class: 'filter-link',
                  type: 'button',
                  title: `add filter: ${clause}`,
                  'data-filter': clause,
                  onclick: () => add(clause),
                },
                show(a.value),
              ),
            )
          : el('dd', {}, show(a.value));
        return [el('dt', {}, a.key), dd];
      }),
    ),
  );
}

function fieldLine(name: string, value: string, clause: string | null, add: AddFilter): HTMLElement[] {
  const dd = clause
    ? el(
        'dd',
        {},
        el(
          'button',
          { class: 'filter-link', type: 'button', 'data-filter': clause, onclick: () => add(clause) },
          value,
        ),
      )
    : el('dd', {}, value);
  return [el('dt', {}, name), dd];
}

/** The expanded view of one record. */
function details(record: LogRecordJson, add: AddFilter): HTMLElement {
  const service = attr(record.resource_attributes, 'service.name');
  const fields: HTMLElement[] = [
    ...fieldLine('time', new Date(recordMs(record)).toISOString(), null, add),
    ...fieldLine('time_unix_nano', String(record.time_unix_nano), null, add),
    ...fieldLine(
      'severity',
      `${record.severity_number ?? 0} (${bandOf(record.severity_number).name})${record.severity_text ? ` ${record.severity_text}` : ''}`,
      null,
      add,
    ),
  ];
  if (service) fields.push(...fieldLine('service', service, `service == ${stringLiteral(service)}`, add));
  if (record.trace_id)
    fields.push(...fieldLine('trace_id', record.trace_id, `trace_id == ${stringLiteral(record.trace_id)}`, add));
  if (record.span_id)
    fields.push(...fieldLine('span_id', record.span_id, `span_id == ${stringLiteral(record.span_id)}`, add));
  if (record.scope_name)
    fields.push(
      ...fieldLine('scope', `${record.scope_name}${record.scope_version ? ` ${record.scope_version}` : ''}`, null, add),
    );
  if (record.template_id !== undefined)
    fields.push(
      ...fieldLine(
        'template',
        `${record.template_id} v${record.template_version ?? '?'}`,
        `template_id == ${record.template_id}`,
        add,
      ),
    );
  if (record.params !== undefined) fields.push(...fieldLine('params', JSON.stringify(record.params), null, add));
  return el(
    'div',
    { class: 'details', 'data-testid': 'row-details' },
    el('div', { class: 'kv-block' }, el('h4', {}, 'record'), el('dl', { class: 'kv' }, ...fields)),
    attributeTable('attributes', 'attr', record.attributes, add),
    attributeTable('resource', 'resource', record.resource_attributes, add),
    el('pre', { class: 'body-full' }, bodyText(record.body)),
  );
}

/** One row: its summary line, expandable. */
export function recordRow(record: LogRecordJson, add: AddFilter): HTMLLIElement {
  const band = bandOf(record.severity_number).name;
  const summary = el(
    'div',
    { class: 'row-line', role: 'button', tabindex: 0 },
    el('time', {}, new Date(recordMs(record)).toISOString().replace('T', ' ').slice(0, 23)),
    el('span', { class: `sev sev-${band}` }, band),
    el('span', { class: 'service' }, attr(record.resource_attributes, 'service.name')),
    el('span', { class: 'body' }, bodyText(record.body)),
  );
  const row = el('li', { class: 'row', 'data-testid': 'row' }, summary);
  const toggle = (): void => {
    const open = row.querySelector('.details');
    if (open) open.remove();
    else row.append(details(record, add));
    row.classList.toggle('open', !open);
  };
  summary.addEventListener('click', toggle);
  summary.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      toggle();
    }
  });
  return row;
}
