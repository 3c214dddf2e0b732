/**
 * @module load-config.test
 * loadConfig reads the --config file (or uses env-only mode) and reports a read failure as an issue.
 */
import { describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './load-config.js';

describe('loadConfig', () => {
  test('reads and parses the config file with ${env:…} substitution', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-config-'));
    try {
      const path = join(dir, 'sluice.yaml');
      await writeFile(path, 'querier:\n  limits:\n    max_rows: ${env:ROWS}\n');
      const r = await loadConfig({ configPath: path, env: { ROWS: '1234' } });
      if (!r.ok) assert.fail(JSON.stringify(r.error));
      assert.equal(r.value.querier.limits.maxRows, 1234);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a missing file is one issue at --config naming the path', async () => {
    const r = await loadConfig({ configPath: '/nonexistent/sluice.yaml', env: {} });
    assert.ok(!r.ok);
    assert.deepEqual(r.error, [{ path: '--config', message: '"/nonexistent/sluice.yaml": no such file' }]);
  });

  test('a directory is an issue at --config', async () => {
    const r = await loadConfig({ configPath: tmpdir(), env: {} });
    assert.ok(!r.ok);
    assert.equal(r.error[0]?.path, '--config');
  });

  test('without configPath, env-only mode applies', async () => {
    const r = await loadConfig({ env: { SLUICE_RECEIVER_WAL_DIR: '/tmp/w' } });
    assert.ok(r.ok);
    assert.equal(r.value.receiver.walDir, '/tmp/w');
  });
});
