/**
 * @module miner.corpus.test
 * A corpus of ten printf-style templates, 200 instances each, interleaved: the miner must converge to exactly those
 * ten templates, every line must re-render from (its template version, its params), and once stable every line's
 * params must be exactly its printf values, typed, in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MinedFields, TemplateAuditEvent } from '@sluice/core';
import { createMiner } from './miner.js';
import { renderTemplate } from './template.js';
import { CORPUS_TEMPLATES, corpus, record } from './test-support.js';

const PER_TEMPLATE = 200;

function registryOf(events: readonly TemplateAuditEvent[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of events) m.set(`${e.templateId}:${e.newVersion}`, e.newTemplate);
  return m;
}

void test('printf corpus converges to exactly the expected templates with <*> at the placeholders', () => {
  const miner = createMiner();
  for (const c of corpus(PER_TEMPLATE)) miner.mine('acme', record(c.line));
  assert.equal(miner.templateCount('acme'), CORPUS_TEMPLATES.length);
  const got = miner
    .templates('acme')
    .map((t) => t.template)
    .sort();
  const want = CORPUS_TEMPLATES.map((t) => t.expected).sort();
  assert.deepEqual(got, want);
  assert.deepEqual(miner.stats().parseFailures, {
    below_floor: 0,
    line_too_long: 0,
    template_ceiling: 0,
    degenerate_widening: 0,
  });
});

void test('every corpus line re-renders exactly from its own template version and params, and is not lossy', () => {
  const miner = createMiner();
  const lines = corpus(PER_TEMPLATE, 7);
  const results: MinedFields[] = lines.map((c) => miner.mine('acme', record(c.line)));
  const registry = registryOf(miner.drainAuditEvents());
  lines.forEach((c, i) => {
    const r = results[i] as MinedFields;
    const tpl = registry.get(`${r.templateId}:${r.templateVersion}`);
    if (tpl === undefined) return assert.fail(`no audit event for ${r.templateId}:${r.templateVersion}`);
    assert.equal(renderTemplate(tpl, r.params), c.line);
    assert.equal(r.lossy, false);
    assert.ok(r.confidence > 0 && r.confidence <= 1);
  });
});

void test('once the templates are stable, each line yields exactly its printf values, typed, in order', () => {
  const miner = createMiner();
  const lines = corpus(PER_TEMPLATE, 11);
  for (const c of lines) miner.mine('acme', record(c.line));
  miner.drainAuditEvents();
  const versions = new Map(miner.templates('acme').map((t) => [t.templateId, t.version]));
  const idOfTemplate = new Map<number, bigint>();
  for (const c of lines) {
    const r = miner.mine('acme', record(c.line));
    assert.deepEqual(r.params, c.params, c.line);
    assert.equal(r.templateVersion, versions.get(r.templateId));
    assert.equal(r.confidence, 1);
    const seen = idOfTemplate.get(c.templateIndex);
    if (seen === undefined) idOfTemplate.set(c.templateIndex, r.templateId);
    else assert.equal(r.templateId, seen, 'one template per printf pattern');
  }
  assert.equal(new Set(idOfTemplate.values()).size, CORPUS_TEMPLATES.length);
  assert.deepEqual(miner.drainAuditEvents(), [], 'a stable corpus emits no more events');
});
