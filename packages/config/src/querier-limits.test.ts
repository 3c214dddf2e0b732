/**
 * @module querier-limits.test
 * Scenario RFC0058.8 (docs/design/query-governance.md): every querier.limits key set literally and through ${env:…}, unset
 * through an empty value, an unknown key rejected, and each validation rule rejecting its invalid value.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { parseConfig } from './parse-config.js';
import type { QueryLimitsConfig } from './sluice-config.js';

const KEYS: ReadonlyArray<readonly [snake: string, camel: keyof QueryLimitsConfig, value: number]> = [
  ['memory_pool_bytes', 'memoryPoolBytes', 67108864],
  ['memory_pool_fraction', 'memoryPoolFraction', 0.25],
  ['max_concurrent_queries', 'maxConcurrentQueries', 2],
  ['max_queued_queries', 'maxQueuedQueries', 0],
  ['queue_timeout_ms', 'queueTimeoutMs', 1],
  ['query_timeout_ms', 'queryTimeoutMs', 0],
  ['max_concurrent_queries_per_tenant', 'maxConcurrentQueriesPerTenant', 3],
  ['max_query_memory_bytes', 'maxQueryMemoryBytes', 1048576],
  ['light_query_permits', 'lightQueryPermits', 0],
  ['light_query_ms', 'lightQueryMs', 250],
  ['light_query_memory_bytes', 'lightQueryMemoryBytes', 4194304],
  ['max_live_tails', 'maxLiveTails', 2],
  ['max_tail_secs', 'maxTailSecs', 5],
  ['max_tail_buffer_bytes', 'maxTailBufferBytes', 8192],
  ['tail_poll_ms', 'tailPollMs', 100],
  ['max_listed_objects', 'maxListedObjects', 7],
  ['max_files', 'maxFiles', 3],
  ['default_rows', 'defaultRows', 10],
  ['max_rows', 'maxRows', 20],
  ['max_result_bytes', 'maxResultBytes', 1],
];

function limitsOf(body: string, env: Record<string, string> = {}): QueryLimitsConfig {
  const r = parseConfig({ fileText: `querier:\n  limits:\n${body}`, env });
  if (!r.ok) assert.fail(JSON.stringify(r.error));
  return r.value.querier.limits;
}

function rejection(body: string): { path: string; message: string } {
  const r = parseConfig({ fileText: `querier:\n  limits:\n${body}`, env: {} });
  if (r.ok) assert.fail(`accepted: ${body}`);
  assert.equal(r.error.length, 1, JSON.stringify(r.error));
  const [only] = r.error;
  if (only === undefined) assert.fail('no issue');
  return only;
}

describe('querier.limits validation', () => {
  test('RFC0058.8: each key set literally is carried into the resolved configuration', () => {
    const body = KEYS.map(([k, , v]) => `    ${k}: ${v}\n`).join('');
    const limits = limitsOf(body);
    for (const [, camel, v] of KEYS) assert.equal(limits[camel], v, camel);
  });

  test('RFC0058.8: each key set through ${env:VAR} is carried into the resolved configuration', () => {
    const env: Record<string, string> = {};
    const body = KEYS.map(([k, , v]) => {
      env[`LIM_${k.toUpperCase()}`] = String(v);
      return `    ${k}: \${env:LIM_${k.toUpperCase()}}\n`;
    }).join('');
    const limits = limitsOf(body, env);
    for (const [, camel, v] of KEYS) assert.equal(limits[camel], v, camel);
  });

  test('RFC0058.8: ${env:VAR:-default} uses the default when VAR is unset or empty, the value otherwise', () => {
    assert.equal(limitsOf('    max_files: ${env:F:-42}\n').maxFiles, 42);
    assert.equal(limitsOf('    max_files: ${env:F:-42}\n', { F: '' }).maxFiles, 42);
    assert.equal(limitsOf('    max_files: ${env:F:-42}\n', { F: '43' }).maxFiles, 43);
  });

  test('RFC0058.8: an empty value (including an unset ${env:X:-}) means "not set": the built-in default or null', () => {
    const limits = limitsOf(
      '    memory_pool_bytes: ${env:UNSET_QUERY_POOL_BYTES:-}\n    memory_pool_fraction:\n    max_rows: ""\n    max_concurrent_queries: ${env:Q:-}\n',
    );
    assert.equal(limits.memoryPoolBytes, null);
    assert.equal(limits.memoryPoolFraction, null);
    assert.equal(limits.maxRows, 10000);
    assert.equal(limits.maxConcurrentQueries, 4);
  });

  test('RFC0058.8: an unknown key under querier.limits is an issue', () => {
    assert.deepEqual(rejection('    max_objects: 5\n').path, 'querier.limits.max_objects');
  });

  test('RFC0058.8: max_concurrent_queries >= 1', () => {
    assert.match(rejection('    max_concurrent_queries: 0\n').message, />= 1/);
  });

  test('RFC0058.8: max_queued_queries >= 0 (0 is valid: no queueing)', () => {
    assert.equal(limitsOf('    max_queued_queries: 0\n').maxQueuedQueries, 0);
    assert.match(rejection('    max_queued_queries: -1\n').message, />= 0/);
  });

  test('RFC0058.8: queue_timeout_ms >= 1', () => {
    assert.match(rejection('    queue_timeout_ms: 0\n').message, />= 1/);
  });

  for (const key of ['max_listed_objects', 'max_files', 'default_rows', 'max_rows', 'max_result_bytes']) {
    test(`RFC0058.8: count/byte cap ${key} >= 1`, () => {
      const extra = key === 'max_rows' ? '    default_rows: 1\n' : '';
      const issue = rejection(`    ${key}: 0\n${extra}`);
      assert.equal(issue.path, `querier.limits.${key}`);
      assert.match(issue.message, />= 1/);
    });
  }

  test('RFC0058.8: default_rows <= max_rows (equal is valid)', () => {
    assert.equal(limitsOf('    default_rows: 20\n    max_rows: 20\n').defaultRows, 20);
    const issue = rejection('    default_rows: 21\n    max_rows: 20\n');
    assert.equal(issue.path, 'querier.limits.default_rows');
    assert.match(issue.message, /<= max_rows \(20\), got 21/);
  });

  test('RFC0058.8: default_rows above the default max_rows is rejected too', () => {
    assert.equal(rejection('    default_rows: 10001\n').path, 'querier.limits.default_rows');
  });

  test('RFC0058.8: memory_pool_bytes >= 32 MiB when set', () => {
    assert.equal(limitsOf('    memory_pool_bytes: 33554432\n').memoryPoolBytes, 33554432);
    const issue = rejection('    memory_pool_bytes: 33554431\n');
    assert.equal(issue.path, 'querier.limits.memory_pool_bytes');
    assert.match(issue.message, />= 33554432/);
  });

  test('RFC0058.8: memory_pool_fraction in (0, 1]', () => {
    assert.equal(limitsOf('    memory_pool_fraction: 1\n').memoryPoolFraction, 1);
    assert.match(rejection('    memory_pool_fraction: 0\n').message, /in \(0, 1\]/);
    assert.match(rejection('    memory_pool_fraction: 1.01\n').message, /in \(0, 1\]/);
  });

  test('enforcement defaults to enforce, takes observe literally and through SLUICE_QUERIER_LIMITS_ENFORCEMENT, and refuses anything else', () => {
    assert.equal(limitsOf('    max_files: 3\n').enforcement, 'enforce');
    assert.equal(limitsOf('    enforcement: observe\n').enforcement, 'observe');
    const env = parseConfig({ env: { SLUICE_QUERIER_LIMITS_ENFORCEMENT: 'observe' } });
    if (!env.ok) assert.fail(JSON.stringify(env.error));
    assert.equal(env.value.querier.limits.enforcement, 'observe');
    const issue = rejection('    enforcement: warn\n');
    assert.equal(issue.path, 'querier.limits.enforcement');
    assert.match(issue.message, /must be one of enforce, observe, got "warn"/);
  });

  test('RFC0058.8: non-numeric values are rejected with the key named', () => {
    const issue = rejection('    max_rows: lots\n');
    assert.equal(issue.path, 'querier.limits.max_rows');
    assert.match(issue.message, /must be an integer >= 1, got "lots"/);
  });
});
