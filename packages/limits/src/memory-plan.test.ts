/**
 * @module memory-plan.test
 * The sink ceiling derived from the memory limit and the startup fit check (docs/deployment.md, "Sizing the sink
 * ceiling"), over fixture trees that mimic `/proc` and `/sys/fs/cgroup` (cgroup v2, v1, hybrid, meminfo only, none).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { planMemory } from './memory-plan.js';
import type { MemoryFitError, MemoryPlan, PlanMemoryOptions } from './memory-plan.js';
import type { PoolRoles, PoolSizeError } from './derive-pool-size.js';
import { BASELINE_BYTES, MAX_SINK_CEILING_BYTES, MIN_SINK_CEILING_BYTES } from './derive-sink-ceiling.js';
import { cgroupFixture, meminfo } from './testing/cgroup-fixture.js';
import type { CgroupFixture } from './testing/cgroup-fixture.js';

const BOTH: PoolRoles = { receiver: true, compaction: true, querier: true };
const RECEIVER_ONLY: PoolRoles = { receiver: true, compaction: false, querier: false };
const RECEIVER_AND_COMPACTION: PoolRoles = { receiver: true, compaction: true, querier: false };
const QUERIER_ONLY: PoolRoles = { receiver: false, compaction: false, querier: true };
const MiB = 1_048_576;
const GiB = 1_073_741_824;
const L15 = 1_610_612_736; // 1.5 GiB, the soak's node
const MEM_4G = meminfo(4 * 1024 * 1024);
const UNIT = '/system.slice/sluice.service';

const fixtures: CgroupFixture[] = [];
after(() => fixtures.forEach((f) => f.remove()));

function fixture(files: Record<string, string>): CgroupFixture {
  const f = cgroupFixture(files);
  fixtures.push(f);
  return f;
}

function v2(limit: number, mem = MEM_4G): Record<string, string> {
  return {
    'proc/self/cgroup': `0::${UNIT}\n`,
    'proc/meminfo': mem,
    'sys/fs/cgroup/cgroup.controllers': 'cpu memory pids\n',
    [`sys/fs/cgroup${UNIT}/memory.max`]: `${limit}\n`,
  };
}

function v1(limit: number | string, mem = MEM_4G): Record<string, string> {
  return {
    'proc/self/cgroup': `5:cpu,cpuacct:${UNIT}\n4:memory:${UNIT}\n1:name=systemd:${UNIT}\n`,
    'proc/meminfo': mem,
    [`sys/fs/cgroup/memory${UNIT}/memory.limit_in_bytes`]: `${limit}\n`,
  };
}

/** v1 memory controller plus `0::/` with the v2 tree at `unified/` (no v2 limit). */
function hybrid(v1Limit: number): Record<string, string> {
  return {
    'proc/self/cgroup': `9:name=systemd:/\n4:memory:${UNIT}\n1:cpu:/\n0::/\n`,
    'proc/meminfo': MEM_4G,
    'sys/fs/cgroup/unified/cgroup.controllers': '\n',
    [`sys/fs/cgroup/memory${UNIT}/memory.limit_in_bytes`]: `${v1Limit}\n`,
  };
}

type Keys = Omit<PlanMemoryOptions, 'roles' | 'source'>;

function plan(files: Record<string, string>, roles: PoolRoles, keys: Keys = {}): MemoryPlan {
  const r = planMemory({ ...keys, roles, source: fixture(files).source });
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
}

function failure(files: Record<string, string>, roles: PoolRoles, keys: Keys = {}): MemoryFitError | PoolSizeError {
  const r = planMemory({ ...keys, roles, source: fixture(files).source });
  if (r.ok) assert.fail(`accepted: ${r.value.sinkCeiling?.description}`);
  return r.error;
}

/** pool + sink ceiling + baseline, the sum the plan promises to keep under the limit. */
function planned(p: MemoryPlan): number {
  return (p.pool?.sizeBytes ?? 0) + (p.sinkCeiling?.sizeBytes ?? 0) + BASELINE_BYTES;
}

