/**
 * @module snapshot
 * The miner's durable form: canonical JSON (UTF-8), so identical states give identical bytes. Tenants are sorted,
 * templates are in id order, bigints are decimal strings and wildcards are JSON `null`. A template carries the
 * tree path it was inserted under, so a restore rebuilds the identical tree (child counts included) without
 * re-deciding anything.
 *
 * ```
 * {"format":"sluice.miner.snapshot","version":1,"options":{…},"nextTemplateId":"42",
 *  "stats":{"records":…,"lossy":…,"parseFailures":{…}},
 *  "tenants":[["acme",[["1",2,"t",9,"scope",["GET"],["GET",null,"returned",null]], ["7",1,"s",17,"scope"]]]]}
 * ```
 * Template rows: `[id, version, kind ("t" text | "s" structured | "a" absent), severity, scopeKey, path?, tokens?]`.
 */
import { addTemplate, MAX_SCOPE_KEY_BYTES, newMinerState, PARSE_FAILURE_REASONS, tenantState } from './miner-state.js';
import type { MinerState } from './miner-state.js';
import { resolveMinerOptions } from './options.js';
import type { MinerOptions } from './options.js';
import type { MinerTemplate, TemplateKind, TemplateToken } from './template.js';

/** Value of the snapshot's `format` field. */
export const SNAPSHOT_FORMAT = 'sluice.miner.snapshot';
/** Current snapshot format version. */
export const SNAPSHOT_VERSION = 1;

const KIND_CODE: Record<TemplateKind, string> = { text: 't', structured: 's', absent: 'a' };
const CODE_KIND: Record<string, TemplateKind> = { t: 'text', s: 'structured', a: 'absent' };

type Row = [string, number, string, number, string, ...TemplateToken[][]];

