/**
 * @module miner
 * The online template miner: `createMiner(options)` returns a {@link Miner} whose output is a pure function of
 * the sequence of `(tenant, record)` pairs it has been fed (no clocks, no randomness; every ordering that can
 * influence an id or a match is an array in creation order). Zones and the bounded-memory argument are in the
 * package README.
 */
import { PARAM_TYPE, NO_TEMPLATE, anyValueToJson, effectiveTimeUnixNano } from '@sluice/core';
import type { LogRecord, MinedFields, Param, TemplateAuditEvent } from '@sluice/core';
import { LITERAL, classifyToken, isMasked, overflowValue } from './masker.js';
import type { TokenClass } from './masker.js';
import { addTemplate, newMinerState, scopeKeyOf, specialKey, tenantState } from './miner-state.js';
import type { MinerState, MinerStats, ParseFailureReason, TenantState } from './miner-state.js';
import { resolveMinerOptions } from './options.js';
import type { MinerOptions } from './options.js';
import { findGroup, rootKey } from './prefix-tree.js';
import { decodeSnapshot, encodeSnapshot } from './snapshot.js';
import { templateText } from './template.js';
import type { MinerTemplate, TemplateInfo, TemplateKind, TemplateToken } from './template.js';
import { tokenize } from './tokenizer.js';
import { truncateUtf8 } from './utf8.js';

/** Bytes of the triggering line kept in an audit event. */
export const AUDIT_SAMPLE_BYTES = 256;

/** {@link MinedFields} plus why the line was not mined, when it was not. */
export interface MineResult {
  readonly fields: MinedFields;
  /** `null` unless `fields.templateId === NO_TEMPLATE`. */
  readonly failure: ParseFailureReason | null;
}

/** A per-process template miner. Not thread-safe; one instance per sink. */
export interface Miner {
  /** The effective (validated) options. */
  readonly options: MinerOptions;
  /** Mines one record of `tenant`. */
  mine(tenant: string, record: LogRecord): MinedFields;
  /** Like {@link Miner.mine}, with the parse-failure reason. */
  mineDetailed(tenant: string, record: LogRecord): MineResult;
  /** Returns and clears the audit events emitted since the last drain, in emission order. */
  drainAuditEvents(): TemplateAuditEvent[];
  /**
   * Serializes the whole state (all tenants, the id counter and the counters; not the pending audit events —
   * drain them first). Byte-identical for identical input sequences.
   */
  snapshot(): Uint8Array;
  /** Number of templates of `tenant` (text, structured and absent-body); of all tenants when omitted. */
  templateCount(tenant?: string): number;
  /** Templates of `tenant` in id order, at their current version. */
  templates(tenant: string): TemplateInfo[];
  /** Outcome counters. */
  stats(): MinerStats;
}

const NO_PARAMS: readonly Param[] = Object.freeze([]);

class TemplateMiner implements Miner {
  readonly options: MinerOptions;
  readonly #state: MinerState;
  #events: TemplateAuditEvent[] = [];

  constructor(options: MinerOptions, state: MinerState) {
    this.options = options;
    this.#state = state;
  }

  mine(tenant: string, record: LogRecord): MinedFields {
    return this.mineDetailed(tenant, record).fields;
  }

  mineDetailed(tenant: string, record: LogRecord): MineResult {
    const state = this.#state;
    state.records++;
    const t = tenantState(state, tenant);
    const body = record.body;
    const result =
      body !== null && body.kind === 'string'
        ? this.#mineText(tenant, t, record, body.value)
        : this.#mineSpecial(tenant, t, record, body === null ? 'absent' : 'structured');
    if (result.fields.lossy) state.lossy++;
    if (result.failure !== null) state.parseFailures[result.failure]++;
    return result;
  }

  drainAuditEvents(): TemplateAuditEvent[] {
    const out = this.#events;
    this.#events = [];
    return out;
  }

