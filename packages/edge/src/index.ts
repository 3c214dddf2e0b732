/**
 * @module @sluice/edge
 * Layer 1: the rules every listener applies before a request reaches a role — bearer-token authentication,
 * the tenant rule, and connection caps sized from the open-file limit. See docs/security.md.
 */
export type { Surface, TenantSurface } from './surface.js';
export { SURFACES, isSurface } from './surface.js';
export type { TenancyRule, TenantRefusal } from './tenant-rule.js';
export { resolveTenant } from './tenant-rule.js';
export type { TokenGrant, TokenTable } from './token-table.js';
export { parseTokenDocument } from './token-table.js';
export type { TokenIssue, TokenSource } from './load-token-table.js';
export { loadTokenTable, parseTokenText } from './load-token-table.js';
export { bearerToken, findGrant, hashToken } from './bearer.js';
export type {
  AccessGate,
  AccessGateOptions,
  AccessGrant,
  AccessRefusal,
  AccessRefusalKind,
  RequestCredentials,
} from './access-gate.js';
export { createAccessGate } from './access-gate.js';
export { PROC_SELF_LIMITS, parseOpenFileLimit, readOpenFileLimit } from './open-file-limit.js';
export type { ConnectionPlan, ListenerCap, ListenerCapRequest } from './connection-budget.js';
export {
  FALLBACK_CONNECTIONS,
  MAX_DERIVED_CONNECTIONS,
  MAX_REFUSAL_SLOTS,
  RESERVED_FILE_HANDLES,
  planConnectionCaps,
} from './connection-budget.js';
export type { ConnectionCap, ConnectionCapOptions, RefusalKind } from './connection-cap.js';
export { createConnectionCap } from './connection-cap.js';
