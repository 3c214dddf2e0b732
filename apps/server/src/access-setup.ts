/**
 * @module access-setup
 * Builds the process's one access gate and its listeners' connection caps from the configuration, so every
 * surface (OTLP/HTTP, OTLP/gRPC, the query listener; later the console and the Loki API) shares the same token
 * table, tenant rule and file-handle budget (docs/security.md).
 */
import type { SluiceConfig } from '@sluice/config';
import type { Result } from '@sluice/core';
import {
  createAccessGate,
  createConnectionCap,
  loadTokenTable,
  planConnectionCaps,
  type AccessGate,
  type ConnectionCap,
  type ConnectionPlan,
  type ListenerCap,
  type ListenerCapRequest,
  type RefusalKind,
  type TokenIssue,
} from '@sluice/edge';

/**
 * Loads the token table (when `auth.enabled`) and creates the gate.
 * @returns the gate, or every problem of the token document (reported like configuration issues)
 */
export async function loadAccessGate(config: SluiceConfig): Promise<Result<AccessGate, TokenIssue[]>> {
  const { auth, tenancy } = config;
  const tenancyRule = { header: tenancy.header, defaultTenant: tenancy.defaultTenant };
  if (!auth.enabled) {
    return { ok: true, value: createAccessGate({ tokens: null, tenancy: tenancyRule, protectMetrics: true }) };
  }
  // The schema guarantees exactly one source when auth is enabled.
  const source =
    auth.tokensFile !== null
      ? ({ kind: 'file', path: auth.tokensFile } as const)
      : ({ kind: 'inline', text: auth.tokens ?? '' } as const);
  const tokens = await loadTokenTable(source);
  if (!tokens.ok) return tokens;
  return {
    ok: true,
    value: createAccessGate({ tokens: tokens.value, tenancy: tenancyRule, protectMetrics: auth.protectMetrics }),
  };
}

/** The cap of each listener the enabled roles open. */
export function planListenerCaps(config: SluiceConfig, openFileLimit: number | null): ConnectionPlan {
  const listeners: ListenerCapRequest[] = [];
  if (config.receiver.enabled) {
    listeners.push(
      { listener: 'otlp_http', key: 'receiver.max_http_connections', explicit: config.receiver.maxHttpConnections },
      { listener: 'otlp_grpc', key: 'receiver.max_grpc_connections', explicit: config.receiver.maxGrpcConnections },
    );
  }
  if (config.querier.enabled) {
    listeners.push({ listener: 'query_http', key: 'querier.max_connections', explicit: config.querier.maxConnections });
  }
  return planConnectionCaps(listeners, openFileLimit);
}

/** One {@link ConnectionCap} per planned listener, reporting refusals to `onRefused`. */
export function createListenerCaps(
  plan: ConnectionPlan,
  onRefused: (cap: ListenerCap, how: RefusalKind) => void,
): ReadonlyMap<string, ConnectionCap> {
  const caps = new Map<string, ConnectionCap>();
  for (const cap of plan.caps) {
    // HTTP/2 (gRPC) has no cheap "busy" answer before its handshake: connections over the cap are closed at accept.
    caps.set(cap.listener, createConnectionCap({ cap, onRefused, answersRefusals: cap.listener !== 'otlp_grpc' }));
  }
  return caps;
}