  snapshot(): Uint8Array {
    return encodeSnapshot(this.#state, this.options);
  }

  templateCount(tenant?: string): number {
    if (tenant !== undefined) return this.#state.tenants.get(tenant)?.templates.length ?? 0;
    let n = 0;
    for (const t of this.#state.tenants.values()) n += t.templates.length;
    return n;
  }

  templates(tenant: string): TemplateInfo[] {
    const t = this.#state.tenants.get(tenant);
    if (t === undefined) return [];
    return t.templates.map((x) => ({
      templateId: x.id,
      version: x.version,
      template: templateText(x.tokens),
      kind: x.kind,
      severityNumber: x.severityNumber,
      scopeKey: x.scopeKey,
    }));
  }

  stats(): MinerStats {
    const s = this.#state;
    return { records: s.records, lossy: s.lossy, parseFailures: { ...s.parseFailures } };
  }

  // Structured (non-string) and absent bodies: one template per (kind, severity_number, scope), confidence 1.
  #mineSpecial(tenant: string, t: TenantState, record: LogRecord, kind: TemplateKind): MineResult {
    const scopeKey = scopeKeyOf(record.scope.name);
    const existing = t.special.get(specialKey(kind, record.severityNumber, scopeKey));
    if (existing !== undefined) return clean(existing, NO_PARAMS, 1, false);
    if (t.templates.length >= this.options.maxTemplatesPerTenant) return failure('template_ceiling', 0);
    const template = addTemplate(
      t,
      this.#newTemplate(kind, record.severityNumber, scopeKey, []),
      undefined,
      this.options.maxNodeChildren,
    );
    const sample = record.body === null ? '' : truncateUtf8(anyValueToJson(record.body), AUDIT_SAMPLE_BYTES);
    this.#emitCreated(tenant, template, sample, record);
    return clean(template, NO_PARAMS, 1, false);
  }

  #mineText(tenant: string, t: TenantState, record: LogRecord, line: string): MineResult {
    const o = this.options;
    const { tokens, canonical } = tokenize(line);
    const n = tokens.length;
    if (n > o.maxLineTokens) return failure('line_too_long', 0);

    const classes: TokenClass[] = new Array<TokenClass>(n);
    for (let i = 0; i < n; i++) classes[i] = classifyToken(tokens[i] as string, o.paramByteLimit);
    const depth = Math.min(o.prefixDepth, n);
    const treeKeys: TemplateToken[] = new Array<TemplateToken>(depth);
    for (let i = 0; i < depth; i++) treeKeys[i] = classes[i] === LITERAL ? (tokens[i] as string) : null;

    const scopeKey = scopeKeyOf(record.scope.name);
    const key = rootKey(record.severityNumber, scopeKey, n);
    const group = findGroup(t.roots, key, treeKeys);

    // Best candidate: highest similarity, ties to the oldest (group order = creation order).
    let best: MinerTemplate | undefined;
    let bestSim = -1;
    if (group !== undefined) {
      for (const cand of group) {
        const sim = similarity(cand.tokens, tokens, classes);
        if (sim > bestSim) {
          best = cand;
          bestSim = sim;
          if (sim === 1) break;
        }
      }
    }

    if (best !== undefined && bestSim >= o.similarityThreshold) {
      const confidence = Math.min(1, bestSim / o.similarityThreshold);
      if (bestSim < 1) {
        const widened = mismatches(best.tokens, tokens, classes);
        if (widened.length > 0) {
          if (wouldBeAllWildcards(best.tokens, widened)) return failure('degenerate_widening', confidence);
          this.#widen(tenant, best, widened, line, record);
        }
      }
      return this.#attach(best, tokens, classes, canonical, confidence);
    }
    if (best !== undefined && bestSim < o.similarityFloor) {
      return failure('below_floor', bestSim / o.similarityThreshold);
    }
    // No candidate (a new shape: clean) or the lossy zone [floor, threshold): a new template.
    if (t.templates.length >= o.maxTemplatesPerTenant) return failure('template_ceiling', 0);
    const templateTokens: TemplateToken[] = new Array<TemplateToken>(n);
    for (let i = 0; i < n; i++) templateTokens[i] = (classes[i] as number) >= 0 ? null : (tokens[i] as string);
    const template = addTemplate(
      t,
      this.#newTemplate('text', record.severityNumber, scopeKey, templateTokens),
      treeKeys,
      o.maxNodeChildren,
    );
    this.#emitCreated(tenant, template, truncateUtf8(line, AUDIT_SAMPLE_BYTES), record);
    if (best === undefined) return this.#attach(template, tokens, classes, canonical, 1);
    const r = this.#attach(template, tokens, classes, canonical, bestSim / o.similarityThreshold);
    return { fields: { ...r.fields, lossy: true }, failure: null };
  }

