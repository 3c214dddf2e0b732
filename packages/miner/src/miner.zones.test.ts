/**
 * @module miner.zones.test
 * The similarity zones, widening and its audit event, parse-failure reasons, structured and absent bodies, tenant
 * isolation and the shared id space.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { NO_TEMPLATE, PARAM_TYPE } from '@sluice/core';
import type { AnyValue } from '@sluice/core';
import { createMiner } from './miner.js';
import { record } from './test-support.js';

void describe('zones', () => {
  void test('a first line of a new shape creates a clean template with confidence 1', () => {
    const m = createMiner();
    const r = m.mineDetailed('t', record('disk full on /dev/sda1'));
    assert.equal(r.fields.templateId, 1n);
    assert.equal(r.fields.templateVersion, 1);
    assert.equal(r.fields.confidence, 1);
    assert.equal(r.fields.lossy, false);
    assert.equal(r.failure, null);
    assert.deepEqual(
      m.templates('t').map((t) => t.template),
      ['disk full on /dev/sda1'],
    );
  });

  void test('similar-but-different lines in different subtrees are never merged', () => {
    const m = createMiner();
    const a = m.mine('t', record('disk full on /dev/sda1'));
    const b = m.mine('t', record('user alice logged out'));
    const c = m.mine('t', record('disk full on /dev/sda1'));
    assert.notEqual(a.templateId, b.templateId);
    assert.equal(c.templateId, a.templateId);
    assert.deepEqual(
      m.templates('t').map((t) => t.template),
      ['disk full on /dev/sda1', 'user alice logged out'],
    );
  });

  void test('similarity ≥ threshold attaches and widens the mismatched positions to <*>', () => {
    const m = createMiner();
    const a = m.mine('t', record('disk full on /dev/sda1'));
    const b = m.mine('t', record('disk full on /dev/sdb2'));
    assert.equal(b.templateId, a.templateId);
    assert.equal(b.templateVersion, 2);
    assert.deepEqual(b.params, [{ typeTag: PARAM_TYPE.STR, value: '/dev/sdb2' }]);
    assert.equal(b.confidence, 1, '3/4 = 0.75 ≥ 0.7 clamps to 1');
    assert.equal(m.templates('t')[0]?.template, 'disk full on <*>');
  });

  void test('similarity in [floor, threshold) creates a new template and marks the line lossy', () => {
    const m = createMiner();
    const a = m.mine('t', record('job alpha started on node one'));
    const r = m.mineDetailed('t', record('job alpha started at noon today'));
    assert.notEqual(r.fields.templateId, a.templateId);
    assert.notEqual(r.fields.templateId, NO_TEMPLATE);
    assert.equal(r.fields.lossy, true);
    assert.equal(r.fields.confidence, 0.5 / 0.7);
    assert.equal(m.templateCount('t'), 2);
    const again = m.mine('t', record('job alpha started at noon today'));
    assert.equal(again.templateId, r.fields.templateId);
    assert.equal(again.lossy, false, 'an exact match of the new template is clean');
  });

  void test('similarity below the floor is a parse failure (NO_TEMPLATE, below_floor, body kept)', () => {
    const m = createMiner();
    m.mine('t', record('connection to db-1 refused by peer now'));
    const r = m.mineDetailed('t', record('connection to cache failed after retry again'));
    assert.equal(r.fields.templateId, NO_TEMPLATE);
    assert.equal(r.fields.templateVersion, 0);
    assert.equal(r.fields.lossy, true);
    assert.equal(r.failure, 'below_floor');
    assert.equal(r.fields.confidence, 2 / 7 / 0.7);
    assert.equal(m.stats().parseFailures.below_floor, 1);
  });

  void test('a widening that would leave only wildcards is refused as degenerate_widening', () => {
    const m = createMiner();
    m.mine('t', record('1 2 3 alpha'));
    const r = m.mineDetailed('t', record('4 5 6 beta'));
    assert.equal(r.failure, 'degenerate_widening');
    assert.equal(r.fields.templateId, NO_TEMPLATE);
    assert.equal(m.templates('t')[0]?.template, '<*> <*> <*> alpha');
  });

  void test('lines longer than maxLineTokens are parse failures (line_too_long)', () => {
    const m = createMiner({ maxLineTokens: 3 });
    assert.equal(m.mineDetailed('t', record('a b c')).failure, null);
    const r = m.mineDetailed('t', record('a b c d'));
    assert.equal(r.failure, 'line_too_long');
    assert.equal(r.fields.templateId, NO_TEMPLATE);
    assert.equal(m.stats().parseFailures.line_too_long, 1);
  });
});

void describe('params', () => {
  void test('masked tokens are typed params from the first line: IP, UUID, NUM, HEX, TS', () => {
    const m = createMiner();
    const r = m.mine(
      't',
      record(
        'peer 10.0.0.7 req 123e4567-e89b-12d3-a456-426614174000 took 12.5 ms id 0xdeadbeef at 2024-05-01T10:00:00Z',
      ),
    );
    assert.deepEqual(r.params, [
      { typeTag: PARAM_TYPE.IP, value: '10.0.0.7' },
      { typeTag: PARAM_TYPE.UUID, value: '123e4567-e89b-12d3-a456-426614174000' },
      { typeTag: PARAM_TYPE.NUM, value: '12.5' },
      { typeTag: PARAM_TYPE.HEX, value: '0xdeadbeef' },
      { typeTag: PARAM_TYPE.TS, value: '2024-05-01T10:00:00Z' },
    ]);
    assert.equal(m.templates('t')[0]?.template, 'peer <*> req <*> took <*> ms id <*> at <*>');
  });

  void test('a token over paramByteLimit becomes an OVERFLOW param, is <*> in the template, and makes the line lossy', () => {
    const m = createMiner({ paramByteLimit: 8 });
    const r = m.mine('t', record('upload blob abcdefghijk done'));
    assert.equal(r.lossy, true);
    assert.equal(r.params.length, 1);
    assert.equal(r.params[0]?.typeTag, PARAM_TYPE.OVERFLOW);
    assert.match(r.params[0]?.value ?? '', /^overflow:11:[0-9a-f]{16}$/);
    assert.equal(m.templates('t')[0]?.template, 'upload blob <*> done');
  });

  void test('non-canonical whitespace is mined but lossy, since separators are not stored', () => {
    const m = createMiner();
    const a = m.mine('t', record('cache  hit\tratio'));
    const b = m.mine('t', record('cache hit ratio'));
    assert.equal(a.templateId, b.templateId);
    assert.equal(a.lossy, true);
    assert.equal(b.lossy, false);
  });

  void test('a literal "<*>" token in a line is a STR param, never a literal in the template', () => {
    const m = createMiner();
    const r = m.mine('t', record('pattern <*> matched'));
    assert.deepEqual(r.params, [{ typeTag: PARAM_TYPE.STR, value: '<*>' }]);
  });
});

void describe('audit events', () => {
  void test('creation emits template_created (0 → 1) with the effective time and a 256-byte sample', () => {
    const m = createMiner();
    const long = `boot ${'x'.repeat(300)}`;
    m.mine('t', record(long, { timeUnixNano: 0n, observedTimeUnixNano: 42n }));
    const [e, ...rest] = m.drainAuditEvents();
    assert.equal(rest.length, 0);
    assert.deepEqual(e, {
      eventType: 'template_created',
      tenantId: 't',
      templateId: 1n,
      oldVersion: 0,
      newVersion: 1,
      oldTemplate: '',
      newTemplate: 'boot <*>',
      positionsWidened: [],
      triggeringLineSample: long.slice(0, 256),
      timestampUnixNano: 42n,
    });
    assert.deepEqual(m.drainAuditEvents(), [], 'drain clears');
  });

  void test('widening emits template_widened with old/new versions, texts and the widened positions', () => {
    const m = createMiner();
    m.mine('t', record('connection to db-1 timed out after 3 retries'));
    m.mine('t', record('connection to db-1 timed out after 4 retries'));
    m.drainAuditEvents();
    m.mine('t', record('connection to db-2 timed out after 5 retries', { timeUnixNano: 7n }));
    m.mine('t', record('connection to db-2 timed out later 5 retries', { timeUnixNano: 8n }));
    const events = m.drainAuditEvents();
    assert.deepEqual(
      events.map((e) => [
        e.eventType,
        e.oldVersion,
        e.newVersion,
        e.oldTemplate,
        e.newTemplate,
        e.positionsWidened,
        e.timestampUnixNano,
      ]),
      [
        [
          'template_widened',
          1,
          2,
          'connection to db-1 timed out after <*> retries',
          'connection to <*> timed out after <*> retries',
          [2],
          7n,
        ],
        [
          'template_widened',
          2,
          3,
          'connection to <*> timed out after <*> retries',
          'connection to <*> timed out <*> <*> retries',
          [5],
          8n,
        ],
      ],
    );
    assert.equal(events[0]?.triggeringLineSample, 'connection to db-2 timed out after 5 retries');
  });
});

void describe('structured and absent bodies', () => {
  const kv = (k: string): AnyValue => ({ kind: 'kvlist', values: [{ key: k, value: { kind: 'int', value: 1n } }] });

  void test('same (severity, scope) shares one template with confidence 1 and no params', () => {
    const m = createMiner();
    const a = m.mine('t', record(kv('a')));
    const b = m.mine('t', record(kv('b')));
    const c = m.mine('t', record({ kind: 'array', values: [] }));
    for (const r of [a, b, c]) {
      assert.equal(r.templateId, a.templateId);
      assert.equal(r.confidence, 1);
      assert.deepEqual(r.params, []);
      assert.equal(r.lossy, false);
    }
    const [e] = m.drainAuditEvents();
    assert.equal(e?.triggeringLineSample, '{"kvlistValue":{"values":[{"key":"a","value":{"intValue":"1"}}]}}');
  });

  void test('different severity or scope gives a different template; absent body has its own', () => {
    const m = createMiner();
    const ids = [
      m.mine('t', record(kv('a'))).templateId,
      m.mine('t', record(kv('a'), { severityNumber: 17 })).templateId,
      m.mine('t', record(kv('a'), { scope: 'db' })).templateId,
      m.mine('t', record(null)).templateId,
      m.mine('t', record({ kind: 'int', value: 5n })).templateId,
    ];
    assert.deepEqual(ids, [1n, 2n, 3n, 4n, 1n]);
    assert.equal(m.mine('t', record(null)).templateId, 4n);
    assert.deepEqual(
      m.templates('t').map((t) => t.kind),
      ['structured', 'structured', 'structured', 'absent'],
    );
  });
});

void describe('tenants and ids', () => {
  void test('the same text in two tenants gets different ids from one shared counter', () => {
    const m = createMiner();
    const a = m.mine('a', record('disk full on /dev/sda1'));
    const b = m.mine('b', record('disk full on /dev/sda1'));
    assert.equal(a.templateId, 1n);
    assert.equal(b.templateId, 2n);
    assert.equal(m.templateCount('a'), 1);
    assert.equal(m.templateCount('b'), 1);
    assert.equal(m.templateCount('c'), 0);
    assert.equal(m.templateCount(), 2, 'all tenants');
  });

  void test('template ids are 1..k in creation order across tenants and never reused (property)', () => {
    const line = fc.oneof(
      fc.constantFrom('disk full on /dev/sda1', 'disk full on /dev/sdb2', 'user bob logged out', 'a b c'),
      fc
        .array(fc.constantFrom('alpha', 'beta', 'gamma', 'x1', '42'), { minLength: 0, maxLength: 6 })
        .map((w) => w.join(' ')),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), line), { maxLength: 80 }), (seq) => {
        const m = createMiner();
        const owner = new Map<bigint, string>();
        for (const [tenant, l] of seq) {
          const r = m.mine(tenant, record(l));
          if (r.templateId === NO_TEMPLATE) continue;
          assert.equal(owner.get(r.templateId) ?? tenant, tenant, 'an id belongs to one tenant');
          owner.set(r.templateId, tenant);
        }
        const created = m.drainAuditEvents().filter((e) => e.eventType === 'template_created');
        assert.deepEqual(
          created.map((e) => e.templateId),
          created.map((_, i) => BigInt(i + 1)),
        );
      }),
      { numRuns: 200 },
    );
  });
});

void describe('options', () => {
  void test('out-of-range options are rejected all at once', () => {
    assert.throws(
      () => createMiner({ similarityThreshold: 0.5, similarityFloor: 0.6, prefixDepth: 9 }),
      /similarityFloor.*prefixDepth/,
    );
  });
});
