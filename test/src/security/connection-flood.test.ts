/**
 * Issue 19's reproduction, fixed: 2,000 `GET /mcp` connections held open against a gateway running under
 * `ulimit -n 1024` (the real CLI in a child process). Before, each GET opened an SSE stream that never ended, and
 * ~1,000 of them exhausted the file handles (the sink worker crashed). Now `GET /mcp` is answered 405 and the
 * query listener is capped (`querier.max_connections`, derived from the open-file limit here): past the cap new
 * connections get 503 or are closed at accept. Meanwhile real OTel SDK exporters keep being acknowledged, the
 * process never nears its handle limit, the sink worker never dies, and everything exported is stored.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { metricValue } from '../helpers/metrics.js';
import { buildSdkRecords, createExporter, exportBatch, type ExporterKind } from '../helpers/otel-sdk.js';
import { waitForStoredRows } from '../helpers/read-store.js';
import { spawnSluice, tempDir, type SluiceProcess } from '../helpers/spawn-sluice.js';
import { testConfigYaml } from '../helpers/test-config.js';

const OPEN_FILE_LIMIT = 1024;
const FLOOD = 2000;
const BATCH = 20;

/** What one flood connection saw: its first status line, or `closed` without an answer. */
type Seen = 'pending' | 'closed' | string;

function floodOne(port: number, seen: Seen[], index: number): Socket {
  const socket = connect(port, '127.0.0.1');
  seen[index] = 'pending';
  let text = '';
  socket.on('connect', () =>
    socket.write('GET /mcp HTTP/1.1\r\nHost: sluice\r\nAccept: text/event-stream\r\nConnection: keep-alive\r\n\r\n'),
  );
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    const line = text.indexOf('\r\n');
    if (seen[index] === 'pending' && line >= 0) seen[index] = text.slice(0, line);
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    if (seen[index] === 'pending') seen[index] = 'closed';
  });
  return socket;
}

function openHandles(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return -1;
  }
}