/** Serializes `state` (with the options it was mined under) to UTF-8 JSON bytes. */
export function encodeSnapshot(state: MinerState, options: MinerOptions): Uint8Array {
  const tenants = [...state.tenants.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const doc = {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    options: {
      similarityThreshold: options.similarityThreshold,
      similarityFloor: options.similarityFloor,
      prefixDepth: options.prefixDepth,
      maxNodeChildren: options.maxNodeChildren,
      paramByteLimit: options.paramByteLimit,
      maxTemplatesPerTenant: options.maxTemplatesPerTenant,
      maxLineTokens: options.maxLineTokens,
    },
    nextTemplateId: state.nextTemplateId.toString(),
    stats: {
      records: state.records,
      lossy: state.lossy,
      parseFailures: Object.fromEntries(PARSE_FAILURE_REASONS.map((r) => [r, state.parseFailures[r]])),
    },
    tenants: tenants.map((name) => {
      const t = state.tenants.get(name);
      const rows = (t?.templates ?? []).map((x): Row => {
        const head: Row = [x.id.toString(), x.version, KIND_CODE[x.kind], x.severityNumber, x.scopeKey];
        if (x.kind === 'text') head.push([...x.path], [...x.tokens]);
        return head;
      });
      return [name, rows];
    }),
  };
  return new TextEncoder().encode(JSON.stringify(doc));
}

/** A decoded snapshot. */
export interface DecodedSnapshot {
  readonly options: MinerOptions;
  readonly state: MinerState;
}

function fail(why: string): never {
  throw new Error(`invalid miner snapshot: ${why}`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function tokenArray(v: unknown, what: string): TemplateToken[] {
  if (!Array.isArray(v)) fail(`${what} is not an array`);
  return v.map((x) => {
    if (x !== null && typeof x !== 'string') fail(`${what} holds a non-string token`);
    return x;
  });
}

function parseId(v: unknown): bigint {
  if (typeof v !== 'string' || !/^[0-9]{1,20}$/.test(v)) fail(`bad template id ${JSON.stringify(v)}`);
  return BigInt(v);
}

/**
 * Parses and validates snapshot bytes and rebuilds the state.
 *
 * @throws Error `invalid miner snapshot: …` on any structural problem (never a partially restored miner).
 */
export function decodeSnapshot(bytes: Uint8Array): DecodedSnapshot {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    fail(`not UTF-8 JSON (${(e as Error).message})`);
  }
  if (!isRecord(doc) || doc['format'] !== SNAPSHOT_FORMAT) fail('unknown format');
  if (doc['version'] !== SNAPSHOT_VERSION) fail(`unsupported version ${String(doc['version'])}`);
  if (!isRecord(doc['options'])) fail('options missing');
  let options: MinerOptions;
  try {
    options = resolveMinerOptions(doc['options'] as Partial<MinerOptions>);
  } catch (e) {
    fail((e as Error).message);
  }
  const state = newMinerState();
  state.nextTemplateId = parseId(doc['nextTemplateId']);
  if (state.nextTemplateId < 1n) fail('nextTemplateId must be ≥ 1');
  const stats = doc['stats'];
  if (!isRecord(stats) || !isCount(stats['records']) || !isCount(stats['lossy']) || !isRecord(stats['parseFailures'])) {
    fail('stats missing');
  }
  state.records = stats['records'];
  state.lossy = stats['lossy'];
  for (const r of PARSE_FAILURE_REASONS) {
    const v = stats['parseFailures'][r];
    if (!isCount(v)) fail(`stats.parseFailures.${r} missing`);
    state.parseFailures[r] = v;
  }
  const tenants = doc['tenants'];
  if (!Array.isArray(tenants)) fail('tenants missing');
  const seenIds = new Set<bigint>();
  for (const entry of tenants) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) fail('bad tenant entry');
    const name = entry[0];
    if (state.tenants.has(name)) fail(`tenant ${JSON.stringify(name)} appears twice`);
    const t = tenantState(state, name);
    let lastId = 0n;
    for (const row of entry[1] as unknown[]) {
      if (!Array.isArray(row)) fail('bad template row');
      const id = parseId(row[0]);
      const version = row[1];
      const kind = typeof row[2] === 'string' ? CODE_KIND[row[2]] : undefined;
      const severityNumber = row[3];
      const scopeKey = row[4];
      if (id <= lastId || id >= state.nextTemplateId || seenIds.has(id))
        fail(`template id ${id} out of order or reused`);
      if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) fail(`bad version for ${id}`);
      if (kind === undefined) fail(`bad kind for ${id}`);
      if (typeof severityNumber !== 'number' || !Number.isInteger(severityNumber)) fail(`bad severity for ${id}`);
      if (typeof scopeKey !== 'string') fail(`bad scope for ${id}`);
      let path: TemplateToken[] = [];
      let tokens: TemplateToken[] = [];
      if (kind === 'text') {
        path = tokenArray(row[5], `path of ${id}`);
        tokens = tokenArray(row[6], `tokens of ${id}`);
        if (path.length !== Math.min(options.prefixDepth, tokens.length)) fail(`path length of ${id}`);
      }
      const template: MinerTemplate = { id, version, kind, severityNumber, scopeKey, path, tokens };
      addTemplate(t, template, undefined, options.maxNodeChildren);
      seenIds.add(id);
      lastId = id;
    }
  }
  return { options, state };
}

/**
 * An upper bound on {@link encodeSnapshot}'s size for `tenantCount` tenants at saturation, derived only from the
 * caps: every template row holds at most `prefixDepth + maxLineTokens` tokens of at most `paramByteLimit` UTF-8
 * bytes (longer tokens are masked), each costing at most 6 JSON bytes per byte (`\u00XX`) plus quotes and a comma;
 * the scope key is at most {@link MAX_SCOPE_KEY_BYTES} bytes; ids, versions and severities are short numbers.
 * This is the miner's memory bound in serialized form (the in-memory form is a constant factor of it).
 *
 * @param maxTenantNameBytes the tenant-id grammar's limit (128 in Sluice).
 */
export function maxSnapshotBytes(options: MinerOptions, tenantCount: number, maxTenantNameBytes = 128): number {
  const HEADER = 1024; // format, version, options and the counters (each a ≤ 16-digit number)
  const tokenBytes = options.paramByteLimit * 6 + 3;
  const rowFixed = 2 + (20 + 3) + (10 + 1) + 4 + (12 + 1) + (MAX_SCOPE_KEY_BYTES * 6 + 3) + 4;
  const row = rowFixed + (options.prefixDepth + options.maxLineTokens) * tokenBytes;
  const tenantFixed = 8 + maxTenantNameBytes * 6;
  return HEADER + tenantCount * (tenantFixed + options.maxTemplatesPerTenant * row);
}
