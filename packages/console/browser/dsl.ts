/**
 * @module dsl
 * The little the console must know of the query language (packages/query/README.md) to build its statements
 * around what the user typed: where the predicate ends and the stages begin, and how to write a literal.
 */

const STAGE_WORDS = new Set(['range', 'limit', 'count', 'sum', 'min', 'max', 'avg', 'sort', 'project', 'render']);
const AGGREGATES = new Set(['count', 'sum', 'min', 'max', 'avg']);

/** A statement cut at its top-level `|` (outside strings; `||` is "or"). */
export interface SplitStatement {
  /** The predicate as typed (trimmed); `''` when the statement opens with a stage. */
  readonly predicate: string;
  /** Each stage's text (trimmed), in order. */
  readonly stages: readonly string[];
}

/** Cuts `text` into its predicate and stages. */
export function splitStatement(text: string): SplitStatement {
  const parts: string[] = [];
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '|') {
      if (text[i + 1] === '|') {
        i++;
        continue;
      }
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  const first = parts[0] ?? '';
  if (isStage(first)) return { predicate: '', stages: parts.filter((p) => p !== '') };
  return { predicate: first, stages: parts.slice(1).filter((p) => p !== '') };
}

function firstWord(stage: string): string {
  return /^[a-z_]+/.exec(stage)?.[0] ?? '';
}

function isStage(part: string): boolean {
  return STAGE_WORDS.has(firstWord(part));
}

/** True when a stage aggregates (the answer is `aggregate`, not records). */
export function hasAggregation(stages: readonly string[]): boolean {
  return stages.some((s) => AGGREGATES.has(firstWord(s)));
}

/** True when a stage sorts. */
export function hasSort(stages: readonly string[]): boolean {
  return stages.some((s) => firstWord(s) === 'sort');
}

/** Joins a predicate and stages into one statement (an empty predicate opens with the first stage). */
export function joinStatement(predicate: string, stages: readonly string[]): string {
  return [predicate, ...stages].filter((p) => p !== '').join(' | ');
}

/** A string literal of the language (`"`, `\` and control characters escaped). */
export function stringLiteral(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.charCodeAt(0);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** An OTLP JSON attribute value as a literal of the language; `null` for a value with no literal (arrays, maps). */
export function valueLiteral(value: Readonly<Record<string, unknown>>): string | null {
  if (typeof value['stringValue'] === 'string') return stringLiteral(value['stringValue']);
  if (typeof value['boolValue'] === 'boolean') return String(value['boolValue']);
  if (typeof value['intValue'] === 'string' || typeof value['intValue'] === 'number') return String(value['intValue']);
  if (typeof value['doubleValue'] === 'number' && Number.isFinite(value['doubleValue']))
    return String(value['doubleValue']);
  return null;
}

/** `attr["key"] == <literal>` (or `resource[...]`); `null` when the value has no literal. */
export function attributeFilter(
  scope: 'attr' | 'resource',
  key: string,
  value: Readonly<Record<string, unknown>>,
): string | null {
  const literal = valueLiteral(value);
  return literal === null ? null : `${scope}[${stringLiteral(key)}] == ${literal}`;
}

/** Adds `clause` to the statement's predicate with `and`, keeping its stages. */
export function addFilter(text: string, clause: string): string {
  const { predicate, stages } = splitStatement(text);
  const next =
    predicate === ''
      ? clause
      : /\bor\b|\|\|/.test(predicate)
        ? `(${predicate}) and ${clause}`
        : `${predicate} and ${clause}`;
  return joinStatement(next, stages);
}
