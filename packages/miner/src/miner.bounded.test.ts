/**
 * @module miner.bounded.test
 * Bounded memory (packages/miner/README.md): 200k unique random lines against a 1000-template ceiling. The
 * template count stops at the ceiling, new shapes become `template_ceiling` parse failures (no merge, no eviction),
 * and the serialized state stays under the bound computed from the caps alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_TEMPLATE } from '@sluice/core';
import { createMiner } from './miner.js';
import { resolveMinerOptions } from './options.js';
import { maxSnapshotBytes } from './snapshot.js';
import { int, prng, record, word } from './test-support.js';

const LINES = 200_000;
const OPTIONS = resolveMinerOptions({ maxTemplatesPerTenant: 1000, maxLineTokens: 24, paramByteLimit: 16 });

void test('200k unique random lines never exceed the template ceiling and the snapshot stays under the cap-derived bound', () => {
  const miner = createMiner(OPTIONS);
  const rnd = prng(2026);
  let ceilingFailures = 0;
  let firstCeilingAt = -1;
  let saturatedIds: bigint[] = [];
  let saturatedBytes = 0;
  for (let i = 0; i < LINES; i++) {
    const n = int(rnd, 1, 28); // some lines exceed maxLineTokens
    const tokens: string[] = [];
    for (let k = 0; k < n; k++) tokens.push(word(rnd, 2, 18)); // some tokens exceed paramByteLimit
    const r = miner.mineDetailed('acme', record(tokens.join(' '), { severityNumber: int(rnd, 1, 4) }));
    if (r.failure === 'template_ceiling') {
      assert.equal(r.fields.templateId, NO_TEMPLATE);
      assert.equal(r.fields.lossy, true);
      ceilingFailures++;
      if (firstCeilingAt < 0) {
        firstCeilingAt = i;
        saturatedIds = miner.templates('acme').map((t) => t.templateId);
        saturatedBytes = miner.snapshot().byteLength;
      }
    }
    if (n > OPTIONS.maxLineTokens) assert.equal(r.failure, 'line_too_long');
  }
  assert.equal(miner.templateCount('acme'), OPTIONS.maxTemplatesPerTenant);
  assert.ok(firstCeilingAt > 0 && ceilingFailures > 0, 'the ceiling was reached');
  assert.deepEqual(
    miner.templates('acme').map((t) => t.templateId),
    saturatedIds,
    'no template evicted or added after saturation',
  );
  const stats = miner.stats();
  assert.equal(stats.records, LINES);
  assert.equal(stats.parseFailures.template_ceiling, ceilingFailures);
  assert.ok(stats.parseFailures.line_too_long > 0);

  const bytes = miner.snapshot().byteLength;
  // After saturation the state cannot grow: widening only turns literals into null; only counters gain digits.
  assert.ok(bytes <= saturatedBytes + 64, `state grew after saturation: ${saturatedBytes} → ${bytes} B`);
  const bound = maxSnapshotBytes(OPTIONS, 1);
  assert.ok(bytes <= bound, `snapshot ${bytes} B exceeds the cap-derived bound ${bound} B`);
  // The bound must be meaningful: an unbounded miner would have kept one template per unique line.
  const unboundedEstimate = LINES * 50;
  assert.ok(bound < unboundedEstimate, `bound ${bound} B is not below the unbounded estimate ${unboundedEstimate} B`);
});

void test('the structured-body templates count toward the same ceiling', () => {
  const miner = createMiner({ maxTemplatesPerTenant: 3 });
  const kv = { kind: 'kvlist', values: [] } as const;
  const r = [1, 2, 3, 4].map((sev) => miner.mineDetailed('t', record(kv, { severityNumber: sev })));
  assert.deepEqual(
    r.map((x) => x.fields.templateId),
    [1n, 2n, 3n, 0n],
  );
  assert.equal(r[3]?.failure, 'template_ceiling');
  assert.equal(miner.mine('t', record(kv, { severityNumber: 2 })).templateId, 2n, 'existing shapes still attach');
});
