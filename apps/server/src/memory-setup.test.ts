/**
 * @module memory-setup.test
 * The server's memory plan from a real configuration over cgroup fixtures: one startup line with the derived sink
 * ceiling and its source, the explicit-above-the-limit warning, and the startup error naming every figure.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, type SluiceConfig } from '@sluice/config';
import { cgroupFixture, type CgroupFixture } from '@sluice/limits/testing';
import { createLogger } from '@sluice/telemetry';
import { planProcessMemory } from './memory-setup.js';

const fixtures: CgroupFixture[] = [];
after(() => fixtures.forEach((f) => f.remove()));

/** A cgroup v2 leaf with `memory.max` = `limit` (MemTotal 4 GiB). */
function v2Limit(limit: number): CgroupFixture {
  const f = cgroupFixture({
    'proc/self/cgroup': '0::/sluice\n',
    'proc/meminfo': 'MemTotal:       4194304 kB\n',
    'sys/fs/cgroup/cgroup.controllers': 'memory\n',
    'sys/fs/cgroup/sluice/memory.max': `${limit}\n`,
  });
  fixtures.push(f);
  return f;
}

function config(yaml: string): SluiceConfig {
  const parsed = parseConfig({ fileText: yaml, env: {} });
  assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.error));
  return parsed.value;
}

function capture(): {
  log: ReturnType<typeof createLogger>;
  lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }>;
} {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const log = createLogger('sluice-test', { write: (l) => void lines.push(JSON.parse(l) as (typeof lines)[number]) });
  return { log, lines };
}

const BOTH_ROLES = 'querier:\n  enabled: true\n';

test('both roles with the ceiling unset: one startup line gives the derived sink ceiling, its source and the baseline', () => {
  const { log, lines } = capture();
  const plan = planProcessMemory(config(BOTH_ROLES), v2Limit(1_610_612_736).source, log);
  assert.equal(plan.sinkCeiling?.sizeBytes, 402_653_184);
  const sink = lines.filter((l) => l.msg === 'sink ceiling sized');
  assert.equal(sink.length, 1);
  assert.equal(sink[0]?.fields?.['bytes'], 402_653_184);
  assert.equal(sink[0]?.fields?.['source'], 'cgroup_v2');
  assert.equal(sink[0]?.fields?.['share'], 0.25);
  assert.equal(sink[0]?.fields?.['baseline_bytes'], 335_544_320);
  assert.match(String(sink[0]?.fields?.['detail']), /sluice\/memory\.max/);
  assert.equal(lines.filter((l) => l.msg === 'query memory pool sized').length, 1);
  assert.equal(lines.filter((l) => l.level === 'warn').length, 0);
});

test('an explicit ceiling above the detected limit starts with a warning naming both figures', () => {
  const { log, lines } = capture();
  const yaml = `${BOTH_ROLES}receiver:\n  sink:\n    ceiling_bytes: 2147483648\n`;
  const plan = planProcessMemory(config(yaml), v2Limit(1_073_741_824).source, log);
  assert.equal(plan.sinkCeiling?.sizeBytes, 2_147_483_648);
  const warnings = lines.filter((l) => l.level === 'warn').map((l) => l.msg);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0] ?? '',
    /receiver\.sink\.ceiling_bytes = 2147483648 exceeds the detected memory limit 1073741824/,
  );
});

test('explicit pool + explicit ceiling + baseline over the limit: startup fails naming each figure, the limit and its file', () => {
  const { log } = capture();
  const yaml =
    `querier:\n  enabled: true\n  limits:\n    memory_pool_bytes: 1073741824\n` +
    `receiver:\n  sink:\n    ceiling_bytes: 536870912\n`;
  assert.throws(
    () => planProcessMemory(config(yaml), v2Limit(1_610_612_736).source, log),
    (e: Error) => {
      assert.match(e.message, /querier\.limits\.memory_pool_bytes = 1073741824 \(explicit\)/);
      assert.match(e.message, /receiver\.sink\.ceiling_bytes = 536870912 \(explicit\)/);
      assert.match(e.message, /baseline = 335544320 \(measured\)/);
      assert.match(e.message, /above the limit of 1610612736 bytes \(cgroup_v2: .*\/sluice\/memory\.max\)/);
      return true;
    },
  );
});

test('the ceiling key read from the environment (SLUICE_RECEIVER_SINK_CEILING_BYTES) is explicit too', () => {
  const parsed = parseConfig({
    env: { SLUICE_RECEIVER_SINK_CEILING_BYTES: '268435456', SLUICE_QUERIER_ENABLED: 'true' },
  });
  assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.error));
  assert.equal(parsed.value.receiver.sink.ceilingBytes, 268_435_456);
  const { log } = capture();
  const plan = planProcessMemory(parsed.value, v2Limit(1_610_612_736).source, log);
  assert.equal(plan.sinkCeiling?.source, 'explicit');
  const unset = parseConfig({ env: {} });
  assert.ok(unset.ok);
  assert.equal(unset.value.receiver.sink.ceilingBytes, null);
});
