/**
 * @module observe-then-enforce.test
 * Observe, then enforce (docs/design/query-governance.md, "Observe, then enforce"), at the querier level over real
 * query workers and a real local store: the same over-ceiling query is refused (or, for max_rows, clamped) in
 * enforce mode and served in observe mode, with one warning naming its fingerprint, the limit, the figure and the
 * limit's value, and one `ceilingCrossed` count per ceiling — for max_result_bytes, max_rows and
 * max_query_memory_bytes. The pool itself is never only observed. `answered` (sluice.query.response.size) sees every
 * answered query on every surface, with its real size.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResultCeiling } from '@sluice/limits';
import { createLogger } from '@sluice/telemetry';
import type { QueryMetricKind, QueryObserver } from './query-service.js';
import {
  WINDOW,
  createStoreFixture,
  harness,
  query,
  rpc,
  type Harness,
  type HarnessOptions,
} from './testing/query-harness.js';
import { nonCacheHeldBytes } from './worker-footer-cache.js';

let fixture: { readonly dir: string; remove(): Promise<void> };
before(async () => {
  fixture = await createStoreFixture(['acme'], 300);
});
after(async () => {
  await fixture.remove();
});

/** What the observer and the log saw. */
interface Seen {
  readonly crossed: ResultCeiling[];
  readonly answered: { kind: QueryMetricKind; bytes: number }[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly warnings: { msg: string; fields: any }[];
}

function observed(o: Omit<HarnessOptions, 'dir' | 'maxConcurrent' | 'queryTimeoutMs'>): { h: Harness; seen: Seen } {
  const seen: Seen = { crossed: [], answered: [], warnings: [] };
  const observer: QueryObserver = {
    finished: () => {},
    answered: (kind, bytes) => seen.answered.push({ kind, bytes }),
    ceilingCrossed: (limit) => seen.crossed.push(limit),
  };
  const log = createLogger('test', {
    write: (line) => {
      const entry = JSON.parse(line) as { level: string; msg: string; fields: unknown };
      if (entry.level === 'warn') seen.warnings.push(entry);
    },
  });
  const h = harness({ dir: fixture.dir, maxConcurrent: 1, queryTimeoutMs: 0, observer, log, ...o });
  return { h, seen };
}

const ALL = `true | ${WINDOW} | limit 300`;
const FINGERPRINT = /^[0-9a-f]{16}$/;

describe('observe mode serves what enforce mode refuses, and counts it', () => {
  test('max_result_bytes: 422 query_result_limit in enforce mode; served whole in observe mode, warned and counted', async () => {
    const enforce = observed({ limits: { maxResultBytes: 2000 } });
    try {
      const refused = await query(enforce.h, 'acme', { query: ALL });
      assert.equal(refused.status, 422);
      assert.equal(refused.json.error.kind, 'query_result_limit');
      assert.deepEqual(enforce.seen.crossed, []);
    } finally {
      await enforce.h.close();
    }
    const observe = observed({ limits: { maxResultBytes: 2000, enforcement: 'observe' } });
    try {
      const served = await query(observe.h, 'acme', { query: ALL });
      assert.equal(served.status, 200);
      assert.equal(served.json.records.length, 300);
      assert.equal(served.json.rows, 300);
      assert.deepEqual(observe.seen.crossed, ['max_result_bytes']);
      const [warning] = observe.seen.warnings;
      assert.equal(observe.seen.warnings.length, 1);
      assert.match(warning?.msg ?? '', /observe/);
      assert.match(warning?.fields.fingerprint, FINGERPRINT);
      assert.equal(warning?.fields.limit, 'querier.limits.max_result_bytes');
      assert.equal(warning?.fields.ceiling, 2000);
      assert.ok(warning?.fields.value > 2000, 'the figure is the result size, past the ceiling');
      assert.equal(warning?.fields.tenant, 'acme');
      // The same statement has the same fingerprint on the next run.
      await query(observe.h, 'acme', { query: ALL });
      assert.equal(observe.seen.warnings[1]?.fields.fingerprint, warning?.fields.fingerprint);
    } finally {
      await observe.h.close();
    }
  });

  test('max_rows: a larger limit is clamped in enforce mode; served in full in observe mode, warned and counted', async () => {
    const limits = { defaultRows: 10, maxRows: 50 };
    const asked = `true | ${WINDOW} | limit 200`;
    const enforce = observed({ limits });
    try {
      const clamped = await query(enforce.h, 'acme', { query: asked });
      assert.equal(clamped.status, 200);
      assert.equal(clamped.json.records.length, 50);
      assert.deepEqual(enforce.seen.crossed, []);
      assert.deepEqual(enforce.seen.warnings, []);
    } finally {
      await enforce.h.close();
    }
    const observe = observed({ limits: { ...limits, enforcement: 'observe' } });
    try {
      const served = await query(observe.h, 'acme', { query: asked });
      assert.equal(served.status, 200);
      assert.equal(served.json.records.length, 200);
      assert.deepEqual(observe.seen.crossed, ['max_rows']);
      const fields = observe.seen.warnings[0]?.fields;
      assert.equal(fields.limit, 'querier.limits.max_rows');
      assert.equal(fields.value, 200);
      assert.equal(fields.ceiling, 50);
      assert.match(fields.fingerprint, FINGERPRINT);
      // Under the ceiling nothing is reported.
      const small = await query(observe.h, 'acme', { query: `true | ${WINDOW} | limit 50` });
      assert.equal(small.json.records.length, 50);
      assert.deepEqual(observe.seen.crossed, ['max_rows']);
    } finally {
      await observe.h.close();
    }
  });

  test('max_query_memory_bytes: 422 query_memory_limit in enforce mode; served in observe mode with the peak counted', async () => {
    const ceiling = 16 * 1024;
    const enforce = observed({ maxQueryBytes: ceiling });
    try {
      const refused = await query(enforce.h, 'acme', { query: ALL });
      assert.equal(refused.status, 422);
      assert.equal(refused.json.error.kind, 'query_memory_limit');
      assert.equal(refused.json.error.limit, 'querier.limits.max_query_memory_bytes');
    } finally {
      await enforce.h.close();
    }
    // Observe mode as start-querier wires it: the reservation's ceiling is what the pool leaves the lane, and the
    // resolved max_query_memory_bytes is only compared with the peak.
    const observe = observed({
      maxQueryBytes: 64 << 20,
      observedQueryBytes: ceiling,
      limits: { enforcement: 'observe' },
    });
    try {
      const served = await query(observe.h, 'acme', { query: ALL });
      assert.equal(served.status, 200);
      assert.equal(served.json.records.length, 300);
      assert.deepEqual(observe.seen.crossed, ['max_query_memory_bytes']);
      const fields = observe.seen.warnings[0]?.fields;
      assert.equal(fields.limit, 'querier.limits.max_query_memory_bytes');
      assert.equal(fields.ceiling, ceiling);
      assert.ok(fields.value > ceiling, `the peak ${fields.value} is past the ceiling`);
      assert.equal(nonCacheHeldBytes(observe.h.pool), 0, 'everything went back to the pool');
    } finally {
      await observe.h.close();
    }
  });

  test('observe mode does not relax the pool: a query the pool cannot hold is still refused, and not counted', async () => {
    const observe = observed({
      poolBytes: 16 * 1024,
      maxQueryBytes: 16 * 1024,
      observedQueryBytes: 8 * 1024,
      limits: { enforcement: 'observe' },
    });
    try {
      const refused = await query(observe.h, 'acme', { query: ALL });
      assert.equal(refused.status, 422);
      assert.equal(refused.json.error.kind, 'query_memory_limit');
      assert.equal(refused.json.error.limit, 'querier.limits.memory_pool_bytes');
      assert.deepEqual(observe.seen.crossed, []);
      assert.deepEqual(observe.seen.answered, [], 'a refusal is not an answer');
    } finally {
      await observe.h.close();
    }
  });
});

describe('sluice.query.response.size: every answered query, on every surface, with its real size', () => {
  test('JSON answers of three sizes and an MCP tool call are each one point of their size; a refusal is none', async () => {
    const { h, seen } = observed({});
    try {
      const sizes: number[] = [];
      for (const q of [`true | ${WINDOW} | limit 1`, ALL, `true | ${WINDOW} | count`]) {
        const res = await h.app.request('/v1/query', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'X-Sluice-Tenant': 'acme' },
          body: JSON.stringify({ query: q }),
        });
        assert.equal(res.status, 200);
        sizes.push((await res.arrayBuffer()).byteLength);
      }
      const mcp = await rpc(h, 'acme', {
        id: 1,
        method: 'tools/call',
        params: { name: 'query_logs', arguments: { query: `true | ${WINDOW}`, limit: 5 } },
      });
      assert.equal(mcp.status, 200);
      assert.deepEqual(
        seen.answered.slice(0, 3),
        sizes.map((bytes) => ({ kind: 'logs', bytes })),
      );
      assert.equal(seen.answered.length, 4, 'the MCP call is counted too');
      assert.equal(seen.answered[3]?.kind, 'logs');
      assert.ok((seen.answered[3]?.bytes ?? 0) > 0);
      const refused = await query(h, 'acme', { query: 'not a query (' });
      assert.equal(refused.status, 400);
      assert.equal(seen.answered.length, 4, 'a refusal is not an answer');
    } finally {
      await h.close();
    }
  });
});
