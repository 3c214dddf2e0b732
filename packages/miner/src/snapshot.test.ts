/**
 * @module snapshot.test
 * The durability contract: snapshot after N records, restore, feed N+1..M ⇒ the same MinedFields, audit events,
 * stats and final snapshot bytes as feeding 1..M straight through — for any sequence, across tenants.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AnyValue, LogRecord } from '@sluice/core';
import { createMiner, restoreMiner } from './miner.js';
import type { Miner } from './miner.js';
import type { MinerOptions } from './options.js';
import { corpus, record } from './test-support.js';

const CORPUS = corpus(30, 3).map((c) => c.line);
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'db-7', '42', '10.1.2.3', '0x1f', 'x'.repeat(20)];

const bodyArb: fc.Arbitrary<string | AnyValue | null> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...CORPUS) },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...WORDS), { maxLength: 7 }).map((w) => w.join(' ')) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<AnyValue | null>(null, { kind: 'kvlist', values: [] }, { kind: 'bool', value: true }),
  },
);
const recordArb: fc.Arbitrary<[string, LogRecord]> = fc
  .tuple(
    fc.constantFrom('acme', 'globex', 'initech'),
    fc.record({
      body: bodyArb,
      sev: fc.constantFrom(9, 17),
      scope: fc.constantFrom('app', 'db'),
      t: fc.bigInt(0n, 99n),
    }),
  )
  .map(([tenant, r]) => [tenant, record(r.body, { severityNumber: r.sev, scope: r.scope, timeUnixNano: r.t })]);

function feed(m: Miner, seq: readonly [string, LogRecord][]): unknown[] {
  return seq.map(([tenant, rec]) => m.mineDetailed(tenant, rec));
}

// Small caps so that ceilings, full nodes and overflow are all reached by short sequences.
const SMALL: Partial<MinerOptions> = {
  maxTemplatesPerTenant: 12,
  maxNodeChildren: 3,
  paramByteLimit: 12,
  maxLineTokens: 6,
};

void describe('snapshot/restore', () => {
  for (const [name, opts] of [
    ['default caps', {}],
    ['small caps', SMALL],
  ] as const) {
    void test(`restoring a snapshot taken after N records reproduces records N+1..M exactly (${name})`, () => {
      fc.assert(
        fc.property(fc.array(recordArb, { maxLength: 120 }), fc.nat(), (seq, cut) => {
          const n = seq.length === 0 ? 0 : cut % (seq.length + 1);
          const straight = createMiner(opts);
          feed(straight, seq.slice(0, n));
          straight.drainAuditEvents();
          const snap = straight.snapshot();
          const restored = restoreMiner(snap);
          assert.deepEqual(restored.snapshot(), snap, 'restore → snapshot is byte-identical');
          const a = feed(straight, seq.slice(n));
          const b = feed(restored, seq.slice(n));
          assert.deepEqual(b, a);
          assert.deepEqual(restored.drainAuditEvents(), straight.drainAuditEvents());
          assert.deepEqual(restored.stats(), straight.stats());
          assert.deepEqual(restored.snapshot(), straight.snapshot());
          for (const t of ['acme', 'globex', 'initech']) assert.deepEqual(restored.templates(t), straight.templates(t));
        }),
        { numRuns: 150 },
      );
    });
  }

  void test('two miners fed the same sequence produce byte-identical snapshots (no hidden ordering state)', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 80 }), (seq) => {
        const a = createMiner(SMALL);
        const b = createMiner(SMALL);
        feed(a, seq);
        feed(b, seq);
        assert.deepEqual(a.snapshot(), b.snapshot());
      }),
      { numRuns: 50 },
    );
  });

  void test('restore keeps the snapshot options and accepts overrides, except prefixDepth', () => {
    const m = createMiner({ maxTemplatesPerTenant: 5, prefixDepth: 3 });
    const snap = m.snapshot();
    assert.equal(restoreMiner(snap).options.maxTemplatesPerTenant, 5);
    assert.equal(restoreMiner(snap, { maxTemplatesPerTenant: 9 }).options.maxTemplatesPerTenant, 9);
    assert.throws(() => restoreMiner(snap, { prefixDepth: 2 }), /prefixDepth/);
  });

  void test('a malformed or tampered snapshot is rejected, never half-restored', () => {
    const m = createMiner();
    m.mine('a', record('disk full on /dev/sda1'));
    m.mine('b', record('disk full on /dev/sda1'));
    const good = new TextDecoder().decode(m.snapshot());
    const bad = [
      'not json',
      good.replace('"nextTemplateId":"3"', '"nextTemplateId":"2"'),
      good.replace('"sluice.miner.snapshot"', '"other"'),
      good.replace('"version":1', '"version":2'),
      good.replace(/\["2",1,"t"/, '["1",1,"t"'),
    ];
    for (const text of bad) {
      assert.notEqual(text, good);
      assert.throws(() => restoreMiner(new TextEncoder().encode(text)), /invalid miner snapshot/);
    }
  });
});
