/**
 * @module derive-pool-size.test
 * Scenario RFC0058.4 (docs/design/query-governance.md): every fixture case of the scenario exactly, the hybrid hosts,
 * ancestors with a tighter `memory.high`, missing and malformed files, and the startup errors. Every case runs
 * over a temporary tree that mimics `/proc` and `/sys/fs/cgroup`; none reads the host's real files.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { derivePoolSize, MIN_POOL_BYTES, FALLBACK_POOL_BYTES } from './derive-pool-size.js';
import type { PoolRoles, PoolSizeError, PoolSizing } from './derive-pool-size.js';
import { cgroupFixture, meminfo } from './testing/cgroup-fixture.js';
import type { CgroupFixture } from './testing/cgroup-fixture.js';

const BOTH: PoolRoles = { receiver: true, compaction: false, querier: true };
const ALONE: PoolRoles = { receiver: false, compaction: false, querier: true };
const WITH_COMPACTION: PoolRoles = { receiver: false, compaction: true, querier: true };
const GiB = 1073741824;
const MEM_4G = meminfo(4 * 1024 * 1024); // MemTotal 4 GiB
const V1_SENTINEL = '9223372036854771712';

const fixtures: CgroupFixture[] = [];
after(() => fixtures.forEach((f) => f.remove()));

function fixture(files: Record<string, string>): CgroupFixture {
  const f = cgroupFixture(files);
  fixtures.push(f);
  return f;
}

function size(
  files: Record<string, string>,
  roles: PoolRoles,
  extra: { explicitBytes?: number; fraction?: number } = {},
): PoolSizing {
  const r = derivePoolSize({ ...extra, roles, source: fixture(files).source });
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
}

function failure(
  files: Record<string, string>,
  roles: PoolRoles,
  extra: { explicitBytes?: number; fraction?: number },
): PoolSizeError {
  const r = derivePoolSize({ ...extra, roles, source: fixture(files).source });
  if (r.ok) assert.fail(`accepted: ${r.value.description}`);
  return r.error;
}

/** A unified (v2-only) host: `0::<path>` and the hierarchy at the mount root. */
function v2(path: string, files: Record<string, string>, mem = MEM_4G): Record<string, string> {
  const out: Record<string, string> = {
    'proc/self/cgroup': `0::${path}\n`,
    'proc/meminfo': mem,
    'sys/fs/cgroup/cgroup.controllers': 'cpu memory pids\n',
  };
  for (const [rel, text] of Object.entries(files)) out[`sys/fs/cgroup/${rel}`] = text;
  return out;
}

/** A v1-only host. */
function v1(path: string, limit: string, mem = MEM_4G): Record<string, string> {
  return {
    'proc/self/cgroup': `5:cpu,cpuacct:${path}\n4:memory:${path}\n1:name=systemd:${path}\n`,
    'proc/meminfo': mem,
    [`sys/fs/cgroup/memory${path}/memory.limit_in_bytes`]: `${limit}\n`,
  };
}

/** A hybrid host like the one these tests were written on: v1 controllers plus `0::/` with v2 at `unified/`. */
function hybrid(
  path: string,
  v1Limit: string | undefined,
  v2Files: Record<string, string>,
  mem = MEM_4G,
): Record<string, string> {
  const out: Record<string, string> = {
    'proc/self/cgroup': `9:name=systemd:/\n4:memory:${path}\n3:cpuset:/\n1:cpu:/\n0::/\n`,
    'proc/meminfo': mem,
    'sys/fs/cgroup/unified/cgroup.controllers': '\n',
  };
  if (v1Limit !== undefined) out[`sys/fs/cgroup/memory${path}/memory.limit_in_bytes`] = `${v1Limit}\n`;
  for (const [rel, text] of Object.entries(v2Files)) out[`sys/fs/cgroup/unified/${rel}`] = text;
  return out;
}

const UNIT = '/system.slice/sluice.service';

