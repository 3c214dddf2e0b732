/**
 * @module websocket-client
 * A minimal RFC 6455 client for tests (Node 20 has no WebSocket): the opening handshake over `http.request`,
 * text and close frames from the server, a masked close frame from the client.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Socket } from 'node:net';

/** An open test connection. */
export interface TestWebSocket {
  /** Text messages received so far. */
  readonly messages: string[];
  /** Set once the server's close frame arrived. */
  closeFrame: { code: number; reason: string } | null;
  /** Resolves when the socket has closed. */
  readonly closed: Promise<void>;
  /** Sends a masked close frame (1000). */
  close(): void;
}

/** The outcome of an upgrade request: the connection, or the HTTP answer that refused it. */
export type UpgradeResult =
  | { readonly upgraded: true; readonly ws: TestWebSocket }
  | { readonly upgraded: false; readonly status: number; readonly body: string };

function readFrames(
  socket: Socket,
  ws: { messages: string[]; closeFrame: TestWebSocket['closeFrame'] },
  head: Buffer,
): void {
  let pending = head;
  const drain = (): void => {
    for (;;) {
      if (pending.length < 2) return;
      const opcode = pending[0]! & 0x0f;
      let len = pending[1]! & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (pending.length < 4) return;
        len = pending.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (pending.length < 10) return;
        len = Number(pending.readBigUInt64BE(2));
        offset = 10;
      }
      if (pending.length < offset + len) return;
      const payload = pending.subarray(offset, offset + len);
      pending = pending.subarray(offset + len);
      if (opcode === 0x1) ws.messages.push(payload.toString('utf8'));
      if (opcode === 0x8) {
        ws.closeFrame = {
          code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005,
          reason: payload.subarray(2).toString('utf8'),
        };
      }
    }
  };
  drain();
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    drain();
  });
}

/** Opens `url` (http://…) as a websocket with `headers`. */
export function openWebSocket(url: string, headers: Record<string, string>): Promise<UpgradeResult> {
  const u = new URL(url);
  const key = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const req = request({
      host: u.hostname,
      port: u.port,
      path: `${u.pathname}${u.search}`,
      headers: {
        ...headers,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': key,
      },
    });
    req.on('upgrade', (res, socket: Socket, head: Buffer) => {
      // As a browser does: the server must prove it read this handshake (RFC 6455, the accept key).
      const expected = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      if (res.headers['sec-websocket-accept'] !== expected) {
        socket.destroy();
        return reject(new Error('bad Sec-WebSocket-Accept'));
      }
      const state = { messages: [] as string[], closeFrame: null as TestWebSocket['closeFrame'] };
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      readFrames(socket, state, head);
      const ws: TestWebSocket = {
        messages: state.messages,
        get closeFrame() {
          return state.closeFrame;
        },
        set closeFrame(v) {
          state.closeFrame = v;
        },
        closed,
        close() {
          const mask = randomBytes(4);
          const payload = Buffer.from([0x03, 0xe8]);
          for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
          socket.write(Buffer.concat([Buffer.from([0x88, 0x80 | payload.length]), mask, payload]));
        },
      };
      resolve({ upgraded: true, ws });
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ upgraded: false, status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
