/**
 * @module drift.test
 * Drift statements and list_templates over real audit files.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TemplateAuditEvent } from '@sluice/core';
import type { ObjectStore } from '@sluice/storage';
import { createLocalObjectStore } from '@sluice/storage';
import { createMemoryPool } from '@sluice/limits';
import { listTemplates } from './templates.js';
import { BIG_TEMPLATE, H, T0, writeAuditFiles } from './testing/corpus.js';
import { LIMITS, run } from './testing/harness.js';

const D = 24n * H;
let dir = '';
let store: ObjectStore;

function ev(
  tenant: string,
  type: TemplateAuditEvent['eventType'],
  id: bigint,
  oldV: number,
  newV: number,
  ts: bigint,
  tpl: string,
): TemplateAuditEvent {
  return {
    eventType: type,
    tenantId: tenant,
    templateId: id,
    oldVersion: oldV,
    newVersion: newV,
    oldTemplate: '',
    newTemplate: tpl,
    positionsWidened: type === 'template_widened' ? [1] : [],
    triggeringLineSample: 'x',
    timestampUnixNano: ts,
  };
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engine-drift-'));
  store = createLocalObjectStore({ root: dir });
  await writeAuditFiles(store, [
    ev('acme', 'template_created', 1n, 0, 1, T0 - 10n * D, 'GET /a took 5'),
    ev('acme', 'template_widened', 1n, 1, 2, T0 - 9n * D, 'GET <*> took 5'),
    ev('acme', 'template_widened', 1n, 2, 3, T0 + H, 'GET <*> took <*>'),
    ev('acme', 'template_created', BIG_TEMPLATE, 0, 1, T0, 'big one'),
    ev('acme', 'template_widened', BIG_TEMPLATE, 1, 2, T0 + 2n * H, 'big <*>'),
    ev('acme', 'template_created', 2n, 0, 1, T0 + D, 'two'),
    ev('acme', 'template_widened', 2n, 1, 2, T0 + D + H, 'two <*>'),
    ev('acme', 'template_widened', 2n, 2, 3, T0 + D + 2n * H, 'two <*> <*>'),
    ev('acme', 'template_widened', 2n, 3, 4, T0 + 3n * D, 'late'),
    ev('other', 'template_widened', 9n, 1, 2, T0 + H, 'other tenant'),
  ]);
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('drift', () => {
  test('groups widenings in [from, to) by template, ordered by count desc then id', async () => {
    const r = await run(store, 'drift from 2026-06-01T00:00:00Z to 2026-06-03T00:00:00Z', { nowNs: T0 });
    assert.equal(r.outcome.status, 'ok');
    assert.ok(r.text.includes(`"template_id":${BIG_TEMPLATE}`));
    assert.deepEqual(
      r.json.rows.map((x: Record<string, unknown>) => [
        Number(x.template_id) > 2 ** 53 ? 'big' : String(x.template_id),
        x.widening_count,
        x.min_old_version,
        x.max_new_version,
      ]),
      [
        ['2', 2, 1, 3],
        ['1', 1, 2, 3],
        ['big', 1, 1, 2],
      ],
    );
    assert.ok(r.text.includes(`"first_seen_unix_nano":${T0 + D + H},"last_seen_unix_nano":${T0 + D + 2n * H}`));
    assert.deepEqual(Object.keys(r.json.stats).sort(), [
      'bytes_read',
      'row_groups_pruned',
      'row_groups_scanned',
      'rows_excluded',
    ]);
  });
  test('relative drift windows resolve against now; an empty result is rows: []', async () => {
    const r = await run(store, 'drift from -1d to now', { nowNs: T0 - 20n * D });
    assert.deepEqual(r.json.rows, []);
  });
  test('a drift result over max_result_bytes is refused', async () => {
    const r = await run(store, 'drift from 2026-05-01T00:00:00Z to 2026-07-01T00:00:00Z', {
      nowNs: T0,
      limits: { maxResultBytes: 100 },
    });
    assert.deepEqual(r.outcome.status === 'error' && r.outcome.error, { kind: 'query_result_limit', limitBytes: 100 });
    assert.equal(r.heldAfter, 0);
  });
});

describe('list_templates', () => {
  test('folds created and widened events into (id, version) entries sorted by id then version', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 26 });
    const reservation = pool.createQuery('lt');
    const out = await listTemplates({ store, tenant: 'acme', reservation, limits: LIMITS });
    assert.equal(out.status, 'ok');
    if (out.status !== 'ok') return;
    const text = out.body.toString('utf8');
    assert.equal(reservation.held, out.body.byteLength);
    out.budget.release();
    assert.equal(reservation.held, 0);
    const got = (
      JSON.parse(text) as { templates: { template_id: number; version: number; rendered_template: string }[] }
    ).templates;
    assert.deepEqual(
      got.map((t) => [t.version, t.rendered_template]),
      [
        [1, 'GET /a took 5'],
        [2, 'GET <*> took 5'],
        [3, 'GET <*> took <*>'],
        [1, 'two'],
        [2, 'two <*>'],
        [3, 'two <*> <*>'],
        [4, 'late'],
        [1, 'big one'],
        [2, 'big <*>'],
      ],
    );
    assert.ok(text.includes(`{"template_id":${BIG_TEMPLATE},"version":1,"rendered_template":"big one"}`));
    assert.ok(!text.includes('other tenant'));
    reservation.releaseAll();
  });
  test('a registry over max_result_bytes is refused with nothing held', async () => {
    const pool = createMemoryPool({ sizeBytes: 1 << 26 });
    const reservation = pool.createQuery('lt2');
    const out = await listTemplates({ store, tenant: 'acme', reservation, limits: { ...LIMITS, maxResultBytes: 50 } });
    assert.deepEqual(out.status === 'error' && out.error, { kind: 'query_result_limit', limitBytes: 50 });
    assert.equal(reservation.held, 0);
    reservation.releaseAll();
  });
});