describe('the sink ceiling derives from the memory limit when receiver.sink.ceiling_bytes is unset', () => {
  test('v2 1.5 GiB, both roles: pool 0.5, sink 0.25 of the limit, and pool + sink + baseline ≤ limit', () => {
    const p = plan(v2(L15), BOTH);
    assert.equal(p.pool?.sizeBytes, 805_306_368);
    assert.equal(p.sinkCeiling?.sizeBytes, 402_653_184);
    assert.equal(p.sinkCeiling?.source, 'cgroup_v2');
    assert.equal(p.sinkCeiling?.share, 0.25);
    assert.equal(p.limitBytes, L15);
    assert.ok(planned(p) <= L15, `${planned(p)} > ${L15}`);
    assert.deepEqual(p.warnings, []);
    assert.match(p.sinkCeiling?.description ?? '', /sink ceiling 402653184 bytes .*source cgroup_v2, share 0\.25/);
    assert.match(p.sinkCeiling?.description ?? '', /sluice\.service\/memory\.max\), baseline 335544320 bytes$/);
  });

  test('v1 1 GiB, both roles: the share is cut to what the pool and the baseline leave (exactly the limit)', () => {
    const p = plan(v1(GiB), BOTH);
    assert.equal(p.pool?.sizeBytes, GiB / 2);
    assert.equal(p.sinkCeiling?.sizeBytes, GiB - GiB / 2 - BASELINE_BYTES);
    assert.equal(p.sinkCeiling?.source, 'cgroup_v1');
    assert.equal(p.sinkCeiling?.bounded, true);
    assert.equal(planned(p), GiB);
  });

  test('hybrid host, v1 limit 2 GiB, both roles: the v1 limit governs the sink too', () => {
    const p = plan(hybrid(2 * GiB), BOTH);
    assert.equal(p.sinkCeiling?.sizeBytes, 512 * MiB);
    assert.equal(p.sinkCeiling?.source, 'cgroup_v1');
    assert.ok(planned(p) <= 2 * GiB);
  });

  test('receiver only, v2 1.5 GiB: the larger 0.5 share, leaving the baseline', () => {
    const p = plan(v2(L15), RECEIVER_ONLY);
    assert.equal(p.pool, null);
    assert.equal(p.sinkCeiling?.sizeBytes, L15 / 2);
    assert.equal(p.sinkCeiling?.share, 0.5);
  });

  test('receiver and compaction without the querier: the 0.5 share', () => {
    assert.equal(plan(v1(L15), RECEIVER_AND_COMPACTION).sinkCeiling?.sizeBytes, L15 / 2);
  });

  test('receiver only, 512 MiB: 0.5 would leave less than the baseline, so the ceiling is limit - baseline', () => {
    const p = plan(v2(512 * MiB), RECEIVER_ONLY);
    assert.equal(p.sinkCeiling?.sizeBytes, 512 * MiB - BASELINE_BYTES);
    assert.equal(planned(p), 512 * MiB);
  });

  test('a large host (no cgroup limit, MemTotal 64 GiB) is clamped to the 1 GiB maximum, source meminfo', () => {
    const files = { 'proc/self/cgroup': '0::/\n', 'proc/meminfo': meminfo(64 * 1024 * 1024) };
    const p = plan(files, BOTH);
    assert.equal(p.sinkCeiling?.sizeBytes, MAX_SINK_CEILING_BYTES);
    assert.equal(p.sinkCeiling?.source, 'meminfo');
  });

  test('a v1 limit at the unlimited sentinel counts as none: MemTotal (4 GiB) governs', () => {
    const p = plan(v1('9223372036854771712'), BOTH);
    assert.equal(p.limitBytes, 4 * GiB);
    assert.equal(p.sinkCeiling?.sizeBytes, GiB); // 0.25 × 4 GiB, room 4 - 2 - 0.3125 GiB
  });

  test('no limit detected at all: the 1 GiB fallback, with a warning naming the key', () => {
    const p = plan({}, BOTH);
    assert.equal(p.sinkCeiling?.sizeBytes, GiB);
    assert.equal(p.sinkCeiling?.source, 'fallback');
    assert.ok(p.warnings.some((w) => /receiver\.sink\.ceiling_bytes falls back to 1073741824 bytes/.test(w)));
  });

  test('a querier-only process plans no sink ceiling and keeps the pool rules unchanged', () => {
    const p = plan(v2(L15), QUERIER_ONLY);
    assert.equal(p.sinkCeiling, null);
    assert.equal(p.pool?.sizeBytes, 1_207_959_552);
  });

  test('every derived plan fits: pool + sink + baseline ≤ limit for limits from 704 MiB (the smallest that fits both roles) to 64 GiB, both roles and receiver only', () => {
    for (let mib = 704; mib <= 64 * 1024; mib = Math.ceil(mib * 1.37)) {
      for (const roles of [BOTH, RECEIVER_ONLY]) {
        const p = plan(v2(mib * MiB), roles);
        assert.ok(planned(p) <= mib * MiB, `${mib} MiB: ${planned(p)} planned`);
        assert.ok((p.sinkCeiling?.sizeBytes ?? 0) >= MIN_SINK_CEILING_BYTES);
        assert.ok((p.sinkCeiling?.sizeBytes ?? Infinity) <= MAX_SINK_CEILING_BYTES);
      }
    }
  });
});

