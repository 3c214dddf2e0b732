/**
 * @module probes
 * `/healthz`, `/readyz` and `/metrics`, served on every HTTP listener the process opens so each role of a split
 * deployment can be probed and scraped. The probes stay open with auth enabled (kubelet probes carry no token);
 * `/metrics` is the `admin` surface (docs/security.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Probes } from '@sluice/core';
import type { AccessGate } from '@sluice/edge';

/** Serves a probe path if `req` is one; returns false when the path is not a probe. */
export function serveProbe(req: IncomingMessage, res: ServerResponse, probes: Probes, access: AccessGate): boolean {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    return true;
  }
  if (path === '/readyz') {
    const reason = probes.notReadyReason();
    if (reason === null) res.writeHead(200, { 'content-type': 'text/plain' }).end('ready\n');
    else res.writeHead(503, { 'content-type': 'text/plain' }).end(`not ready: ${reason}\n`);
    return true;
  }
  if (path === '/metrics') {
    const admitted = access.admitAdmin(req.headersDistinct['authorization'] ?? []);
    if (!admitted.ok) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': access.challenge })
        .end(`${admitted.error.message}\n`);
      return true;
    }
    probes.metricsText().then(
      (text) => {
        if (text === null)
          res.writeHead(404, { 'content-type': 'text/plain' }).end('prometheus metrics are disabled\n');
        else res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(text);
      },
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
    );
    return true;
  }
  return false;
}