describe('RFC0058.4: the default pool derives from the real memory limit', () => {
  test('RFC0058.4: v2, memory.max = 1610612736 at the leaf, querier with receiver → 805306368', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), BOTH);
    assert.equal(s.sizeBytes, 805306368);
    assert.equal(s.source, 'cgroup_v2');
    assert.equal(s.share, 0.5);
    assert.equal(s.limitBytes, 1610612736);
    assert.match(s.limitFile ?? '', /system\.slice\/sluice\.service\/memory\.max$/);
  });

  test('RFC0058.4: the same, querier only → 1207959552', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), ALONE);
    assert.equal(s.sizeBytes, 1207959552);
    assert.equal(s.share, 0.75);
  });

  test('RFC0058.4: compaction in the process also selects the 0.50 share', () => {
    assert.equal(
      size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), WITH_COMPACTION).sizeBytes,
      805306368,
    );
  });

  test('RFC0058.4: v2, a tighter memory.max on an ancestor than on the leaf → the ancestor governs', () => {
    const s = size(
      v2(UNIT, { 'system.slice/memory.max': `${GiB}\n`, [`${UNIT.slice(1)}/memory.max`]: `${2 * GiB}\n` }),
      BOTH,
    );
    assert.equal(s.sizeBytes, GiB / 2);
    assert.match(s.limitFile ?? '', /cgroup\/system\.slice\/memory\.max$/);
  });

  test('RFC0058.4: v2, memory.high below memory.max → memory.high governs', () => {
    const s = size(
      v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n', [`${UNIT.slice(1)}/memory.high`]: `${GiB}\n` }),
      BOTH,
    );
    assert.equal(s.sizeBytes, GiB / 2);
    assert.match(s.limitFile ?? '', /memory\.high$/);
  });

  test('v2, an ancestor with a tighter memory.high than the leaf memory.max → the ancestor memory.high governs', () => {
    const s = size(
      v2(UNIT, {
        'system.slice/memory.high': '805306368\n',
        'system.slice/memory.max': 'max\n',
        [`${UNIT.slice(1)}/memory.max`]: '1610612736\n',
      }),
      ALONE,
    );
    assert.equal(s.sizeBytes, 603979776);
    assert.match(s.limitFile ?? '', /system\.slice\/memory\.high$/);
  });

  test('RFC0058.4: v2, max everywhere → MemTotal × share', () => {
    const s = size(
      v2(UNIT, {
        'memory.max': 'max\n',
        'system.slice/memory.max': 'max\n',
        [`${UNIT.slice(1)}/memory.max`]: 'max\n',
        [`${UNIT.slice(1)}/memory.high`]: 'max\n',
      }),
      BOTH,
    );
    assert.equal(s.sizeBytes, 2 * GiB);
    assert.equal(s.source, 'meminfo');
    assert.equal(s.limitBytes, 4 * GiB);
  });

  test('RFC0058.4: v2, a limit above MemTotal → MemTotal × share', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: `${64 * GiB}\n` }), BOTH);
    assert.equal(s.sizeBytes, 2 * GiB);
    assert.equal(s.source, 'meminfo');
  });

  test('RFC0058.4: v1, memory.limit_in_bytes = 1073741824 → 1 GiB × share', () => {
    const s = size(v1('/docker/abc', '1073741824'), BOTH);
    assert.equal(s.sizeBytes, GiB / 2);
    assert.equal(s.source, 'cgroup_v1');
    assert.equal(size(v1('/docker/abc', '1073741824'), ALONE).sizeBytes, (GiB * 3) / 4);
  });

  test('RFC0058.4: v1, the unlimited sentinel → MemTotal × share', () => {
    const s = size(v1('/docker/abc', V1_SENTINEL), BOTH);
    assert.equal(s.sizeBytes, 2 * GiB);
    assert.equal(s.source, 'meminfo');
    // 64 KiB pages round i64::MAX differently; still unlimited.
    assert.equal(size(v1('/docker/abc', '9223372036854710272'), BOTH).source, 'meminfo');
  });

  test('RFC0058.4: an explicit memory_pool_bytes → exactly that value, whatever the fixtures say', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), BOTH, { explicitBytes: 100_000_007 });
    assert.equal(s.sizeBytes, 100_000_007);
    assert.equal(s.source, 'explicit');
    assert.equal(s.share, null);
    assert.deepEqual(s.warnings, []);
    assert.equal(size({}, ALONE, { explicitBytes: 100_000_007 }).sizeBytes, 100_000_007);
  });

  test('an explicit size above the detected limit is allowed, with a warning naming both figures', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), BOTH, { explicitBytes: 2 * GiB });
    assert.equal(s.sizeBytes, 2 * GiB);
    assert.equal(s.warnings.length, 1);
    assert.match(s.warnings[0] ?? '', /memory_pool_bytes = 2147483648 exceeds the detected memory limit 1610612736/);
  });

  test('RFC0058.4: an explicit memory_pool_fraction = 0.6 → 0.6 × the derived limit', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), BOTH, { fraction: 0.6 });
    assert.equal(s.sizeBytes, 966367641); // 1610612736 × 600000 / 1000000 = 966367641.6, rounded down
    assert.equal(s.share, 0.6);
    assert.equal(size(v2('/', { 'memory.max': `${GiB}\n` }), BOTH, { fraction: 1 }).sizeBytes, GiB);
  });

  test('RFC0058.4: memory.max = 1000000007 at share 0.5 → 500000003, rounded down', () => {
    assert.equal(size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1000000007\n' }), BOTH).sizeBytes, 500000003);
  });

  test('RFC0058.4: a resolved size below 32 MiB is a startup error naming the key and the value', () => {
    const e = failure(v2('/', { 'memory.max': `${60 * 1048576}\n` }), BOTH, {});
    assert.equal(e.key, 'querier.limits.memory_pool_bytes');
    assert.equal(e.reason, 'below_minimum');
    assert.equal(e.value, 30 * 1048576);
    assert.match(e.message, /31457280 bytes .* below the 33554432-byte \(32 MiB\) minimum/);
    const explicit = failure({}, BOTH, { explicitBytes: MIN_POOL_BYTES - 1 });
    assert.equal(explicit.key, 'querier.limits.memory_pool_bytes');
    assert.equal(explicit.value, MIN_POOL_BYTES - 1);
    assert.equal(size({}, BOTH, { explicitBytes: MIN_POOL_BYTES }).sizeBytes, MIN_POOL_BYTES);
    const viaFraction = failure(v2('/', { 'memory.max': `${GiB}\n` }), BOTH, { fraction: 0.01 });
    assert.equal(viaFraction.key, 'querier.limits.memory_pool_fraction');
    assert.equal(viaFraction.value, 0.01);
  });

  test('RFC0058.4: a fraction outside (0, 1] is a startup error naming the key and the value', () => {
    for (const fraction of [0, -0.1, 1.0000001, 2, Number.NaN, Number.POSITIVE_INFINITY]) {
      const e = failure(v2('/', { 'memory.max': `${GiB}\n` }), BOTH, { fraction });
      assert.equal(e.key, 'querier.limits.memory_pool_fraction', String(fraction));
      assert.equal(e.reason, 'out_of_range');
      assert.ok(Object.is(e.value, fraction));
      assert.match(e.message, /memory_pool_fraction = .* must lie in \(0, 1\]/);
    }
    assert.equal(failure({}, BOTH, { explicitBytes: 1.5 * MIN_POOL_BYTES + 0.5 }).reason, 'not_a_byte_count');
  });

  test('RFC0058.4: startup logs the size, its source and the share', () => {
    const s = size(v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: '1610612736\n' }), BOTH);
    assert.match(
      s.description,
      /^query memory pool 805306368 bytes \(768\.0 MiB\), source cgroup_v2, share 0\.5, effective memory limit 1610612736 bytes/,
    );
    assert.ok(!s.description.includes('\n'));
  });
});

