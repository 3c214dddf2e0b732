/**
 * @module masker
 * Classifies one token: a typed parameter that is masked to `<*>` in every template (IPv4, UUID, NUM, HEX, TS,
 * OVERFLOW), or a literal. Literals that contain a digit stay literal in the template but are routed through the
 * prefix tree's `<*>` child, as in Drain. Classification looks only at the whole token (no partial masking), so a
 * token's type never depends on its neighbours.
 */
import { createHash } from 'node:crypto';
import { PARAM_TYPE } from '@sluice/core';
import type { ParamTypeTag } from '@sluice/core';
import { exceedsUtf8Bytes, utf8ByteLength } from './utf8.js';

/** A literal token without digits: keys the prefix tree by its own text. */
export const LITERAL = -2;
/** A literal token containing a digit: literal in the template, `<*>` in the prefix tree. */
export const LITERAL_WITH_DIGIT = -1;

/** {@link LITERAL}, {@link LITERAL_WITH_DIGIT}, or the type tag of a masked token. */
export type TokenClass = typeof LITERAL | typeof LITERAL_WITH_DIGIT | ParamTypeTag;

/** The canonical wildcard text used in rendered templates. */
export const WILDCARD_TEXT = '<*>';

const NUM = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const HEX_PREFIXED = /^0[xX][0-9a-fA-F]+$/;
// Long bare hex (trace/span ids, hashes). 16+ digits avoids words like "deadbeef"; a digit is required by the caller.
const HEX_LONG = /^[0-9a-fA-F]{16,}$/;
const TS_DATE = /^\d{4}-\d{2}-\d{2}(?:[T_]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const TS_TIME = /^\d{2}:\d{2}:\d{2}(?:[.,]\d+)?$/;

function hasDigit(token: string): boolean {
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

/**
 * Classifies `token`. Order: OVERFLOW (longer than `paramByteLimit` UTF-8 bytes), the literal text `<*>` (masked as
 * STR so that a rendered template is never ambiguous), then — only for tokens with a digit — NUM, IP, TS, UUID, HEX.
 */
export function classifyToken(token: string, paramByteLimit: number): TokenClass {
  if (exceedsUtf8Bytes(token, paramByteLimit)) return PARAM_TYPE.OVERFLOW;
  if (token === WILDCARD_TEXT) return PARAM_TYPE.STR;
  if (!hasDigit(token)) return LITERAL;
  if (NUM.test(token)) return PARAM_TYPE.NUM;
  if (IPV4.test(token)) return PARAM_TYPE.IP;
  if (TS_DATE.test(token) || TS_TIME.test(token)) return PARAM_TYPE.TS;
  if (UUID.test(token)) return PARAM_TYPE.UUID;
  if (HEX_PREFIXED.test(token) || HEX_LONG.test(token)) return PARAM_TYPE.HEX;
  return LITERAL_WITH_DIGIT;
}

/** True when the class is a masked (typed, wildcard) token. */
export function isMasked(c: TokenClass): c is ParamTypeTag {
  return c >= 0;
}

/**
 * The stored value of an OVERFLOW param: `overflow:<utf8 length>:<first 8 bytes of SHA-256, hex>` — a
 * "u32 length + 8-byte SHA-256 prefix" as text. The original token stays in the retained body.
 */
export function overflowValue(token: string): string {
  const digest = createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 16);
  return `overflow:${utf8ByteLength(token)}:${digest}`;
}
