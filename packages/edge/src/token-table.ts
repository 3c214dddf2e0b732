/**
 * @module token-table
 * The bearer tokens Sluice accepts, as the operator wrote them (`auth.tokens_file` or `auth.tokens`): one entry
 * per token with a name, the SHA-256 of the token (never the token itself), the tenants it may use and the
 * surfaces it may call. Parsing reports every problem of the document at once, each with its path; messages
 * never echo a value that could be a secret.
 *
 * Document shape (YAML or JSON; see docs/security.md):
 * ```yaml
 * tokens:
 *   - name: collector-team-a
 *     sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
 *     tenants: [team-a]          # or: all_tenants: true
 *     surfaces: [ingest]         # ingest | query | mcp | admin
 * ```
 */
import { describeTenantError, parseTenant, type Result } from '@sluice/core';
import { isSurface, SURFACES, type Surface } from './surface.js';

/** One accepted token. */
export interface TokenGrant {
  /** Operator-chosen label, for logs (the token itself is never logged or stored). */
  readonly name: string;
  /** SHA-256 of the token's UTF-8 bytes (32 bytes). */
  readonly sha256: Uint8Array;
  /** Tenants the token may name, or `'all'`. */
  readonly tenants: ReadonlySet<string> | 'all';
  /** Surfaces the token authenticates on. */
  readonly surfaces: ReadonlySet<Surface>;
}

/** Every accepted token (at least one). */
export interface TokenTable {
  readonly grants: readonly TokenGrant[];
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const ENTRY_KEYS = ['name', 'sha256', 'tenants', 'all_tenants', 'surfaces'];
/** Keys that look like a plaintext token: refused with a pointer to the hash. */
const PLAINTEXT_KEYS = ['token', 'secret', 'value', 'bearer', 'password'];

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null || value === undefined) return 'nothing';
  if (typeof value === 'object') return 'a mapping';
  return typeof value === 'string' ? 'text' : `a ${typeof value}`;
}

function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function parseEntry(entry: unknown, at: string, issues: string[]): TokenGrant | null {
  if (!isRecord(entry)) {
    issues.push(
      `${at}: must be a mapping with name, sha256, tenants (or all_tenants) and surfaces, got ${describe(entry)}`,
    );
    return null;
  }
  const before = issues.length;
  for (const key of Object.keys(entry)) {
    if (ENTRY_KEYS.includes(key)) continue;
    issues.push(
      PLAINTEXT_KEYS.includes(key)
        ? `${at}.${key}: tokens are never stored in plain text; give sha256, the SHA-256 of the token in hex (printf %s "$TOKEN" | sha256sum)`
        : `${at}.${key}: unknown key (allowed: ${ENTRY_KEYS.join(', ')})`,
    );
  }
  const name = entry['name'];
  if (typeof name !== 'string' || !NAME.test(name)) {
    issues.push(`${at}.name: must be 1-64 characters of A-Z a-z 0-9 . _ -, got ${describe(name)}`);
  }
  const sha256 = entry['sha256'];
  if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) {
    // Not echoed: an operator may have pasted the token itself here.
    issues.push(`${at}.sha256: must be 64 hexadecimal characters (the SHA-256 of the token), got ${describe(sha256)}`);
  }
  const tenants = parseTenants(entry, at, issues);
  const surfaces = parseSurfaces(entry['surfaces'], `${at}.surfaces`, issues);
  if (issues.length > before || tenants === null || surfaces === null) return null;
  return { name: name as string, sha256: fromHex(sha256 as string), tenants, surfaces };
}

function parseTenants(
  entry: Readonly<Record<string, unknown>>,
  at: string,
  issues: string[],
): TokenGrant['tenants'] | null {
  const list = entry['tenants'];
  const all = entry['all_tenants'];
  if (all !== undefined && all !== true && all !== false) {
    issues.push(`${at}.all_tenants: must be true or false, got ${describe(all)}`);
    return null;
  }
  if (all === true) {
    if (list !== undefined) {
      issues.push(`${at}: give either tenants or all_tenants: true, not both`);
      return null;
    }
    return 'all';
  }
  if (!Array.isArray(list) || list.length === 0) {
    issues.push(`${at}.tenants: must be a non-empty list of tenants (or set all_tenants: true), got ${describe(list)}`);
    return null;
  }
  const set = new Set<string>();
  list.forEach((tenant: unknown, i) => {
    if (typeof tenant !== 'string') {
      issues.push(`${at}.tenants[${i}]: must be a tenant name, got ${describe(tenant)}`);
      return;
    }
    const parsed = parseTenant(tenant);
    if (!parsed.ok) issues.push(`${at}.tenants[${i}]: ${describeTenantError(parsed.error)}`);
    else set.add(parsed.value);
  });
  return set;
}

function parseSurfaces(value: unknown, at: string, issues: string[]): ReadonlySet<Surface> | null {
  if (!Array.isArray(value) || value.length === 0) {
    issues.push(`${at}: must be a non-empty list of ${SURFACES.join(' | ')}, got ${describe(value)}`);
    return null;
  }
  const set = new Set<Surface>();
  value.forEach((surface: unknown, i) => {
    if (typeof surface === 'string' && isSurface(surface)) set.add(surface);
    else issues.push(`${at}[${i}]: must be one of ${SURFACES.join(', ')}, got ${describe(surface)}`);
  });
  return set;
}

/**
 * Validates a parsed token document (`{tokens: [...]}`).
 * @returns the table, or every problem found (paths relative to the document, e.g. `tokens[2].sha256`).
 */
export function parseTokenDocument(document: unknown): Result<TokenTable, string[]> {
  if (!isRecord(document) || !('tokens' in document)) {
    return { ok: false, error: [`must be a mapping with a tokens list, got ${describe(document)}`] };
  }
  const issues: string[] = [];
  for (const key of Object.keys(document)) {
    if (key !== 'tokens') issues.push(`${key}: unknown key (the document holds only tokens)`);
  }
  const list = document['tokens'];
  if (!Array.isArray(list) || list.length === 0) {
    issues.push(
      `tokens: must be a non-empty list (with auth enabled and no token, every request would be refused), got ${describe(list)}`,
    );
    return { ok: false, error: issues };
  }
  const grants: TokenGrant[] = [];
  const seenHash = new Map<string, number>();
  const seenName = new Map<string, number>();
  list.forEach((entry: unknown, i) => {
    const grant = parseEntry(entry, `tokens[${i}]`, issues);
    if (grant === null) return;
    const hex = Buffer.from(grant.sha256).toString('hex');
    const sameHash = seenHash.get(hex);
    if (sameHash !== undefined) issues.push(`tokens[${i}].sha256: the same token as tokens[${sameHash}]`);
    else seenHash.set(hex, i);
    const sameName = seenName.get(grant.name);
    if (sameName !== undefined) issues.push(`tokens[${i}].name: already used by tokens[${sameName}]`);
    else seenName.set(grant.name, i);
    grants.push(grant);
  });
  return issues.length > 0 ? { ok: false, error: issues } : { ok: true, value: { grants } };
}
