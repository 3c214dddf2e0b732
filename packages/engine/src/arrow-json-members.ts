/**
 * @module arrow-json-members
 * Splits one JSON object that Sluice rendered itself (a LogRow of `records.ts`, or its `body` object) into its
 * top-level members as raw value slices, so the Arrow encoder (docs/design/query-engine.md, "Arrow results") reads
 * exactly what the JSON answer says — u64 values as their exact digits, attribute JSON as its canonical text —
 * without a second renderer that could disagree with the first.
 */

/** One top-level member: its key and where its value's raw JSON text lies in the object's text. */
export interface JsonMember {
  readonly key: string;
  /** First index of the value. */
  readonly start: number;
  /** Index just past the value. */
  readonly end: number;
}

/** The index just past the JSON value that starts at `i` (a string, an object, an array or a bare literal). */
function valueEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 0x22) return stringEnd(text, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === 0x22) j = stringEnd(text, j) - 1;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new Error('arrow-json-members: unbalanced JSON value');
  }
  let j = i;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === 0x2c || c === 0x7d || c === 0x5d) break;
    j++;
  }
  return j;
}

/** The index just past the JSON string whose opening quote is at `i`. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  throw new Error('arrow-json-members: unterminated JSON string');
}

/**
 * The members of the compact JSON object (no whitespace between tokens, as `records.ts` renders it) that starts at
 * `from` in `text`, with positions in `text`.
 * @throws Error when there is no such object (a bug: the text was rendered by Sluice)
 */
export function jsonMembers(text: string, from = 0): JsonMember[] {
  if (text.charCodeAt(from) !== 0x7b) throw new Error('arrow-json-members: not a JSON object');
  const out: JsonMember[] = [];
  let i = from + 1;
  if (text.charCodeAt(i) === 0x7d) return out;
  for (;;) {
    const keyEnd = stringEnd(text, i);
    // Keys are Sluice's own field names: no escapes, so the inside of the quotes is the key.
    const key = text.slice(i + 1, keyEnd - 1);
    if (text.charCodeAt(keyEnd) !== 0x3a) throw new Error('arrow-json-members: expected ":"');
    const start = keyEnd + 1;
    const end = valueEnd(text, start);
    out.push({ key, start, end });
    const next = text.charCodeAt(end);
    if (next === 0x7d) return out;
    if (next !== 0x2c) throw new Error('arrow-json-members: expected "," or "}"');
    i = end + 1;
  }
}
