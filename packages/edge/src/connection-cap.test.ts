/**
 * A listener at its connection cap answers new connections "busy, retry" from a bounded set of refusal slots,
 * closes them at accept once those are taken, closes a refused connection that sends nothing, and frees idle
 * keep-alive connections — on a real node:http server and real sockets.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createConnectionCap, type ConnectionCap, type RefusalKind } from './connection-cap.js';

interface Rig {
  readonly server: Server;
  readonly cap: ConnectionCap;
  readonly port: number;
  readonly refusals: RefusalKind[];
  close(): Promise<void>;
}

async function rig(max: number, slots: number, graceMs = 2000): Promise<Rig> {
  const refusals: RefusalKind[] = [];
  const cap = createConnectionCap({
    cap: {
      listener: 'test',
      key: 'test.max_connections',
      maxConnections: max,
      refusalSlots: slots,
      source: 'explicit',
    },
    refusalGraceMs: graceMs,
    onRefused: (_c, how) => refusals.push(how),
  });
  const server = createServer((req, res) => {
    if (cap.isRefused(req.socket)) {
      res.writeHead(503, { connection: 'close', 'retry-after': '1' }).end('busy\n');
      return;
    }
    res.end('ok\n');
  });
  cap.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    cap,
    port: (server.address() as AddressInfo).port,
    refusals,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function open(port: number): Promise<Socket> {
  const s = connect(port, '127.0.0.1');
  await new Promise<void>((r, j) => s.once('connect', r).once('error', j));
  return s;
}

/** Sends one GET and resolves with the status line and whether the server closed the connection. */
function get(s: Socket): Promise<{ status: string; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    let closed = false;
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.once('close', () => {
      closed = true;
      resolve({ status: text.split('\r\n')[0] ?? '', closed });
    });
    s.on('error', () => undefined);
    s.write('GET / HTTP/1.1\r\nHost: t\r\n\r\n');
    // A served keep-alive connection stays open: resolve once the response is complete.
    const poll = setInterval(() => {
      if (text.endsWith('ok\n')) {
        clearInterval(poll);
        resolve({ status: text.split('\r\n')[0] ?? '', closed });
      }
    }, 5);
    s.once('close', () => clearInterval(poll));
  });
}

function closedWithin(s: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (s.destroyed) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    s.once('close', () => {
      clearTimeout(t);
      resolve(true);
    });
    s.on('error', () => undefined);
  });
}

const waitFor = async (what: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(what(), 'condition not reached in 2 s');
};

describe('connection cap', () => {
  test('past the cap a connection is answered 503 and closed; served ones are unaffected', async () => {
    const r = await rig(2, 2);
    try {
      const a = await open(r.port);
      const b = await open(r.port);
      await waitFor(() => r.cap.served() === 2);
      const c = await open(r.port);
      await waitFor(() => r.refusals.length === 1);
      assert.deepEqual(await get(c), { status: 'HTTP/1.1 503 Service Unavailable', closed: true });
      assert.equal((await get(a)).status, 'HTTP/1.1 200 OK');
      assert.equal((await get(b)).status, 'HTTP/1.1 200 OK');
      assert.deepEqual(r.refusals, ['answered']);
      a.destroy();
      b.destroy();
    } finally {
      await r.close();
    }
  });

  test('once the refusal slots are taken, new connections are closed at accept (bounded handles)', async () => {
    const r = await rig(1, 1);
    try {
      const served = await open(r.port);
      await waitFor(() => r.cap.served() === 1);
      const held = await open(r.port); // takes the one refusal slot, sends nothing yet
      await waitFor(() => r.refusals.length === 1);
      const dropped = await open(r.port);
      assert.equal(await closedWithin(dropped, 2000), true, 'closed at accept');
      assert.deepEqual(r.refusals, ['answered', 'dropped']);
      served.destroy();
      held.destroy();
    } finally {
      await r.close();
    }
  });

  test('a refused connection that sends nothing is closed after the grace', async () => {
    const r = await rig(1, 4, 100);
    try {
      const served = await open(r.port);
      await waitFor(() => r.cap.served() === 1);
      const silent = await open(r.port);
      assert.equal(await closedWithin(silent, 2000), true);
      assert.equal(served.destroyed, false, 'the served connection stays open');
      served.destroy();
    } finally {
      await r.close();
    }
  });

  test('at the cap, idle keep-alive connections are closed so the listener does not stay full', async () => {
    const r = await rig(2, 2);
    try {
      const idle1 = await open(r.port);
      const idle2 = await open(r.port);
      assert.equal((await get(idle1)).status, 'HTTP/1.1 200 OK');
      assert.equal((await get(idle2)).status, 'HTTP/1.1 200 OK');
      // Both are idle keep-alive connections now. A third arrival is refused, and frees them.
      const third = await open(r.port);
      assert.equal((await get(third)).status, 'HTTP/1.1 503 Service Unavailable');
      assert.equal(await closedWithin(idle1, 2000), true);
      assert.equal(await closedWithin(idle2, 2000), true);
      await waitFor(() => r.cap.served() === 0);
      const next = await open(r.port);
      assert.equal((await get(next)).status, 'HTTP/1.1 200 OK', 'a retry is served');
      next.destroy();
    } finally {
      await r.close();
    }
  });
});