describe('startup validation: explicit values must fit the detected limit', () => {
  test('an explicit ceiling that fits is used as is', () => {
    const p = plan(v2(L15), BOTH, { sinkCeilingBytes: 256 * MiB });
    assert.equal(p.sinkCeiling?.sizeBytes, 256 * MiB);
    assert.equal(p.sinkCeiling?.source, 'explicit');
    assert.deepEqual(p.warnings, []);
  });

  test('explicit pool + explicit ceiling + baseline over the limit: startup error naming each figure and the limit file', () => {
    // 1 GiB + 512 MiB fits 1.5 GiB exactly; only the baseline makes it not fit.
    const e = failure(v2(L15), BOTH, { poolBytes: GiB, sinkCeilingBytes: 512 * MiB });
    assert.equal(e.kind, 'memory_plan_does_not_fit');
    const fit = e as MemoryFitError;
    assert.deepEqual(
      fit.figures.map((f) => [f.name, f.bytes, f.how]),
      [
        ['querier.limits.memory_pool_bytes', GiB, 'explicit'],
        ['receiver.sink.ceiling_bytes', 512 * MiB, 'explicit'],
        ['baseline', BASELINE_BYTES, 'measured'],
      ],
    );
    assert.equal(fit.limitBytes, L15);
    assert.equal(fit.limitSource, 'cgroup_v2');
    assert.match(fit.limitFile, /sluice\.service\/memory\.max$/);
    assert.match(fit.message, /querier\.limits\.memory_pool_bytes = 1073741824 \(explicit\)/);
    assert.match(fit.message, /receiver\.sink\.ceiling_bytes = 536870912 \(explicit\)/);
    assert.match(fit.message, /baseline = 335544320 \(measured\)/);
    assert.match(fit.message, /= 1946157056 bytes, above the limit of 1610612736 bytes \(cgroup_v2: .*memory\.max\)/);
  });

  test('an explicit ceiling that does not fit beside the derived pool: the error names the derived pool and its share', () => {
    const e = failure(v1(L15), BOTH, { sinkCeilingBytes: GiB }) as MemoryFitError;
    assert.equal(e.kind, 'memory_plan_does_not_fit');
    assert.match(e.message, /querier\.limits\.memory_pool_bytes = 805306368 \(derived: share 0\.5 of the limit\)/);
    assert.match(e.message, /receiver\.sink\.ceiling_bytes = 1073741824 \(explicit\)/);
    assert.match(e.message, /cgroup_v1: .*memory\.limit_in_bytes/);
  });

  test('an explicit pool that leaves no room for the smallest derived ceiling: error naming the 32 MiB minimum', () => {
    const e = failure(v2(L15), BOTH, { poolBytes: 1280 * MiB }) as MemoryFitError;
    assert.equal(e.kind, 'memory_plan_does_not_fit');
    assert.match(e.message, /receiver\.sink\.ceiling_bytes = 33554432 \(derived: its 32 MiB minimum\)/);
  });

  test('a limit too small for the derived pool, the smallest ceiling and the baseline is a startup error', () => {
    const e = failure(v2(640 * MiB), BOTH);
    assert.equal(e.kind, 'memory_plan_does_not_fit');
  });

  test('receiver only: an explicit ceiling + baseline over the limit is an error, without a pool figure', () => {
    const e = failure(v2(GiB), RECEIVER_ONLY, { sinkCeilingBytes: 800 * MiB }) as MemoryFitError;
    assert.deepEqual(
      e.figures.map((f) => f.name),
      ['receiver.sink.ceiling_bytes', 'baseline'],
    );
  });

  test('an explicit ceiling alone above the limit is allowed with a warning naming both figures', () => {
    const p = plan(v2(GiB), BOTH, { sinkCeilingBytes: 2 * GiB });
    assert.equal(p.sinkCeiling?.sizeBytes, 2 * GiB);
    assert.equal(p.warnings.length, 1);
    assert.match(
      p.warnings[0] ?? '',
      /^receiver\.sink\.ceiling_bytes = 2147483648 exceeds the detected memory limit 1073741824 \(cgroup_v2, .*memory\.max\)/,
    );
  });

  test('an explicit pool alone above the limit warns (as before) and the derived ceiling takes its minimum', () => {
    const p = plan(v2(GiB), BOTH, { poolBytes: 2 * GiB });
    assert.equal(p.sinkCeiling?.sizeBytes, MIN_SINK_CEILING_BYTES);
    assert.equal(p.warnings.length, 1);
    assert.match(
      p.warnings[0] ?? '',
      /^querier\.limits\.memory_pool_bytes = 2147483648 exceeds the detected memory limit/,
    );
  });

  test('a pool configuration error still comes first, unchanged', () => {
    const e = failure(v2(L15), BOTH, { poolFraction: 0.01 });
    assert.equal(e.kind, 'pool_size_invalid');
  });
});