describe('hybrid hosts (a 0:: line and a v1 memory line)', () => {
  test('a v1 memory limit is not lost because a 0::/ line exists', () => {
    const s = size(hybrid('/process_api/d1424', '1073741824', {}), BOTH);
    assert.equal(s.source, 'cgroup_v1');
    assert.equal(s.sizeBytes, GiB / 2);
  });

  test('v1 unlimited and v2 limited → the v2 limit', () => {
    const s = size(hybrid('/process_api/d1424', V1_SENTINEL, { 'memory.max': '1610612736\n' }), ALONE);
    assert.equal(s.source, 'cgroup_v2');
    assert.equal(s.sizeBytes, 1207959552);
    assert.match(s.limitFile ?? '', /unified\/memory\.max$/);
  });

  test('both limited → the smaller wins, whichever version sets it', () => {
    assert.equal(size(hybrid('/p', '1073741824', { 'memory.max': '1610612736\n' }), BOTH).source, 'cgroup_v1');
    assert.equal(size(hybrid('/p', '2147483648', { 'memory.max': '1610612736\n' }), BOTH).source, 'cgroup_v2');
  });

  test('both unlimited → MemTotal', () => {
    const s = size(hybrid('/process_api/d1424', V1_SENTINEL, { 'memory.max': 'max\n' }), BOTH);
    assert.equal(s.source, 'meminfo');
    assert.equal(s.sizeBytes, 2 * GiB);
  });

  test('a v1 memory controller co-mounted with others (cpu,memory) is found', () => {
    const files = v1('/k', '1073741824');
    files['proc/self/cgroup'] = '3:cpu,memory:/k\n0::/\n';
    assert.equal(size(files, BOTH).source, 'cgroup_v1');
  });
});

