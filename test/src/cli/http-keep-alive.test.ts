/**
 * Both HTTP listeners keep an idle client connection open for 65 s, not Node's default 5 s. With the default, a
 * client whose own idle timer is a little late (event-loop lag, undici's 4 s default) reuses a socket the server
 * is closing and its request fails before it is sent ("other side closed"): the cgroup soak counted such
 * transport failures on /v1/query. Load balancers idle upstream connections for up to 60 s.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { spawnSluice, tempDir } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

/** Past Node's default keep-alive timeout (5 s) with margin for a loaded machine. */
const IDLE_MS = 6_500;

interface Answer {
  readonly status: number;
  readonly keepAlive: string;
  readonly reusedSocket: boolean;
}

function post(agent: Agent, url: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            keepAlive: String(res.headers['keep-alive']),
            reusedSocket: req.reusedSocket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test(
  'the OTLP/HTTP and /v1/query listeners announce a 65 s keep-alive and serve a request on a socket left idle past 5 s',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir('keep-alive');
    const server = await spawnSluice(
      testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), querier: true }),
      { dir },
    );
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await server.waitReady();
      const calls = [
        // An empty ExportLogsServiceRequest is a valid protobuf message.
        () =>
          post(agent, `${server.otlpHttpUrl}/v1/logs`, { 'content-type': 'application/x-protobuf' }, Buffer.alloc(0)),
        () =>
          post(
            agent,
            `${server.queryUrl!}/v1/query`,
            { 'content-type': 'application/json' },
            Buffer.from(JSON.stringify({ query: 'true | count' })),
          ),
      ];
      for (const call of calls) {
        const first = await call();
        assert.equal(first.status, 200);
        assert.equal(first.keepAlive, 'timeout=65', 'the server tells clients how long it keeps an idle socket');
      }
      await delay(IDLE_MS);
      for (const call of calls) {
        const again = await call();
        assert.equal(again.status, 200);
        assert.equal(again.reusedSocket, true, 'the idle socket was still open and carried the next request');
      }
    } finally {
      agent.destroy();
      await server.stop();
    }
  },
);
