/**
 * @module parse-config.file.test
 * File mode of parseConfig: defaults, strictness, all-at-once reporting, YAML errors, cross-field rules.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { parseConfig } from './parse-config.js';
import type { ConfigIssue } from './config-issue.js';
import type { SluiceConfig } from './sluice-config.js';

function ok(fileText: string, env: Record<string, string> = {}): SluiceConfig {
  const r = parseConfig({ fileText, env });
  if (!r.ok) assert.fail(`expected a valid config, got:\n${r.error.map((i) => `${i.path}: ${i.message}`).join('\n')}`);
  return r.value;
}

function issues(fileText: string, env: Record<string, string> = {}): ConfigIssue[] {
  const r = parseConfig({ fileText, env });
  if (r.ok) assert.fail('expected issues, got a valid config');
  return r.error;
}

function issueAt(list: readonly ConfigIssue[], path: string): ConfigIssue {
  const hit = list.find((i) => i.path === path);
  if (hit === undefined) assert.fail(`no issue at ${path}; got ${JSON.stringify(list)}`);
  return hit;
}

describe('parseConfig file mode', () => {
  test('an empty file yields every documented default', () => {
    const c = ok('');
    assert.equal(c.version, 1);
    assert.deepEqual(c.server, { shutdownTimeoutSecs: 30 });
    assert.deepEqual(c.storage, {
      backend: 'local',
      local: { root: './data', requestTimeoutMs: 30000 },
      s3: {
        bucket: null,
        endpoint: null,
        region: 'us-east-1',
        prefix: '',
        accessKeyId: null,
        secretAccessKey: null,
        forcePathStyle: true,
        connectTimeoutMs: 3000,
        requestTimeoutMs: 10000,
        maxAttempts: 3,
        retryBaseMs: 100,
        retryMaxMs: 2000,
      },
    });
    assert.deepEqual(c.receiver, {
      enabled: true,
      grpcAddr: '0.0.0.0:4317',
      httpAddr: '0.0.0.0:4318',
      maxHttpConnections: null,
      maxGrpcConnections: null,
      walDir: './wal',
      wal: { groupCommitMs: 100, segmentBytes: 134217728, maxBacklogBytes: 4294967296, fenceRetryMs: 1000 },
      sink: { flushAgeSecs: 300, flushIntervalMs: 1000, flushBytes: 134217728, ceilingBytes: null },
      limits: {
        maxRequestBytes: 4194304,
        maxDecompressedBytes: 16777216,
        maxInflightBytes: 268435456,
        minFreeDiskPercent: 10,
      },
      miner: {
        similarityThreshold: 0.7,
        prefixDepth: 2,
        maxNodeChildren: 100,
        paramByteLimit: 256,
        maxTemplatesPerTenant: 20000,
        maxLineTokens: 512,
      },
    });
    assert.deepEqual(c.querier, {
      enabled: true,
      httpAddr: '0.0.0.0:4319',
      maxConnections: null,
      defaultWindowSecs: 3600,
      onCorruptObject: 'fail',
      mcp: { enabled: true },
      ui: { enabled: true },
      loki: { enabled: true, tenantHeader: 'X-Scope-OrgID', sampleRows: 1000 },
      limits: {
        memoryPoolBytes: null,
        memoryPoolFraction: null,
        maxConcurrentQueries: 4,
        maxQueuedQueries: 16,
        queueTimeoutMs: 10000,
        queryTimeoutMs: 30000,
        maxConcurrentQueriesPerTenant: null,
        maxQueryMemoryBytes: null,
        queryParallelism: null,
        lightQueryPermits: 2,
        lightQueryMs: 4000,
        lightQueryMemoryBytes: null,
        maxLiveTails: 10,
        maxTailSecs: 3600,
        maxTailBufferBytes: 1048576,
        tailPollMs: 1000,
        maxListedObjects: 100000,
        maxFiles: 10000,
        defaultRows: 1000,
        maxRows: 10000,
        maxResultBytes: 67108864,
        footerCacheBytes: 33554432,
        maxOpenFiles: 256,
        enforcement: 'enforce',
      },
    });
    assert.deepEqual(c.compaction, {
      enabled: true,
      intervalSecs: 300,
      graceSecs: 900,
      openHourMinFileAgeSecs: 10,
      memoryBudgetBytes: 67108864,
    });
    assert.deepEqual(c.tenancy, { header: 'X-Sluice-Tenant', defaultTenant: null });
    assert.deepEqual(c.auth, { enabled: false, tokensFile: null, tokens: null, protectMetrics: true });
    assert.deepEqual(c.telemetry, { otlpEndpoint: null, prometheus: true, serviceName: 'sluice' });
  });

  test('a file of comments only and a file of empty sections are all defaults too', () => {
    assert.deepEqual(ok('# nothing here\n'), ok(''));
    assert.deepEqual(ok('storage:\nreceiver:\n  wal:\nquerier:\n  limits:\n'), ok(''));
  });

  test('the result is deeply frozen', () => {
    const c = ok('');
    assert.ok(Object.isFrozen(c));
    assert.ok(Object.isFrozen(c.querier.limits));
    assert.ok(Object.isFrozen(c.storage.s3));
  });

  test('the documented example (flow mappings, snake_case keys) parses into camelCase fields', () => {
    const c = ok(`
storage:
  backend: local
  local: { root: /var/lib/sluice }
receiver:
  enabled: true
  grpc_addr: 127.0.0.1:0
  http_addr: 127.0.0.1:0
  wal_dir: /var/lib/sluice/wal
  wal: { group_commit_ms: 5, segment_bytes: 1048576, max_backlog_bytes: 2097152 }
  sink: { flush_age_secs: 2, flush_bytes: 65536, ceiling_bytes: 1048576 }
  limits: { max_request_bytes: 1024, max_decompressed_bytes: 4096, min_free_disk_percent: 2.5 }
  miner: { similarity_threshold: 0.5, prefix_depth: 0, max_templates_per_tenant: 10 }
querier:
  http_addr: "[::1]:4319"
  default_window_secs: 60
  mcp: { enabled: false }
compaction: { enabled: false, interval_secs: 1, grace_secs: 2 }
tenancy: { header: X-Org, default_tenant: acme }
telemetry: { otlp_endpoint: "http://collector:4318", prometheus: false, service_name: sluice-a }
`);
    assert.equal(c.storage.local.root, '/var/lib/sluice');
    assert.equal(c.receiver.grpcAddr, '127.0.0.1:0');
    assert.equal(c.receiver.walDir, '/var/lib/sluice/wal');
    assert.deepEqual(c.receiver.wal, {
      groupCommitMs: 5,
      segmentBytes: 1048576,
      maxBacklogBytes: 2097152,
      fenceRetryMs: 1000,
    });
    assert.deepEqual(c.receiver.sink, {
      flushAgeSecs: 2,
      flushIntervalMs: 1000,
      flushBytes: 65536,
      ceilingBytes: 1048576,
    });
    assert.deepEqual(c.receiver.limits, {
      maxRequestBytes: 1024,
      maxDecompressedBytes: 4096,
      maxInflightBytes: 268435456,
      minFreeDiskPercent: 2.5,
    });
    assert.equal(c.receiver.miner.similarityThreshold, 0.5);
    assert.equal(c.receiver.miner.prefixDepth, 0);
    assert.equal(c.receiver.miner.maxTemplatesPerTenant, 10);
    assert.equal(c.querier.httpAddr, '[::1]:4319');
    assert.equal(c.querier.mcp.enabled, false);
    assert.deepEqual(c.compaction, {
      enabled: false,
      intervalSecs: 1,
      graceSecs: 2,
      openHourMinFileAgeSecs: 10,
      memoryBudgetBytes: 67108864,
    });
    assert.deepEqual(c.tenancy, { header: 'X-Org', defaultTenant: 'acme' });
    assert.deepEqual(c.telemetry, {
      otlpEndpoint: 'http://collector:4318',
      prometheus: false,
      serviceName: 'sluice-a',
    });
  });

  test('an unknown key at depth is an issue naming its full path, with a suggestion', () => {
    const list = issues('receiver:\n  wal:\n    group_comit_ms: 5\n');
    assert.deepEqual(list, [
      { path: 'receiver.wal.group_comit_ms', message: 'unknown key (did you mean "group_commit_ms"?)' },
    ]);
  });

  test('an unknown key is reported even when its value is empty', () => {
    assert.equal(
      issueAt(issues('querier:\n  limits:\n    max_rowz:\n'), 'querier.limits.max_rowz').message.startsWith(
        'unknown key',
      ),
      true,
    );
  });

  test('an unknown section and a camelCase key are issues; the camelCase one points at the snake_case key', () => {
    const list = issues('recevier: {}\nquerier:\n  limits:\n    maxConcurrentQueries: 2\n');
    assert.match(issueAt(list, 'recevier').message, /unknown key \(did you mean "receiver"\?\)/);
    assert.match(issueAt(list, 'querier.limits.maxConcurrentQueries').message, /did you mean "max_concurrent_queries"/);
  });

  test('a key at the wrong depth is pointed at its real path', () => {
    const list = issues('receiver:\n  group_commit_ms: 5\n');
    assert.match(issueAt(list, 'receiver.group_commit_ms').message, /did you mean receiver\.wal\.group_commit_ms\?/);
  });

  test('an unknown key with no close match gets no misleading suggestion', () => {
    assert.deepEqual(issues('foo: 1\n'), [{ path: 'foo', message: 'unknown key' }]);
  });

  test('a section given as a scalar is an issue at the section', () => {
    assert.match(issueAt(issues('receiver:\n  wal: 5\n'), 'receiver.wal').message, /must be a mapping of keys, got 5/);
  });

  test('every problem is reported in one result: unknown key, missing env ref, invalid value, default_rows > max_rows', () => {
    const list = issues(
      [
        'receiver:',
        '  wal:',
        '    group_comit_ms: 5',
        'storage:',
        '  backend: s3',
        '  s3:',
        '    bucket: ${env:SLUICE_TEST_MISSING_BUCKET}',
        'querier:',
        '  limits:',
        '    max_concurrent_queries: 0',
        '    default_rows: 500',
        '    max_rows: 100',
        '',
      ].join('\n'),
    );
    assert.deepEqual(
      list.map((i) => i.path),
      [
        'querier.limits.default_rows',
        'querier.limits.max_concurrent_queries',
        'receiver.wal.group_comit_ms',
        'storage.s3.bucket',
      ],
    );
    assert.match(issueAt(list, 'storage.s3.bucket').message, /SLUICE_TEST_MISSING_BUCKET is not set/);
    assert.match(issueAt(list, 'querier.limits.default_rows').message, /must be <= max_rows \(100\), got 500/);
    assert.match(issueAt(list, 'querier.limits.max_concurrent_queries').message, /integer >= 1, got 0/);
  });

  test('receiver.limits.min_free_disk_percent is a percentage from 0 (the guard off) to 99', () => {
    assert.equal(ok('receiver:\n  limits:\n    min_free_disk_percent: 0\n').receiver.limits.minFreeDiskPercent, 0);
    for (const bad of ['100', '-1', 'ten']) {
      const list = issues(`receiver:\n  limits:\n    min_free_disk_percent: ${bad}\n`);
      assert.ok(issueAt(list, 'receiver.limits.min_free_disk_percent'), bad);
    }
  });

  test('a missing env reference is reported once, not again as "bucket required"', () => {
    const list = issues('storage:\n  backend: s3\n  s3: { bucket: "${env:NOPE}" }\n');
    assert.equal(list.length, 1);
    assert.match(list[0]?.message ?? '', /environment variable NOPE is not set/);
  });

  test('invalid YAML gives a line and column and no parser internals', () => {
    const list = issues('receiver:\n  wal:\n group_commit_ms: 5\n    x: [1, 2\n');
    assert.ok(list.length >= 1);
    for (const i of list) {
      assert.equal(i.path, '');
      assert.match(i.message, /^invalid YAML at line \d+(, column \d+)?: /);
      assert.doesNotMatch(i.message, /YAMLParseError|parseAllDocuments|\^|\n/);
    }
  });

  test('a duplicate key and a second document are YAML issues', () => {
    assert.match(issues('version: 1\nversion: 1\n')[0]?.message ?? '', /line 2.*duplicate key/);
    assert.match(issues('version: 1\n---\nversion: 1\n')[0]?.message ?? '', /more than one YAML document/);
  });

  test('an undefined alias is a clear YAML issue', () => {
    assert.match(issues('receiver:\n  wal_dir: *nowhere\n')[0]?.message ?? '', /^invalid YAML: an alias/);
  });

  test('a top level that is not a mapping is an issue', () => {
    assert.match(
      issues('- storage\n')[0]?.message ?? '',
      /must be a YAML mapping of sections, got a list|must be a YAML mapping/,
    );
    assert.match(issues('just text\n')[0]?.message ?? '', /must be a YAML mapping/);
  });

  test('storage.backend s3 without a bucket is an issue at storage.s3.bucket; with one it is valid', () => {
    assert.deepEqual(issues('storage: { backend: s3 }\n'), [
      { path: 'storage.s3.bucket', message: 'is required when storage.backend is s3' },
    ]);
    const c = ok(
      'storage:\n  backend: s3\n  s3: { bucket: logs, endpoint: "http://127.0.0.1:4569", force_path_style: false }\n',
    );
    assert.equal(c.storage.backend, 's3');
    assert.equal(c.storage.s3.bucket, 'logs');
    assert.equal(c.storage.s3.endpoint, 'http://127.0.0.1:4569');
    assert.equal(c.storage.s3.forcePathStyle, false);
  });

  test('an unknown storage backend and a non-URL endpoint are issues', () => {
    const list = issues('storage: { backend: gcs, s3: { endpoint: "not a url" } }\n');
    assert.match(issueAt(list, 'storage.backend').message, /must be one of local, s3, got "gcs"/);
    assert.match(issueAt(list, 'storage.s3.endpoint').message, /http:\/\/ or https:\/\/ URL/);
  });

  test('S3 credentials taken from env references are carried, and never echoed in issues', () => {
    const c = ok('storage:\n  s3:\n    access_key_id: ${env:AK}\n    secret_access_key: ${env:SK}\n', {
      AK: 'AKIA1',
      SK: 's3cr3t',
    });
    assert.equal(c.storage.s3.accessKeyId, 'AKIA1');
    assert.equal(c.storage.s3.secretAccessKey, 's3cr3t');
    const list = issues('storage:\n  s3:\n    secret_access_key: { nested: s3cr3t }\n');
    assert.doesNotMatch(JSON.stringify(list), /s3cr3t/);
  });

  test('tenancy.default_tenant must satisfy the tenant grammar', () => {
    assert.equal(ok('tenancy: { default_tenant: acme-prod_1.eu }\n').tenancy.defaultTenant, 'acme-prod_1.eu');
    for (const bad of ['a:b', 'a#b', 'a/b', '"a b"', 'x'.repeat(129), '"é"']) {
      const list = issues(`tenancy:\n  default_tenant: ${bad}\n`);
      assert.equal(list.length, 1, bad);
      assert.equal(list[0]?.path, 'tenancy.default_tenant');
    }
    assert.match(
      issues(`tenancy: { default_tenant: ${'x'.repeat(129)} }\n`)[0]?.message ?? '',
      /longer than 128 bytes/,
    );
  });

  test('an empty default_tenant means unset (header required)', () => {
    assert.equal(ok('tenancy:\n  default_tenant: ""\n').tenancy.defaultTenant, null);
    assert.equal(ok('tenancy:\n  default_tenant: ${env:T:-}\n').tenancy.defaultTenant, null);
  });

  test('tenancy.header must be an HTTP header name', () => {
    assert.match(issueAt(issues('tenancy: { header: "X Tenant" }\n'), 'tenancy.header').message, /HTTP header name/);
  });

  test('listen addresses must be host:port; port 0 is allowed', () => {
    assert.equal(ok('receiver: { http_addr: "127.0.0.1:0" }\n').receiver.httpAddr, '127.0.0.1:0');
    for (const bad of ['4318', '"0.0.0.0:"', '"0.0.0.0:65536"', '":4318"', '"host:port"', '"::1:4318"']) {
      const list = issues(`receiver:\n  grpc_addr: ${bad}\n`);
      assert.match(issueAt(list, 'receiver.grpc_addr').message, /must be host:port/, bad);
    }
  });

  test('miner bounds are enforced', () => {
    const list = issues(
      'receiver:\n  miner:\n    similarity_threshold: 0\n    prefix_depth: 9\n    max_node_children: 0\n    param_byte_limit: 1025\n    max_templates_per_tenant: 0\n    max_line_tokens: 0\n',
    );
    assert.deepEqual(
      list.map((i) => i.path),
      [
        'receiver.miner.max_line_tokens',
        'receiver.miner.max_node_children',
        'receiver.miner.max_templates_per_tenant',
        'receiver.miner.param_byte_limit',
        'receiver.miner.prefix_depth',
        'receiver.miner.similarity_threshold',
      ],
    );
    assert.equal(ok('receiver: { miner: { similarity_threshold: 1 } }\n').receiver.miner.similarityThreshold, 1);
  });

  test('a type error names the key and the expected type', () => {
    const list = issues(
      'receiver:\n  enabled: yes\n  wal: { segment_bytes: 12.5 }\ncompaction: { interval_secs: soon }\n',
    );
    assert.match(issueAt(list, 'receiver.enabled').message, /must be true or false, got "yes"/);
    assert.match(issueAt(list, 'receiver.wal.segment_bytes').message, /must be an integer >= 1, got 12.5/);
    assert.match(issueAt(list, 'compaction.interval_secs').message, /must be an integer >= 1, got "soon"/);
  });

  test('quoted numbers and booleans are coerced like unquoted ones', () => {
    const c = ok('receiver:\n  enabled: "false"\n  wal: { group_commit_ms: "7" }\ncompaction: { enabled: TRUE }\n');
    assert.equal(c.receiver.enabled, false);
    assert.equal(c.receiver.wal.groupCommitMs, 7);
  });

  test('version: 1 (and a newer minor) is accepted; another major is an issue', () => {
    assert.equal(ok('version: 1\n').version, 1);
    assert.equal(ok('version: "1.3"\n').version, 1);
    assert.match(issueAt(issues('version: 2\n'), 'version').message, /unsupported configuration version 2/);
    assert.match(issueAt(issues('version: latest\n'), 'version').message, /must be a version number/);
  });

  test('a configuration with every role disabled is an issue', () => {
    const list = issues('receiver: { enabled: false }\nquerier: { enabled: false }\ncompaction: { enabled: false }\n');
    assert.deepEqual(list, [
      {
        path: '',
        message:
          'no role is enabled: set at least one of receiver.enabled, querier.enabled, compaction.enabled to true',
      },
    ]);
    assert.equal(ok('receiver: { enabled: false }\nquerier: { enabled: false }\n').compaction.enabled, true);
  });

  test('file mode ignores SLUICE_* configuration variables but reports them, unless the file references them', () => {
    const list = issues('querier: { limits: { max_rows: 5000 } }\n', { SLUICE_QUERIER_LIMITS_MAX_ROWS: '6000' });
    assert.equal(list.length, 1);
    assert.equal(list[0]?.path, 'SLUICE_QUERIER_LIMITS_MAX_ROWS');
    assert.match(list[0]?.message ?? '', /never both/);
    const c = ok('querier: { limits: { max_rows: "${env:SLUICE_QUERIER_LIMITS_MAX_ROWS}" } }\n', {
      SLUICE_QUERIER_LIMITS_MAX_ROWS: '6000',
    });
    assert.equal(c.querier.limits.maxRows, 6000);
  });

  test('file mode ignores unknown and tooling SLUICE_* variables', () => {
    assert.deepEqual(ok('', { SLUICE_TEST_CONCURRENCY: '2', SLUICE_KILL_CYCLES: '5', SLUICE_WHATEVER: 'x' }), ok(''));
  });
});
