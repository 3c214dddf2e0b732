/**
 * @module miner-state
 * Everything a miner remembers — and therefore everything a snapshot holds: the shared template-id counter, the
 * per-tenant trees and templates, and the outcome counters.
 */
import { createHash } from 'node:crypto';
import { choosePath, insertAt, rootKey } from './prefix-tree.js';
import type { PrefixRoots } from './prefix-tree.js';
import type { MinerTemplate, TemplateKind } from './template.js';
import { utf8ByteLength } from './utf8.js';

/** Why a line got `NO_TEMPLATE`. */
export type ParseFailureReason = 'below_floor' | 'line_too_long' | 'template_ceiling' | 'degenerate_widening';

/** Every {@link ParseFailureReason}, in a fixed order. */
export const PARSE_FAILURE_REASONS: readonly ParseFailureReason[] = Object.freeze([
  'below_floor',
  'line_too_long',
  'template_ceiling',
  'degenerate_widening',
]);

/** Outcome counters (monotonic; carried across snapshot/restore). */
export interface MinerStats {
  /** Records passed to `mine`. */
  readonly records: number;
  /** Records returned with `lossy = true` (parse failures included). */
  readonly lossy: number;
  readonly parseFailures: Readonly<Record<ParseFailureReason, number>>;
}

/** One tenant's tree and templates. */
export interface TenantState {
  readonly roots: PrefixRoots;
  /** Structured and absent-body templates keyed by {@link specialKey}. */
  readonly special: Map<string, MinerTemplate>;
  /** All templates of the tenant in creation (= id) order. */
  readonly templates: MinerTemplate[];
}

/** The whole miner state. */
export interface MinerState {
  nextTemplateId: bigint;
  readonly tenants: Map<string, TenantState>;
  records: number;
  lossy: number;
  readonly parseFailures: Record<ParseFailureReason, number>;
}

/** Scope names longer than this many UTF-8 bytes are keyed by their SHA-256 (bounds key memory). */
export const MAX_SCOPE_KEY_BYTES = 256;

/** An empty state whose first template id is 1. */
export function newMinerState(): MinerState {
  return {
    nextTemplateId: 1n,
    tenants: new Map(),
    records: 0,
    lossy: 0,
    parseFailures: { below_floor: 0, line_too_long: 0, template_ceiling: 0, degenerate_widening: 0 },
  };
}

/** The tenant's state, created on first use. */
export function tenantState(state: MinerState, tenant: string): TenantState {
  let t = state.tenants.get(tenant);
  if (t === undefined) {
    t = { roots: new Map(), special: new Map(), templates: [] };
    state.tenants.set(tenant, t);
  }
  return t;
}

/** The key of a scope name: itself, or `\0sha256:<hex>` when longer than {@link MAX_SCOPE_KEY_BYTES}. */
export function scopeKeyOf(scopeName: string): string {
  if (scopeName.length * 3 <= MAX_SCOPE_KEY_BYTES || utf8ByteLength(scopeName) <= MAX_SCOPE_KEY_BYTES) {
    return scopeName;
  }
  return `\u0000sha256:${createHash('sha256').update(scopeName, 'utf8').digest('hex')}`;
}

/** Key of a structured/absent template. */
export function specialKey(kind: TemplateKind, severityNumber: number, scopeKey: string): string {
  return `${kind}\u0000${severityNumber}\u0000${scopeKey}`;
}

/**
 * Registers a template in its tenant. For a text template with an empty `path`, the path is chosen now (fresh
 * creation); a restored template carries the path it was created under.
 */
export function addTemplate(
  t: TenantState,
  template: MinerTemplate,
  treeKeys: readonly (string | null)[] | undefined,
  maxNodeChildren: number,
): MinerTemplate {
  if (template.kind === 'text') {
    const key = rootKey(template.severityNumber, template.scopeKey, template.tokens.length);
    const path = treeKeys !== undefined ? choosePath(t.roots, key, treeKeys, maxNodeChildren) : template.path;
    const placed: MinerTemplate = treeKeys !== undefined ? { ...template, path } : template;
    insertAt(t.roots, key, path, placed);
    t.templates.push(placed);
    return placed;
  }
  t.special.set(specialKey(template.kind, template.severityNumber, template.scopeKey), template);
  t.templates.push(template);
  return template;
}