  #attach(
    template: MinerTemplate,
    tokens: readonly string[],
    classes: readonly TokenClass[],
    canonical: boolean,
    confidence: number,
  ): MineResult {
    const params: Param[] = [];
    let lossy = !canonical;
    const tt = template.tokens;
    for (let i = 0; i < tt.length; i++) {
      if (tt[i] !== null) continue;
      const c = classes[i] as TokenClass;
      const token = tokens[i] as string;
      if (c === PARAM_TYPE.OVERFLOW) {
        lossy = true;
        params.push({ typeTag: PARAM_TYPE.OVERFLOW, value: overflowValue(token) });
      } else params.push({ typeTag: isMasked(c) ? c : PARAM_TYPE.STR, value: token });
    }
    return clean(template, params, confidence, lossy);
  }

  #newTemplate(kind: TemplateKind, severityNumber: number, scopeKey: string, tokens: TemplateToken[]): MinerTemplate {
    const id = this.#state.nextTemplateId++;
    return { id, version: 1, kind, severityNumber, scopeKey, path: [], tokens };
  }

  #emitCreated(tenant: string, template: MinerTemplate, sample: string, record: LogRecord): void {
    this.#events.push({
      eventType: 'template_created',
      tenantId: tenant,
      templateId: template.id,
      oldVersion: 0,
      newVersion: 1,
      oldTemplate: '',
      newTemplate: templateText(template.tokens),
      positionsWidened: [],
      triggeringLineSample: sample,
      timestampUnixNano: effectiveTimeUnixNano(record),
    });
  }

  #widen(tenant: string, template: MinerTemplate, positions: number[], line: string, record: LogRecord): void {
    const oldTemplate = templateText(template.tokens);
    const oldVersion = template.version;
    for (const p of positions) template.tokens[p] = null;
    template.version = oldVersion + 1;
    this.#events.push({
      eventType: 'template_widened',
      tenantId: tenant,
      templateId: template.id,
      oldVersion,
      newVersion: template.version,
      oldTemplate,
      newTemplate: templateText(template.tokens),
      positionsWidened: positions,
      triggeringLineSample: truncateUtf8(line, AUDIT_SAMPLE_BYTES),
      timestampUnixNano: effectiveTimeUnixNano(record),
    });
  }
}

/** Fraction of positions where the template has `<*>` or the same literal as an unmasked line token. */
function similarity(tpl: readonly TemplateToken[], tokens: readonly string[], classes: readonly TokenClass[]): number {
  const n = tpl.length;
  if (n === 0) return 1;
  let eq = 0;
  for (let i = 0; i < n; i++) {
    const x = tpl[i];
    if (x === null || ((classes[i] as number) < 0 && x === tokens[i])) eq++;
  }
  return eq / n;
}

function mismatches(
  tpl: readonly TemplateToken[],
  tokens: readonly string[],
  classes: readonly TokenClass[],
): number[] {
  const out: number[] = [];
  for (let i = 0; i < tpl.length; i++) {
    const x = tpl[i];
    if (x !== null && ((classes[i] as number) >= 0 || x !== tokens[i])) out.push(i);
  }
  return out;
}

function wouldBeAllWildcards(tpl: readonly TemplateToken[], widened: readonly number[]): boolean {
  let literals = 0;
  for (const x of tpl) if (x !== null) literals++;
  return literals === widened.length;
}

function clean(template: MinerTemplate, params: readonly Param[], confidence: number, lossy: boolean): MineResult {
  return {
    fields: { templateId: template.id, templateVersion: template.version, params, confidence, lossy },
    failure: null,
  };
}

function failure(reason: ParseFailureReason, confidence: number): MineResult {
  return {
    fields: {
      templateId: NO_TEMPLATE,
      templateVersion: 0,
      params: NO_PARAMS,
      confidence: Math.max(0, Math.min(1, confidence)),
      lossy: true,
    },
    failure: reason,
  };
}

/**
 * Creates an empty miner.
 *
 * @param options overrides of {@link DEFAULT_MINER_OPTIONS}.
 * @throws RangeError when an option is out of its documented range.
 * @example
 * const miner = createMiner({ maxTemplatesPerTenant: 5000 });
 * const fields = miner.mine('acme', record);
 */
export function createMiner(options: Partial<MinerOptions> = {}): Miner {
  return new TemplateMiner(resolveMinerOptions(options), newMinerState());
}

/**
 * Rebuilds a miner from {@link Miner.snapshot} bytes. Feeding it records N+1..M yields exactly what the
 * snapshotted miner would have yielded. `overrides` replace the snapshot's stored options (changing any of them
 * voids that equivalence for later records); `prefixDepth` cannot change because it shapes the stored tree.
 *
 * @throws Error when the snapshot is malformed; RangeError on invalid or incompatible overrides.
 */
export function restoreMiner(snapshot: Uint8Array, overrides: Partial<MinerOptions> = {}): Miner {
  const decoded = decodeSnapshot(snapshot);
  const options = resolveMinerOptions(overrides, decoded.options);
  if (options.prefixDepth !== decoded.options.prefixDepth) {
    throw new RangeError(
      `prefixDepth ${options.prefixDepth} differs from the snapshot's ${decoded.options.prefixDepth}; the tree shape depends on it`,
    );
  }
  return new TemplateMiner(options, decoded.state);
}
