/**
 * @module parse-config.env.test
 * Env-only mode of parseConfig: SLUICE_<PATH> variables, coercion, unknown variables, issues named by variable.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { parseConfig } from './parse-config.js';

describe('parseConfig env-only mode', () => {
  test('with no variables, env-only mode yields the same defaults as an empty file', () => {
    const fromEnv = parseConfig({ env: {} });
    const fromFile = parseConfig({ fileText: '', env: {} });
    assert.ok(fromEnv.ok && fromFile.ok);
    assert.deepEqual(fromEnv.value, fromFile.value);
  });

  test('SLUICE_<PATH> variables set keys at every depth, coerced from strings', () => {
    const r = parseConfig({
      env: {
        SLUICE_QUERIER_LIMITS_MAX_CONCURRENT_QUERIES: '2',
        SLUICE_QUERIER_LIMITS_MEMORY_POOL_FRACTION: '0.5',
        SLUICE_RECEIVER_HTTP_ADDR: '127.0.0.1:0',
        SLUICE_RECEIVER_WAL_GROUP_COMMIT_MS: '10',
        SLUICE_RECEIVER_MINER_SIMILARITY_THRESHOLD: '0.9',
        SLUICE_STORAGE_BACKEND: 's3',
        SLUICE_STORAGE_S3_BUCKET: 'logs',
        SLUICE_STORAGE_S3_FORCE_PATH_STYLE: 'false',
        SLUICE_TENANCY_DEFAULT_TENANT: 'acme',
        SLUICE_QUERIER_MCP_ENABLED: 'FALSE',
        SLUICE_QUERIER_LOKI_ENABLED: 'false',
        SLUICE_QUERIER_LOKI_TENANT_HEADER: 'X-Grafana-Org',
        SLUICE_QUERIER_LOKI_SAMPLE_ROWS: '250',
        SLUICE_VERSION: '1',
        PATH: '/usr/bin',
      },
    });
    if (!r.ok) assert.fail(JSON.stringify(r.error));
    const c = r.value;
    assert.equal(c.querier.limits.maxConcurrentQueries, 2);
    assert.equal(c.querier.limits.memoryPoolFraction, 0.5);
    assert.equal(c.receiver.httpAddr, '127.0.0.1:0');
    assert.equal(c.receiver.wal.groupCommitMs, 10);
    assert.equal(c.receiver.miner.similarityThreshold, 0.9);
    assert.equal(c.storage.backend, 's3');
    assert.equal(c.storage.s3.bucket, 'logs');
    assert.equal(c.storage.s3.forcePathStyle, false);
    assert.equal(c.tenancy.defaultTenant, 'acme');
    assert.equal(c.querier.mcp.enabled, false);
    assert.deepEqual(c.querier.loki, { enabled: false, tenantHeader: 'X-Grafana-Org', sampleRows: 250 });
  });

  test('an empty variable means unset', () => {
    const r = parseConfig({ env: { SLUICE_QUERIER_LIMITS_MAX_ROWS: '', SLUICE_TENANCY_DEFAULT_TENANT: '' } });
    assert.ok(r.ok);
    assert.equal(r.value.querier.limits.maxRows, 10000);
    assert.equal(r.value.tenancy.defaultTenant, null);
  });

  test('values are literal: ${env:…} is not substituted in env-only mode', () => {
    const r = parseConfig({ env: { SLUICE_STORAGE_LOCAL_ROOT: '${env:HOME}/data', HOME: '/root' } });
    assert.ok(r.ok);
    assert.equal(r.value.storage.local.root, '${env:HOME}/data');
  });

  test('an unknown SLUICE_ variable is an issue naming it, with a suggestion', () => {
    const r = parseConfig({ env: { SLUICE_QUERIER_LIMTS_MAX_ROWS: '5' } });
    assert.ok(!r.ok);
    assert.deepEqual(r.error, [
      {
        path: 'SLUICE_QUERIER_LIMTS_MAX_ROWS',
        message: 'unknown variable: no configuration key has this name (did you mean SLUICE_QUERIER_LIMITS_MAX_ROWS?)',
      },
    ]);
  });

  test('a variable naming a section rather than a key is unknown', () => {
    const r = parseConfig({ env: { SLUICE_QUERIER_LIMITS: 'x' } });
    assert.ok(!r.ok);
    assert.equal(r.error[0]?.path, 'SLUICE_QUERIER_LIMITS');
  });

  test('tooling variables SLUICE_TEST_* and SLUICE_KILL_CYCLES are ignored; other variables are not consulted', () => {
    const r = parseConfig({ env: { SLUICE_TEST_CONCURRENCY: '2', SLUICE_KILL_CYCLES: '200', OTHER_S3_BUCKET: 'x' } });
    assert.ok(r.ok);
  });

  test('invalid values and rule violations are reported by variable name, all at once', () => {
    const r = parseConfig({
      env: {
        SLUICE_QUERIER_LIMITS_MAX_CONCURRENT_QUERIES: '0',
        SLUICE_QUERIER_LIMITS_DEFAULT_ROWS: '50',
        SLUICE_QUERIER_LIMITS_MAX_ROWS: '10',
        SLUICE_RECEIVER_ENABLED: 'yes',
        SLUICE_STORAGE_BACKEND: 's3',
        SLUICE_BOGUS: '1',
      },
    });
    assert.ok(!r.ok);
    assert.deepEqual(
      r.error.map((i) => i.path),
      [
        'SLUICE_BOGUS',
        'SLUICE_QUERIER_LIMITS_DEFAULT_ROWS',
        'SLUICE_QUERIER_LIMITS_MAX_CONCURRENT_QUERIES',
        'SLUICE_RECEIVER_ENABLED',
        'SLUICE_STORAGE_S3_BUCKET',
      ],
    );
    assert.match(
      r.error.find((i) => i.path === 'SLUICE_STORAGE_S3_BUCKET')?.message ?? '',
      /when SLUICE_STORAGE_BACKEND is s3/,
    );
    assert.match(r.error.find((i) => i.path === 'SLUICE_RECEIVER_ENABLED')?.message ?? '', /true or false, got "yes"/);
  });

  test('disabling every role is an issue phrased in variable names', () => {
    const r = parseConfig({
      env: { SLUICE_RECEIVER_ENABLED: 'false', SLUICE_QUERIER_ENABLED: 'false', SLUICE_COMPACTION_ENABLED: 'false' },
    });
    assert.ok(!r.ok);
    assert.equal(r.error.length, 1);
    assert.equal(r.error[0]?.path, '');
    assert.match(
      r.error[0]?.message ?? '',
      /SLUICE_RECEIVER_ENABLED, SLUICE_QUERIER_ENABLED, SLUICE_COMPACTION_ENABLED/,
    );
  });
});
