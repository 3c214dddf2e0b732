/**
 * @module mined
 * What the template miner adds to each record, and the audit events it emits. Shared by the miner (which
 * produces them), storage (which writes them to Parquet) and the querier (which reads them).
 */

/** Parameter type tags (stored as `params[].type_tag`). */
export const PARAM_TYPE = Object.freeze({
  IP: 0,
  UUID: 1,
  NUM: 2,
  HEX: 3,
  TS: 4,
  PATH: 5,
  STR: 6,
  OVERFLOW: 7,
} as const);

/** One of the {@link PARAM_TYPE} values. */
export type ParamTypeTag = (typeof PARAM_TYPE)[keyof typeof PARAM_TYPE];

/** One extracted parameter: the token that stood where the template has `<*>`. */
export interface Param {
  readonly typeTag: ParamTypeTag;
  /** The parameter text (for OVERFLOW: a short description, the body is retained). */
  readonly value: string;
}

/** `template_id` 0: the line could not be mined (parse failure or overflow); its body is kept. */
export const NO_TEMPLATE = 0n;

/** Mining result for one record. */
export interface MinedFields {
  /** u64, shared id space across tenants, never reused; `0n` = {@link NO_TEMPLATE}. */
  readonly templateId: bigint;
  /** u32, starts at 1 (0 for NO_TEMPLATE). */
  readonly templateVersion: number;
  readonly params: readonly Param[];
  /** Similarity / threshold, in [0, 1]; 1 for structured bodies. */
  readonly confidence: number;
  /** True when the stored body, not the template, is the faithful rendering. */
  readonly lossy: boolean;
}

/** Kinds of template audit events (ordinals: docs/design/storage-format.md, "Audit records"). */
export type TemplateAuditEventType = 'template_created' | 'template_widened';

/** One template audit event, stored under `audit/`. */
export interface TemplateAuditEvent {
  readonly eventType: TemplateAuditEventType;
  readonly tenantId: string;
  readonly templateId: bigint;
  /** 0 for `template_created`. */
  readonly oldVersion: number;
  readonly newVersion: number;
  /** `''` for `template_created`. */
  readonly oldTemplate: string;
  readonly newTemplate: string;
  /** Token positions that became `<*>` (empty for `template_created`). */
  readonly positionsWidened: readonly number[];
  /** First 256 bytes of the line that triggered the event. */
  readonly triggeringLineSample: string;
  /** Effective time (ns) of the triggering record, so a replay reproduces the same event. */
  readonly timestampUnixNano: bigint;
}
