/**
 * @module host-port
 * The `host:port` form of listen addresses (`receiver.grpc_addr`, `receiver.http_addr`, `querier.http_addr`).
 * Port 0 is allowed: the OS picks a free port (tests use it).
 */
import type { Result } from '@sluice/core';

/** A listen address split into the parts `server.listen` takes. */
export interface HostPort {
  /** Host name or IP literal; an IPv6 literal is returned without its brackets. */
  readonly host: string;
  /** 0–65535; 0 means "any free port". */
  readonly port: number;
}

const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const IPV6_BODY = /^[0-9A-Fa-f:.]+(?:%[A-Za-z0-9._-]+)?$/;
const PORT = /^\d{1,5}$/;

/**
 * Splits `host:port` (or `[ipv6]:port`) and validates both parts.
 *
 * @example
 * ```ts
 * splitHostPort('0.0.0.0:4318'); // { ok: true, value: { host: '0.0.0.0', port: 4318 } }
 * splitHostPort('[::1]:0');      // { ok: true, value: { host: '::1', port: 0 } }
 * ```
 */
export function splitHostPort(addr: string): Result<HostPort, string> {
  const bad = {
    ok: false as const,
    error: `must be host:port with a port 0-65535 (e.g. 0.0.0.0:4318), got ${JSON.stringify(addr)}`,
  };
  let host: string;
  let portText: string;
  if (addr.startsWith('[')) {
    const close = addr.indexOf(']');
    if (close < 0 || addr[close + 1] !== ':') return bad;
    host = addr.slice(1, close);
    portText = addr.slice(close + 2);
    if (!IPV6_BODY.test(host) || !host.includes(':')) return bad;
  } else {
    const colon = addr.lastIndexOf(':');
    if (colon < 0) return bad;
    host = addr.slice(0, colon);
    portText = addr.slice(colon + 1);
    if (!HOST_NAME.test(host)) return bad;
  }
  if (!PORT.test(portText)) return bad;
  const port = Number(portText);
  if (port > 65535) return bad;
  return { ok: true, value: { host, port } };
}
