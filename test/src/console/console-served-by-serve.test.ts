/**
 * The real binary serves the console at `/` by default (its files from the @sluice/console package), answers
 * `/v1/status`, and with `querier.ui.enabled: false` answers 404 for the console while `/v1/status` and the query
 * API stay.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

/** The test config with `querier.ui.enabled` set (beside `querier.mcp`). */
function configYaml(dir: string, uiEnabled: boolean | null): string {
  const yaml = testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), querier: true });
  if (uiEnabled === null) return yaml;
  const mcp = '  mcp:\n    enabled: true\n';
  assert.ok(yaml.includes(mcp));
  return yaml.replace(mcp, `${mcp}  ui:\n    enabled: ${uiEnabled}\n`);
}

for (const ui of [null, false] as const) {
  describe(`sluice serve with querier.ui.enabled ${ui === null ? 'unset (default)' : String(ui)}`, () => {
    let server: SluiceProcess;
    const dir = tempDir(`console-ui-${String(ui)}`);
    before(async () => {
      server = await spawnSluice(configYaml(dir, ui), { dir });
      await server.waitReady();
    });
    after(async () => {
      if (server?.child.exitCode === null) await server.stop();
    });

    test(ui === null ? '/ is the console page' : '/ and the console files are 404', async () => {
      for (const path of ['/', '/console/js/main.js', '/console/console.css']) {
        const res = await fetch(`${server.queryUrl}${path}`);
        await res.arrayBuffer();
        assert.equal(res.status, ui === null ? 200 : 404, path);
      }
    });

    test('/v1/status answers either way', async () => {
      const res = await fetch(`${server.queryUrl}/v1/status`);
      assert.equal(res.status, 200);
      const body = (await res.json()) as { tenancy: { header: string }; pool: { limit_bytes: number } };
      assert.equal(body.tenancy.header, 'X-Sluice-Tenant');
      assert.ok(body.pool.limit_bytes > 0);
    });
  });
}
