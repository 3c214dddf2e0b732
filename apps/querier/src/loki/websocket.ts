/**
 * @module websocket
 * The server side of RFC 6455 that the Loki tail needs, and nothing more: the opening handshake, unfragmented text
 * frames from server to client, and reading the client's control frames (close, ping). The client sends no data
 * on a Loki tail, so a data frame, a fragmented or unmasked frame, or a control frame over 125 bytes closes the
 * connection (1003 / 1002) instead of being buffered: what one client can make the querier hold is one frame
 * header. Written here rather than taken from a package because this is all of it (docs/grafana.md).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** One accepted websocket connection. */
export interface WebSocketConnection {
  /** Sends one text frame; `cb` runs once the socket has taken it. False when the connection is gone. */
  send(text: string, cb?: () => void): boolean;
  /** Sends a close frame (code, reason ≤ 123 bytes) and ends the socket. */
  close(code: number, reason: string): void;
  /** True once closed (by either side) or destroyed. */
  readonly closed: boolean;
  /** Registers a callback for when the connection is gone. */
  onClose(fn: () => void): void;
}

/** True when the request asks for a websocket upgrade with the version this server speaks (13). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return (
    (req.headers.upgrade ?? '').toLowerCase() === 'websocket' &&
    req.headers['sec-websocket-version'] === '13' &&
    typeof req.headers['sec-websocket-key'] === 'string'
  );
}

/** Answers an upgrade request with an HTTP error instead (the connection is then closed). */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  reason: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const bytes = Buffer.from(body, 'utf8');
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nconnection: close\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${bytes.length}\r\n${extra}\r\n${body}`,
  );
}

function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const header = n < 126 ? Buffer.alloc(2) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  header[0] = 0x80 | opcode;
  if (n < 126) header[1] = n;
  else if (n < 65536) {
    header[1] = 126;
    header.writeUInt16BE(n, 2);
  } else {
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([header, payload]);
}

/** Completes the handshake on an upgrade request and returns the connection. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex): WebSocketConnection {
  const accept = createHash('sha1')
    .update(`${req.headers['sec-websocket-key'] as string}${GUID}`)
    .digest('base64');
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept}\r\n\r\n`,
  );
  let closed = false;
  const closers: (() => void)[] = [];
  const gone = (): void => {
    if (closed) return;
    closed = true;
    for (const fn of closers.splice(0)) fn();
  };
  socket.once('close', gone);
  socket.once('error', () => socket.destroy());
  const close = (code: number, reason: string): void => {
    if (closed) return;
    const why = Buffer.from(reason, 'utf8').subarray(0, 123);
    const payload = Buffer.alloc(2 + why.length);
    payload.writeUInt16BE(code, 0);
    why.copy(payload, 2);
    socket.end(frame(0x8, payload));
    gone();
  };
  // Client frames: only control frames are expected; at most one header + 125 bytes is ever kept.
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      const fin = (pending[0]! & 0x80) !== 0;
      const opcode = pending[0]! & 0x0f;
      const masked = (pending[1]! & 0x80) !== 0;
      const len = pending[1]! & 0x7f;
      if (!masked || !fin) return close(1002, 'protocol error');
      if (opcode < 0x8) return close(1003, 'a Loki tail takes no messages');
      if (len > 125) return close(1002, 'protocol error');
      if (pending.length < 6 + len) {
        if (pending.length > 6 + 125) return close(1002, 'protocol error');
        return;
      }
      const mask = pending.subarray(2, 6);
      const payload = Buffer.from(pending.subarray(6, 6 + len));
      for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i % 4]!;
      pending = pending.subarray(6 + len);
      if (opcode === 0x8) return close(1000, '');
      if (opcode === 0x9 && !closed) socket.write(frame(0xa, payload));
    }
  });
  return {
    send(text, cb) {
      if (closed || socket.destroyed) return false;
      socket.write(frame(0x1, Buffer.from(text, 'utf8')), () => cb?.());
      return true;
    },
    close,
    get closed() {
      return closed;
    },
    onClose(fn) {
      if (closed) fn();
      else closers.push(fn);
    },
  };
}
