/**
 * @module template
 * The miner's template record and its text form. A template token is a literal string or `null` for a wildcard;
 * the text form joins tokens with single spaces and writes wildcards as `<*>` (a literal `<*>` never survives
 * masking, so the text form is unambiguous).
 */
import type { Param } from '@sluice/core';
import { WILDCARD_TEXT } from './masker.js';

/** What a template stands for: mined text, a structured body, or an absent body. */
export type TemplateKind = 'text' | 'structured' | 'absent';

/** One template token: literal text, or `null` for `<*>`. */
export type TemplateToken = string | null;

/** Internal, mutable template state (widening rewrites `tokens` and bumps `version`). */
export interface MinerTemplate {
  readonly id: bigint;
  version: number;
  readonly kind: TemplateKind;
  readonly severityNumber: number;
  /** Scope name, or `sha256:<hex>` of it when longer than the key limit (see `scope-key.ts`). */
  readonly scopeKey: string;
  /** Text templates only: the tree keys it was inserted under (`null` = the `<*>` child). */
  readonly path: readonly TemplateToken[];
  /** Text templates only. */
  readonly tokens: TemplateToken[];
}

/** Public view of one template (for `list_templates`). */
export interface TemplateInfo {
  readonly templateId: bigint;
  readonly version: number;
  /** Text form with `<*>`; `''` for structured and absent-body templates. */
  readonly template: string;
  readonly kind: TemplateKind;
  readonly severityNumber: number;
  readonly scopeKey: string;
}

/** Text form of template tokens: single spaces, `<*>` for wildcards. */
export function templateText(tokens: readonly TemplateToken[]): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    if (i > 0) out += ' ';
    out += tokens[i] ?? WILDCARD_TEXT;
  }
  return out;
}

/**
 * Rebuilds a line from a template and its params, with single-space separators: each `<*>` takes the next param's
 * value. Exact for every non-lossy text row; an OVERFLOW param renders as its description (such rows are lossy and
 * are served from the stored body).
 *
 * @param template the text form (`'GET <*> returned <*>'`) or its tokens (`['GET', '<*>', …]`).
 * @throws RangeError when the number of params differs from the number of `<*>` (a caller bug).
 * @example renderTemplate('user <*> logged in', [{ typeTag: PARAM_TYPE.STR, value: 'bob' }]) // 'user bob logged in'
 */
export function renderTemplate(template: string | readonly string[], params: readonly Param[]): string {
  const tokens = typeof template === 'string' ? (template === '' ? [] : template.split(' ')) : template;
  const out: string[] = [];
  let p = 0;
  for (const t of tokens) {
    if (t === WILDCARD_TEXT) {
      const param = params[p++];
      if (param === undefined) throw new RangeError(`template has more <*> than the ${params.length} params`);
      out.push(param.value);
    } else out.push(t);
  }
  if (p !== params.length) throw new RangeError(`template has ${p} <*> but ${params.length} params were given`);
  return out.join(' ');
}
