/**
 * @module tail-session.test
 * The tail's buffer against the shared memory pool (docs/design/query-governance.md, "Live tail"), with a scripted
 * query service on a real socket: every batch is reserved on the tail's reservation before it is written (and
 * held until the socket has taken it), and a batch the pool cannot hold is never written — the tail ends with
 * `{"dropped":n}` instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMemoryPool } from '@sluice/limits';
import { createLogger } from '@sluice/telemetry';
import { createLiveTails, type LiveTails } from './live-tails.js';
import type { QueryService, ServiceOutcome } from './query-service.js';
import { runTailSession, type TailEnd } from './tail-session.js';

const silent = createLogger('test', { write: () => {} });
const LINES = '{"body":1}\n{"body":2}\n{"body":3}\n';
const TRAILER = new TextEncoder().encode('{"rows":3,"read":[],"missed":[]}');

/** A service whose first poll sends one batch of three lines (running `during` right after the write). */
function scriptedService(during: () => void): QueryService {
  let polls = 0;
  return {
    async run(_tenant, _job, options): Promise<ServiceOutcome> {
      if (polls++ === 0) {
        const written = options?.stream?.write(new TextEncoder().encode(LINES));
        during(); // in the same turn: the socket cannot have taken the batch yet
        await written;
      }
      return { status: 'ok', body: TRAILER, rows: 3, done: () => {} };
    },
  };
}

async function tailOnce(tails: LiveTails, service: QueryService): Promise<{ text: string; ends: TailEnd[] }> {
  const ends: TailEnd[] = [];
  const server: Server = createServer((_req, res) => {
    const slot = tails.open('acme');
    if (!slot.ok) throw new Error('no slot');
    void runTailSession({
      service,
      log: silent,
      tenant: 'acme',
      request: { predicate: { kind: 'const', value: true } as never, sinceNs: 0n },
      slot: slot.value,
      outgoing: res,
      maxTailMs: 200,
      maxTailBufferBytes: 1 << 20,
      pollMs: 10,
      nowNs: () => BigInt(Date.now()) * 1_000_000n,
      hooks: { onEnd: (end) => ends.push(end) },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: (server.address() as AddressInfo).port, method: 'POST', path: '/' },
        (res) => {
          let all = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (all += c));
          res.on('end', () => resolve(all));
        },
      );
      req.on('error', reject);
      req.end();
    });
    return { text, ends };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

test('a batch is reserved on the tail’s reservation before it is written, and released once the socket took it', async () => {
  const pool = createMemoryPool({ sizeBytes: 1 << 20 });
  const tails = createLiveTails({ pool, log: silent, maxLiveTails: 1, maxTailBufferBytes: 1 << 20 });
  let heldWhileWriting = -1;
  const service = scriptedService(() => {
    heldWhileWriting = pool.consumers().find((c) => c.queryId.startsWith('tail'))?.heldBytes ?? 0;
  });
  const { text, ends } = await tailOnce(tails, service);
  assert.ok(
    heldWhileWriting >= Buffer.byteLength(LINES),
    `held ${heldWhileWriting} bytes while the batch was in flight`,
  );
  assert.ok(text.startsWith(LINES), 'the batch was written');
  assert.equal(ends[0]?.kind, 'max_tail_secs');
  assert.equal(pool.reserved(), 0, 'nothing stays reserved after the tail');
  assert.equal(tails.openCount(), 0);
});

test('a batch the pool cannot hold is not written: the tail ends {"dropped":n} without sending it', async () => {
  const pool = createMemoryPool({ sizeBytes: 1 << 20 });
  // Another holder leaves the tail less than the batch.
  const hog = pool.createQuery('hog');
  assert.equal(hog.tryGrow((1 << 20) - 16).status, 'ok');
  const tails = createLiveTails({ pool, log: silent, maxLiveTails: 1, maxTailBufferBytes: 1 << 20 });
  const { text, ends } = await tailOnce(
    tails,
    scriptedService(() => {}),
  );
  assert.equal(ends[0]?.kind, 'dropped');
  const lines = text.trimEnd().split('\n');
  assert.equal(lines.length, 1, 'only the last line was sent');
  assert.deepEqual(JSON.parse(lines[0] ?? ''), { dropped: 3, end: 'client_too_slow', rows: 0, missed_files: 0 });
  hog.releaseAll();
  assert.equal(pool.reserved(), 0);
  assert.equal(tails.openCount(), 0);
});
