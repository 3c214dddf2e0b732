/**
 * @module templates
 * The templates view: the tenant's mined templates (`list_templates`, their latest version) with their counts
 * in the range (`count by template_id`), most frequent first; a click filters by the template.
 */
import type { TemplateJson } from './api.js';
import { el } from './dom.js';

/** One row of the view. */
export interface TemplateRow {
  readonly id: string;
  readonly text: string;
  readonly count: number;
}

/** Joins counts and templates: every template id counted in the range, with its latest version's text. */
export function templateRows(
  counts: readonly { readonly key: readonly string[]; readonly count?: number }[],
  templates: readonly TemplateJson[] | null,
): TemplateRow[] {
  const latest = new Map<string, TemplateJson>();
  for (const t of templates ?? []) {
    const id = String(t.template_id);
    const seen = latest.get(id);
    if (seen === undefined || t.version > seen.version) latest.set(id, t);
  }
  return counts
    .map((c) => ({ id: c.key[0] ?? '', count: c.count ?? 0 }))
    .filter((c) => c.id !== '' && c.count > 0)
    .map((c) => ({ ...c, text: latest.get(c.id)?.rendered_template ?? '(template not listed)' }))
    .sort((a, b) => b.count - a.count || Number(a.id) - Number(b.id));
}

/** Renders the rows into `host`; a click calls `onPick(id)`. */
export function renderTemplates(host: HTMLElement, rows: readonly TemplateRow[], onPick: (id: string) => void): void {
  if (rows.length === 0) {
    host.replaceChildren(el('li', { class: 'empty' }, 'no templates in this range'));
    return;
  }
  host.replaceChildren(
    ...rows.map((r) =>
      el(
        'li',
        { class: 'template', 'data-testid': 'template', 'data-template-id': r.id },
        el(
          'button',
          { type: 'button', title: `filter: template_id == ${r.id}`, onclick: () => onPick(r.id) },
          el('span', { class: 'count' }, String(r.count)),
          el('span', { class: 'template-text' }, r.text),
          el('span', { class: 'template-id' }, `#${r.id}`),
        ),
      ),
    ),
  );
}
