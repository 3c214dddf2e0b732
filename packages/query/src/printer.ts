/**
 * @module printer
 * Canonical text for a query. The output is one line that parses back to the same IR, and it is YAML-safe:
 * - no control character, no line break (also none of U+0085, U+2028, U+2029) and no tab anywhere — string
 *   literals escape them as `\n`, `\t`, `\r` or `\uXXXX`;
 * - it starts with a letter or `(` (never a YAML indicator such as `!`, `-`, `"`, `[`, `{`, `&`, `*`, `#`, `%`,
 *   `@`, `|`, `>`) and never ends with a space;
 * - it contains no `: ` and no ` #` (string literals write such a `:` as `\u003a` and such a `#` as `\u0023`),
 *   so a YAML comment or mapping key cannot start inside it.
 * Hence it embeds as a YAML block plain scalar — except the whole-query forms `true`/`false`, which YAML would
 * read as booleans — and always as a double-quoted scalar once `\` and `"` are escaped per YAML.
 *
 * Canonical choices: `and`/`or`/`not` (never `&&`/`||`/`!`), lower-case severity names, `attr.a.b` when every key
 * segment is an identifier and `attr["…"]` otherwise, durations in their largest exact unit, timestamps in UTC
 * with `Z`, `sort k` for ascending, parentheses only where needed to keep the tree shape.
 */
import type { GroupTerm, Literal, Path, Predicate, Query, Stage, TimeSpec } from './ir.js';
import { formatDuration, formatTimestamp } from './time-text.js';

const IDENT_SEGMENT = /^[A-Za-z][A-Za-z0-9_]*$/;

/** A string literal in canonical, YAML-safe form (see the module comment). */
export function printString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    const cp = c.charCodeAt(0);
    if (c === '"') out += '\\"';
    else if (c === '\\') out += '\\\\';
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if (c === '\r') out += '\\r';
    else if (
      cp < 0x20 ||
      (cp >= 0x7f && cp <= 0x9f) ||
      cp === 0x2028 ||
      cp === 0x2029 ||
      cp === 0xfeff ||
      (c === ':' && (s[i + 1] === ' ' || i === s.length - 1)) ||
      (c === '#' && (i === 0 || s[i - 1] === ' ')) ||
      isLoneSurrogate(s, i)
    ) {
      out += `\\u${cp.toString(16).padStart(4, '0')}`;
    } else out += c;
  }
  return `${out}"`;
}

function isLoneSurrogate(s: string, i: number): boolean {
  const cp = s.charCodeAt(i);
  if (cp >= 0xd800 && cp <= 0xdbff) {
    const n = s.charCodeAt(i + 1);
    return !(n >= 0xdc00 && n <= 0xdfff);
  }
  if (cp >= 0xdc00 && cp <= 0xdfff) {
    const p = i > 0 ? s.charCodeAt(i - 1) : 0;
    return !(p >= 0xd800 && p <= 0xdbff);
  }
  return false;
}

/** A path: `service`, `resource.k8s.namespace.name`, `attr["http.route"]`. */
export function printPath(p: Path): string {
  if (p.kind === 'field') return p.name;
  const segs = p.key.split('.');
  return segs.every((s) => IDENT_SEGMENT.test(s)) ? `${p.scope}.${p.key}` : `${p.scope}[${printString(p.key)}]`;
}

/** A finite number as `d+.d+` with no exponent, exact enough to parse back to the same double. */
export function printFloat(x: number): string {
  const neg = x < 0 || Object.is(x, -0);
  const text = Math.abs(x).toString();
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(text);
  if (!m) throw new Error(`cannot print number ${x}`);
  let digits = (m[1] ?? '') + (m[2] ?? '');
  let point = (m[1] ?? '').length + Number(m[3] ?? '0');
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point >= digits.length) digits = digits.padEnd(point + 1, '0');
  const intPart = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const fracPart = digits.slice(point).replace(/0+$/, '') || '0';
  return `${neg ? '-' : ''}${intPart}.${fracPart}`;
}

/** A literal operand. */
export function printLiteral(v: Literal): string {
  switch (v.kind) {
    case 'string':
      return printString(v.value);
    case 'int':
      return v.value.toString();
    case 'float':
      return printFloat(v.value);
    case 'bool':
      return String(v.value);
    case 'null':
      return 'null';
    case 'duration':
      return formatDuration(v.ns);
    case 'timestamp':
      return formatTimestamp(v.ns);
  }
}

/** A `time`: `now`, `-15m`, `15m` or an RFC 3339 timestamp. */
export function printTime(t: TimeSpec): string {
  switch (t.kind) {
    case 'now':
      return 'now';
    case 'relative':
      return t.offsetNs < 0n ? `-${formatDuration(-t.offsetNs)}` : formatDuration(t.offsetNs);
    case 'absolute':
      return formatTimestamp(t.ns);
  }
}

/** A predicate, parenthesised only where the tree shape needs it. */
export function printPredicate(p: Predicate): string {
  switch (p.kind) {
    case 'and':
      return p.operands
        .map((o) => (o.kind === 'and' || o.kind === 'or' ? `(${printPredicate(o)})` : printPredicate(o)))
        .join(' and ');
    case 'or':
      return p.operands.map((o) => (o.kind === 'or' ? `(${printPredicate(o)})` : printPredicate(o))).join(' or ');
    case 'not': {
      const o = p.operand;
      const inner = printPredicate(o);
      return o.kind === 'and' || o.kind === 'or' || o.kind === 'not' ? `not (${inner})` : `not ${inner}`;
    }
    case 'bool':
      return String(p.value);
    case 'severity':
      return `severity ${p.op} ${p.level.kind === 'name' ? p.level.name : p.level.value}`;
    case 'compare':
      return `${printPath(p.path)} ${p.op} ${printLiteral(p.value)}`;
    case 'str_call':
      return `${p.fn}(${printPath(p.path)}, ${printString(p.arg)})`;
    case 'resolves_to':
      return `resolves_to(${p.templateId})`;
  }
}

function printTerm(t: GroupTerm): string {
  switch (t.kind) {
    case 'path':
      return printPath(t.path);
    case 'param':
      return `param(${t.index})`;
    case 'bucket':
      return `bucket(${formatDuration(t.widthNs)})`;
  }
}

const by = (terms: readonly GroupTerm[]): string =>
  terms.length === 0 ? '' : ` by ${terms.map(printTerm).join(', ')}`;

/** One stage, without the leading `|`. */
export function printStage(s: Stage): string {
  switch (s.kind) {
    case 'range':
      return `range(${printTime(s.from)}, ${printTime(s.to)})`;
    case 'limit':
      return `limit ${s.n}`;
    case 'count':
      return `count${by(s.by)}`;
    case 'aggregate':
      return `${s.fn}(${printPath(s.path)})${by(s.by)}`;
    case 'sort':
      return `sort ${s.key}${s.descending ? ' desc' : ''}`;
    case 'project':
      return `project ${s.paths.map(printPath).join(', ')}`;
    case 'render':
      return 'render';
  }
}

/**
 * Canonical single-line, YAML-safe text of a query; `parseQuerySyntax(printQuery(q))` yields an IR deep-equal to
 * `q` for every IR the parsers can produce.
 * @throws Error only for IR no parser produces (e.g. a non-finite float or a sub-second duration).
 */
export function printQuery(q: Query): string {
  if (q.kind === 'drift') return `drift from ${printTime(q.from)} to ${printTime(q.to)}`;
  return [printPredicate(q.predicate), ...q.stages.map(printStage)].join(' | ');
}
