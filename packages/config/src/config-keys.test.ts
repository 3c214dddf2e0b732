/**
 * @module config-keys.test
 * The key reference: complete, unambiguous env names, defaults equal to what parsing an empty file yields, and
 * the README lists every key with its variable and default.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { configKeyPaths, configKeyReference, envVarName } from './config-keys.js';
import { parseConfig } from './parse-config.js';
import { renderKeyTable } from './key-table.js';

const CONTRACT_KEYS = [
  'storage.backend',
  'storage.local.root',
  'storage.s3.bucket',
  'storage.s3.endpoint',
  'storage.s3.region',
  'storage.s3.prefix',
  'storage.s3.access_key_id',
  'storage.s3.secret_access_key',
  'storage.s3.force_path_style',
  'receiver.enabled',
  'receiver.grpc_addr',
  'receiver.http_addr',
  'receiver.wal_dir',
  'receiver.wal.group_commit_ms',
  'receiver.wal.segment_bytes',
  'receiver.sink.flush_age_secs',
  'receiver.sink.flush_bytes',
  'receiver.sink.ceiling_bytes',
  'querier.enabled',
  'querier.http_addr',
  'querier.default_window_secs',
  'querier.mcp.enabled',
  'querier.loki.enabled',
  'querier.loki.tenant_header',
  'querier.loki.sample_rows',
  'querier.limits.memory_pool_bytes',
  'querier.limits.memory_pool_fraction',
  'querier.limits.max_concurrent_queries',
  'querier.limits.max_queued_queries',
  'querier.limits.queue_timeout_ms',
  'querier.limits.query_timeout_ms',
  'querier.limits.max_concurrent_queries_per_tenant',
  'querier.limits.light_query_permits',
  'querier.limits.light_query_ms',
  'querier.limits.light_query_memory_bytes',
  'querier.limits.max_query_memory_bytes',
  'querier.limits.max_listed_objects',
  'querier.limits.max_files',
  'querier.limits.default_rows',
  'querier.limits.max_rows',
  'querier.limits.max_result_bytes',
  'querier.limits.footer_cache_bytes',
  'querier.limits.max_open_files',
  'compaction.enabled',
  'compaction.interval_secs',
  'compaction.grace_secs',
  'tenancy.header',
  'tenancy.default_tenant',
  'telemetry.otlp_endpoint',
  'telemetry.prometheus',
];

describe('config key reference', () => {
  test('every contract key (the names operators, the chart and the tests use) exists under its exact name', () => {
    const paths = new Set(configKeyPaths());
    for (const k of CONTRACT_KEYS) assert.ok(paths.has(k), k);
  });

  test('env names follow SLUICE_ + path joined by _ in upper case, and no two keys share one', () => {
    assert.equal(envVarName('querier.limits.max_concurrent_queries'), 'SLUICE_QUERIER_LIMITS_MAX_CONCURRENT_QUERIES');
    assert.equal(envVarName('receiver.wal.group_commit_ms'), 'SLUICE_RECEIVER_WAL_GROUP_COMMIT_MS');
    const names = configKeyReference().map((k) => k.envName);
    assert.equal(new Set(names).size, names.length);
  });

  test('every key, set through its env variable to its default, parses to the same config as no variables', () => {
    const env: Record<string, string> = {};
    for (const k of configKeyReference()) if (k.defaultValue !== null) env[k.envName] = String(k.defaultValue);
    const fromDefaults = parseConfig({ env });
    const empty = parseConfig({ env: {} });
    if (!fromDefaults.ok) assert.fail(JSON.stringify(fromDefaults.error));
    assert.ok(empty.ok);
    assert.deepEqual(fromDefaults.value, empty.value);
  });

  test('every key has a description and a constraint', () => {
    for (const k of configKeyReference()) {
      assert.ok(k.description.length > 0, k.path);
      assert.ok(k.constraint.length > 0, k.path);
    }
  });

  test('the README key table is the generated one (regenerate with renderKeyTable when keys change)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    assert.ok(readme.includes(renderKeyTable()), 'README.md key table is stale');
  });
});