describe('missing and malformed inputs fall back gracefully', () => {
  test('no /proc/self/cgroup → MemTotal', () => {
    const s = size({ 'proc/meminfo': MEM_4G }, BOTH);
    assert.equal(s.source, 'meminfo');
    assert.equal(s.sizeBytes, 2 * GiB);
  });

  test('nothing readable → the fixed 1 GiB fallback, with a warning', () => {
    const s = size({}, BOTH);
    assert.equal(s.source, 'fallback');
    assert.equal(s.sizeBytes, FALLBACK_POOL_BYTES);
    assert.equal(s.limitBytes, null);
    assert.match(s.warnings.join('\n'), /no memory limit detected/);
  });

  test('a malformed memory.max is ignored and noted; the rest of the walk still counts', () => {
    const s = size(
      v2(UNIT, { [`${UNIT.slice(1)}/memory.max`]: 'lots\n', 'system.slice/memory.max': `${GiB}\n` }),
      BOTH,
    );
    assert.equal(s.sizeBytes, GiB / 2);
    assert.match(s.warnings.join('\n'), /ignored .*sluice\.service\/memory\.max: not a byte count/);
  });

  test('malformed meminfo and a malformed v1 limit → the fallback, both noted', () => {
    const files = v1('/x', '-1', 'MemTotal: lots\n');
    const s = size(files, BOTH);
    assert.equal(s.source, 'fallback');
    assert.equal(s.warnings.length, 3);
  });

  test('a v1 container without a cgroup namespace reads the limit at its memory mount root', () => {
    const s = size(
      {
        'proc/self/cgroup': '4:memory:/docker/abc\n',
        'proc/meminfo': MEM_4G,
        'sys/fs/cgroup/memory/memory.limit_in_bytes': '1073741824\n',
      },
      BOTH,
    );
    assert.equal(s.source, 'cgroup_v1');
    assert.equal(s.sizeBytes, GiB / 2);
  });

  test('a v2 container namespace (0::/) uses the mount root memory.max', () => {
    assert.equal(size(v2('/', { 'memory.max': `${GiB}\n` }), ALONE).sizeBytes, (3 * GiB) / 4);
  });

  test('a path climbing above the namespace root stops at the mount root', () => {
    const s = size(v2('/../../escape', { 'memory.max': `${GiB}\n` }), BOTH);
    assert.equal(s.sizeBytes, GiB / 2);
  });
});
