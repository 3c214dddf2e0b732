/**
 * The CLI refuses a bad configuration at startup with one error that lists every problem (unknown key with its
 * path, missing env reference, invalid values), and exits non-zero without opening any listener.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SLUICE_BIN, tempDir } from '../helpers/spawn-sluice.js';

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { status: number | null; stderr: string; stdout: string } {
  const r = spawnSync(process.execPath, [SLUICE_BIN, ...args], {
    env: { PATH: process.env.PATH, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

test('a config with an unknown key, a missing env reference and invalid values fails once, listing each problem', () => {
  const dir = tempDir('cli-config');
  const file = join(dir, 'bad.yaml');
  writeFileSync(
    file,
    `receiver:
  wal:
    group_comit_ms: 5
  http_addr: \${env:SLUICE_TEST_MISSING_ADDR}
querier:
  limits:
    max_concurrent_queries: 0
    default_rows: 20000
    max_rows: 100
`,
  );
  const r = runCli(['serve', '--config', file]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /receiver\.wal\.group_comit_ms/);
  assert.match(r.stderr, /SLUICE_TEST_MISSING_ADDR/);
  assert.match(r.stderr, /querier\.limits\.max_concurrent_queries/);
  assert.match(r.stderr, /default_rows/);
  assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, 'no stack trace');
});

test('env-only mode rejects an unknown SLUICE_ variable and an invalid value together', () => {
  const r = runCli(['serve'], { SLUICE_RECEIVER_WAL_GROUP_COMMIT_MS: 'soon', SLUICE_RECEIVR_HTTP_ADDR: '127.0.0.1:1' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /SLUICE_RECEIVR_HTTP_ADDR/);
  assert.match(r.stderr, /SLUICE_RECEIVER_WAL_GROUP_COMMIT_MS: must be an integer/);
});

test('an unknown command prints usage and exits 2; --help exits 0', () => {
  const bad = runCli(['srve']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /Usage: sluice serve/);
  const help = runCli(['--help']);
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--config FILE/);
});
