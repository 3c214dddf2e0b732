/**
 * @module probes
 * Writes `/healthz`, `/readyz` and `/metrics` on the OTLP/HTTP listener (node:http). What they answer is decided
 * once, in `@sluice/core`'s `answerProbe`, for every listener. The probes stay open with auth enabled (kubelet
 * probes carry no token); `/metrics` is the `admin` surface (docs/security.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerProbe, type Probes } from '@sluice/core';
import type { AccessGate } from '@sluice/edge';

/** Serves a probe path if `req` is one; returns false when the path is not a probe. */
export function serveProbe(req: IncomingMessage, res: ServerResponse, probes: Probes, access: AccessGate): boolean {
  const answer = answerProbe(req.method ?? 'GET', (req.url ?? '/').split('?')[0] ?? '/', probes, {
    authorizeMetrics: () => {
      const admitted = access.admitAdmin(req.headersDistinct['authorization'] ?? []);
      return admitted.ok ? null : { message: admitted.error.message, challenge: access.challenge };
    },
  });
  if (answer === null) return false;
  // node:http sends no body for HEAD even when one is given.
  void answer.then((r) => res.writeHead(r.status, r.headers).end(r.body));
  return true;
}
