/**
 * Both HTTP listeners of one process (OTLP/HTTP and the query listener) answer `/healthz`, `/readyz` and `/metrics`
 * identically: status, content type and body, for GET, HEAD and a method probes do not take. The answers
 * themselves are specified by packages/core's probes.test.ts; this proves both listeners serve that one helper.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

interface Seen {
  readonly status: number;
  readonly contentType: string | null;
  readonly allow: string | null;
  readonly body: string;
}

async function probe(base: string, path: string, method: string): Promise<Seen> {
  const res = await fetch(`${base}${path}`, { method });
  const body = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    allow: res.headers.get('allow'),
    // Metric values differ between two scrapes; their presence is what both must show.
    body: path === '/metrics' ? String(body.includes('# TYPE')) : body,
  };
}

test('the OTLP/HTTP and query listeners answer every probe the same way', { timeout: 60_000 }, async () => {
  const dir = tempDir('probes');
  const server = await spawnSluice(
    testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), querier: true }),
    { dir },
  );
  try {
    await server.waitReady();
    for (const path of ['/healthz', '/readyz', '/metrics']) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        const otlp = await probe(server.otlpHttpUrl, path, method);
        const query = await probe(server.queryUrl!, path, method);
        assert.deepEqual(query, otlp, `${method} ${path}`);
        if (method === 'POST') assert.equal(otlp.status, 405, `${method} ${path}`);
        else assert.equal(otlp.status, 200, `${method} ${path}`);
        if (method === 'HEAD') assert.equal(otlp.body, path === '/metrics' ? 'false' : '', 'HEAD has no body');
      }
    }
    assert.equal((await probe(server.otlpHttpUrl, '/readyz', 'GET')).body, 'ready\n');
    assert.equal((await probe(server.queryUrl!, '/metrics', 'GET')).body, 'true');
  } finally {
    await server.stop();
  }
});