describe('2,000 GET /mcp against ulimit -n 1024: refused cleanly past the cap, exports keep flowing', () => {
  let server: SluiceProcess;
  const dir = tempDir('flood');

  before(async () => {
    server = await spawnSluice(
      testConfigYaml({ walDir: join(dir, 'wal'), dataDir: join(dir, 'data'), querier: true, flushAgeSecs: 1 }),
      { dir, openFileLimit: OPEN_FILE_LIMIT },
    );
    await server.waitReady();
  });

  after(async () => {
    if (server.child.exitCode === null) await server.stop();
  });

  test('the flood is bounded, every connection is answered or closed, exports are acked, the sink lives', async () => {
    const pid = server.child.pid!;
    const limits = server.logs.find((l) => l.includes('"connection caps"')) ?? '';
    assert.match(limits, /"open_file_limit":1024/, 'the child runs under ulimit -n 1024');
    assert.match(limits, /"querier\.max_connections":"224 \(derived\)"/);
    const queryPort = Number(new URL(server.queryUrl!).port);

    // Exports through the real SDK exporters (HTTP/protobuf and gRPC, alternating) for the whole flood.
    const target = { httpUrl: server.otlpHttpUrl, grpcAddress: server.otlpGrpcAddress };
    const exporters = (['http-proto', 'grpc'] as ExporterKind[]).map((kind) =>
      createExporter(kind, target, { tenant: 'flood', gzip: true }),
    );
    let acked = 0;
    const failures: string[] = [];
    let exporting = true;
    const exportLoop = (async () => {
      for (let round = 0; exporting; round++) {
        const nowNs = BigInt(Date.now()) * 1_000_000n;
        const records = await buildSdkRecords(
          { resource: { 'service.name': 'flood' }, scopeName: 'flood', scopeVersion: '1' },
          Array.from({ length: BATCH }, (_, i) => ({
            body: `export ${round} record ${i} during the flood`,
            severityNumber: 9,
            severityText: 'INFO',
            attributes: {},
            timeNs: nowNs + BigInt(i),
            observedNs: nowNs + BigInt(i),
            traceId: null,
            spanId: null,
          })),
        );
        try {
          await exportBatch(exporters[round % 2]!, records);
          acked++;
        } catch (e) {
          failures.push(String(e));
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    let maxHandles = 0;
    const sampler = setInterval(() => (maxHandles = Math.max(maxHandles, openHandles(pid))), 20);
    const seen: Seen[] = [];
    const sockets: Socket[] = [];
    try {
      // 2,000 opens, in quick waves so the test's own event loop keeps up; none is closed by the client.
      for (let i = 0; i < FLOOD; i += 100) {
        for (let k = i; k < i + 100; k++) sockets.push(floodOne(queryPort, seen, k));
        await new Promise((r) => setTimeout(r, 20));
      }
      const deadline = Date.now() + 30_000;
      while (seen.some((s) => s === 'pending') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const acksDuringFlood = acked;
      // Keep exporting a little longer while the flood's connections are still held open.
      const more = acked + 5;
      while (acked < more && failures.length === 0) await new Promise((r) => setTimeout(r, 50));
      exporting = false;
      await exportLoop;

      const counts = new Map<string, number>();
      for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
      const tally = JSON.stringify(Object.fromEntries(counts));
      assert.equal(counts.get('pending') ?? 0, 0, `every connection was answered or closed within 30 s: ${tally}`);
      assert.ok(
        (counts.get('HTTP/1.1 405 Method Not Allowed') ?? 0) > 0,
        `some were served (405, no stream): ${tally}`,
      );
      const refused = (counts.get('HTTP/1.1 503 Service Unavailable') ?? 0) + (counts.get('closed') ?? 0);
      assert.ok(refused > 0, `connections past the cap were refused: ${tally}`);
      assert.equal(
        [...counts.keys()].filter((k) => !/^(HTTP\/1\.1 (405|503) |closed$)/.test(k)).length,
        0,
        `nothing but 405, 503 or a close: ${tally}`,
      );
      assert.ok(maxHandles > 0 && maxHandles < OPEN_FILE_LIMIT - 256, `open handles peaked at ${maxHandles}`);
      assert.deepEqual(failures, [], 'no export failed during the flood');
      assert.ok(acksDuringFlood > 0, 'exports were acknowledged while the flood ran');
      console.log(`flood: ${tally}; peak open handles ${maxHandles}; exports acked ${acked}`);
    } finally {
      clearInterval(sampler);
      for (const s of sockets) s.destroy();
      exporting = false;
      for (const e of exporters) await e.shutdown();
    }

    // The cap is observable: a rate-limited warning naming the key, and the refusal counter.
    assert.ok(
      server.logs.some((l) => l.includes('connection cap reached') && l.includes('querier.max_connections')),
      'a warning names querier.max_connections',
    );
    assert.ok((await metricValue(server.otlpHttpUrl, 'sluice_connection_refused_total', 'query_http')) > 0);
    // Nothing ran out of handles, and the sink worker never died: everything acked is in Parquet.
    const troubles = server.logs.filter((l) => /EMFILE|sink worker (exited|failed)/.test(l));
    assert.deepEqual(troubles, []);
    await waitForStoredRows({ backend: 'local', root: join(dir, 'data') }, acked * BATCH);

    // After the flood the query listener serves again, MCP included.
    assert.equal((await fetch(`${server.queryUrl}/readyz`)).status, 200);
    const client = new Client({ name: 'after-flood', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.queryUrl}/mcp`), {
        requestInit: { headers: { 'X-Sluice-Tenant': 'flood' } },
      }),
    );
    try {
      const result = (await client.callTool({
        name: 'query_logs',
        arguments: { query: 'contains(body, "during the flood") | range(-1h, now) | count' },
      })) as { content: { text: string }[] };
      assert.match(result.content[0]!.text, new RegExp(`"count":${acked * BATCH}\\b`));
    } finally {
      await client.close();
    }
  });
});
