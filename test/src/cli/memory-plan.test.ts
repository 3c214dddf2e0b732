/**
 * The real CLI refuses a memory plan that cannot fit the host's detected limit before it opens anything: explicit
 * `querier.limits.memory_pool_bytes` + `receiver.sink.ceiling_bytes` + the measured baseline just above the limit
 * (each value alone below it) exits 1 with one message naming each figure, the limit and the file that set it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BASELINE_BYTES, createMemorySource, effectiveLimit } from '@sluice/limits';
import { SLUICE_BIN, tempDir } from '../helpers/spawn-sluice.js';

const limit = effectiveLimit(createMemorySource().read());

void test(
  'explicit pool + explicit sink ceiling + baseline over the detected limit: exit 1 naming each figure, nothing opened',
  { skip: limit === undefined ? 'no memory limit detectable on this host' : false },
  () => {
    const limitBytes = Number(limit!.bytes);
    const ceiling = 33_554_432;
    // 16 MiB too much once the baseline is counted; without it the plan would fit.
    const pool = limitBytes - BASELINE_BYTES - ceiling + 16 * 1_048_576;
    const dir = tempDir('cli-memory-plan');
    const file = join(dir, 'sluice.yaml');
    writeFileSync(
      file,
      `storage: { backend: local, local: { root: ${JSON.stringify(join(dir, 'data'))} } }
receiver:
  http_addr: 127.0.0.1:0
  grpc_addr: 127.0.0.1:0
  wal_dir: ${JSON.stringify(join(dir, 'wal'))}
  sink:
    ceiling_bytes: ${ceiling}
querier:
  enabled: true
  http_addr: 127.0.0.1:0
  limits:
    memory_pool_bytes: ${pool}
`,
    );
    const r = spawnSync(process.execPath, [SLUICE_BIN, 'serve', '--config', file], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`querier\\.limits\\.memory_pool_bytes = ${pool} \\(explicit\\)`));
    assert.match(r.stderr, /receiver\.sink\.ceiling_bytes = 33554432 \(explicit\)/);
    assert.match(r.stderr, new RegExp(`baseline = ${BASELINE_BYTES} \\(measured\\)`));
    assert.ok(r.stderr.includes(`above the limit of ${limitBytes} bytes (${limit!.source}: ${limit!.file})`), r.stderr);
    assert.doesNotMatch(r.stderr, /receiver started|querier started/);
    assert.equal(existsSync(join(dir, 'wal')), false, 'the WAL was not even opened');
  },
);
