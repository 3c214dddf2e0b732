/**
 * @module record-bytes
 * Rendered records written straight to bytes (docs/design/query-engine.md, "Rendering to bytes"): the records of
 * an unsorted JSON answer go into a few reserved buffers, back to back with their separating commas, instead of
 * one JS string per record (and per field inside it). A PLAIN string column's value is copied from its page as
 * UTF-8, escaped on the bytes; no string is made for it. Strings that live through a young-generation collection
 * are copied by it, so ten thousand held record strings made every scavenge of a `limit 10000` expensive.
 *
 * The bytes are exactly `Buffer.from(renderLogRow(…))`: a property test holds the two renderers to it. Where the
 * byte path cannot be sure of that (a value that is not valid UTF-8, which the decoder would repair) it decodes
 * the value and takes the string path.
 */
import { isUtf8 } from 'node:buffer';
import { toHex } from '@sluice/core';
import { BODY_KIND, LOG_COLUMNS } from '@sluice/storage';
import { PlainStringVector, RowSlice, cell, decodeUtf8 } from './decode/string-vector.js';
import type { ColumnData } from './decode/string-vector.js';
import type { Columns } from './predicate-eval.js';
import { jsonString, jsonU64 } from './render-json.js';
import type { MemoryTracker } from './tracker.js';

const C = LOG_COLUMNS;

/** The largest reserved buffer (a value larger than this gets a buffer of its own size). */
export const RECORD_CHUNK_BYTES = 64 * 1024;
/**
 * The first buffer: buffers double from this up to {@link RECORD_CHUNK_BYTES}, so a `limit 1` reserves 4 KiB, not
 * 64, under a tight pool.
 */
export const RECORD_FIRST_CHUNK_BYTES = 4 * 1024;

/** What JSON.stringify writes for bytes 0x00–0x1f, `"` and `\` (everything else is itself). */
const ESCAPES: readonly (string | undefined)[] = (() => {
  const e: (string | undefined)[] = new Array<string | undefined>(256).fill(undefined);
  for (let b = 0; b < 0x20; b++) e[b] = JSON.stringify(String.fromCharCode(b)).slice(1, -1);
  e[0x22] = '\\"';
  e[0x5c] = '\\\\';
  return e;
})();

/**
 * Records written back to back into reserved buffers. Each buffer is reserved on the tracker before it is
 * allocated and stays reserved until the tracker is released (after the body is sealed). Only whole records are
 * ever handed out: a record whose buffer was refused mid-way is not in {@link RecordBytes.chunks}.
 */
export class RecordBytes {
  readonly #tracker: MemoryTracker;
  /** Filled buffers, each cut at its last byte written. */
  readonly #done: Buffer[] = [];
  #buf: Buffer = Buffer.alloc(0);
  #at = 0;
  #count = 0;
  #recordStart = 0;
  #recordBytes = 0;
  /** Where the last whole record ends: buffer number (an index into `#done`, or `#done.length` for `#buf`) and offset. */
  #endChunk = 0;
  #endAt = 0;

  constructor(tracker: MemoryTracker) {
    this.#tracker = tracker;
  }

  /** Records written. */
  get count(): number {
    return this.#count;
  }

  /** The whole records so far as byte ranges, in order, separated by commas. */
  chunks(): Buffer[] {
    const out = this.#done.slice(0, this.#endChunk);
    const last = this.#endChunk < this.#done.length ? this.#done[this.#endChunk] : this.#buf;
    if (last !== undefined && this.#endAt > 0) out.push(last.subarray(0, this.#endAt));
    return out;
  }

  /** Room for `n` more bytes: a new buffer (reserved first) when the current one is full. */
  #room(n: number): void {
    if (this.#at + n <= this.#buf.length) return;
    const size = Math.max(n, Math.min(RECORD_CHUNK_BYTES, Math.max(RECORD_FIRST_CHUNK_BYTES, 2 * this.#buf.length)));
    this.#tracker.grow(size); // reserve before retain
    this.#recordBytes += this.#at - this.#recordStart;
    // An empty buffer is dropped: the last record's end (at offset 0 of it, if it points there) stays valid.
    if (this.#at > 0) this.#done.push(this.#buf.subarray(0, this.#at));
    this.#buf = Buffer.allocUnsafe(size);
    this.#at = 0;
    this.#recordStart = 0;
  }

  /** Starts a record (its separating comma included). */
  begin(): void {
    this.#room(1);
    this.#recordBytes = 0;
    this.#recordStart = this.#at;
    if (this.#count > 0) this.#buf[this.#at++] = 0x2c;
  }

  /** Ends the record; returns its UTF-8 length without the separating comma. */
  end(): number {
    const n = this.#recordBytes + this.#at - this.#recordStart - (this.#count > 0 ? 1 : 0);
    this.#count++;
    this.#endChunk = this.#done.length;
    this.#endAt = this.#at;
    return n;
  }

  /** Appends a string as UTF-8. */
  text(s: string): void {
    // Keys, numbers and ids are short ASCII: copied a character at a time, without the encoder's per-call setup.
    if (s.length <= 64) {
      this.#room(s.length);
      const buf = this.#buf;
      const at = this.#at;
      let k = 0;
      for (; k < s.length; k++) {
        const c = s.charCodeAt(k);
        if (c >= 0x80) break;
        buf[at + k] = c;
      }
      if (k === s.length) {
        this.#at = at + k;
        return;
      }
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.#room(n);
    this.#at += this.#buf.write(s, this.#at, n, 'utf8');
  }

  /** Appends bytes as they are. */
  raw(bytes: Uint8Array): void {
    this.#room(bytes.length);
    this.#buf.set(bytes, this.#at);
    this.#at += bytes.length;
  }

  /** Appends valid UTF-8 `bytes` as a JSON string literal, escaped as JSON.stringify escapes the decoded text. */
  jsonUtf8(bytes: Uint8Array): void {
    let n = 2;
    for (let k = 0; k < bytes.length; k++) {
      const e = ESCAPES[bytes[k] as number];
      n += e === undefined ? 1 : e.length;
    }
    this.#room(n);
    const buf = this.#buf;
    let at = this.#at;
    buf[at++] = 0x22;
    let from = 0;
    for (let k = 0; k < bytes.length; k++) {
      const e = ESCAPES[bytes[k] as number];
      if (e === undefined) continue;
      if (k > from) {
        buf.set(bytes.subarray(from, k), at);
        at += k - from;
      }
      at += buf.write(e, at, e.length, 'latin1');
      from = k + 1;
    }
    if (bytes.length > from) {
      buf.set(bytes.subarray(from), at);
      at += bytes.length - from;
    }
    buf[at++] = 0x22;
    this.#at = at;
  }
}

/** A string cell: UTF-8 bytes straight from a PLAIN page (valid, a leading BOM dropped), or the decoded string. */
type TextCell = Uint8Array | string | null | undefined;

/** Row `i` of a string column without making a string where the bytes can be used as they are. */
function textCell(c: ColumnData | undefined, i: number): TextCell {
  let col = c;
  let row = i;
  if (col instanceof RowSlice) {
    row = i - col.base;
    if (row < 0 || row >= col.inner.length) return null;
    col = col.inner as ColumnData;
  }
  if (!(col instanceof PlainStringVector)) {
    const v = cell(col, row);
    return typeof v === 'string' ? v : null;
  }
  const n = col.lens[row] ?? -1;
  if (n < 0) return null;
  const p = col.pages[col.page[row] ?? 0] as Buffer;
  let s = col.starts[row] as number;
  let l = n;
  // The decoder drops one leading BOM; bytes it would repair are decoded so the repair is the same.
  if (l >= 3 && p[s] === 0xef && p[s + 1] === 0xbb && p[s + 2] === 0xbf) {
    s += 3;
    l -= 3;
  }
  const bytes = p.subarray(s, s + l);
  return isUtf8(bytes) ? bytes : decodeUtf8(p.subarray(col.starts[row] as number, (col.starts[row] as number) + n));
}

const isEmpty = (t: TextCell): boolean => t === undefined || t === null || t.length === 0;

function writeJsonText(out: RecordBytes, t: Uint8Array | string): void {
  if (typeof t === 'string') out.text(jsonString(t));
  else out.jsonUtf8(t);
}

function writeRawText(out: RecordBytes, t: Uint8Array | string): void {
  if (typeof t === 'string') out.text(t);
  else out.raw(t);
}

function u64(v: unknown): string {
  return typeof v === 'bigint' ? jsonU64(v) : typeof v === 'number' ? String(Math.trunc(v)) : '0';
}

/**
 * Writes row `i` as one LogRow JSON object, byte for byte what `renderLogRow(cols, i, keep)` renders, and returns
 * its UTF-8 length. `keep` restricts the keys (project).
 */
export function renderLogRowBytes(
  cols: Columns,
  i: number,
  keep: ReadonlySet<string> | undefined,
  out: RecordBytes,
): number {
  out.begin();
  out.text('{');
  let first = true;
  const key = (name: string): boolean => {
    if (keep !== undefined && !keep.has(name)) return false;
    out.text(first ? `"${name}":` : `,"${name}":`);
    first = false;
    return true;
  };
  const v = (name: string): unknown => cell(cols[name], i);
  const optionalText = (name: string, column: string): void => {
    const t = textCell(cols[column], i);
    if (!isEmpty(t) && key(name)) writeJsonText(out, t as Uint8Array | string);
  };
  const attributes = (name: string, column: string): void => {
    if (!key(name)) return;
    const t = textCell(cols[column], i);
    if (t === null || t === undefined) out.text('[]');
    else writeRawText(out, t);
  };
  if (key('time_unix_nano')) out.text(u64(v(C.timeUnixNano)));
  const obs = v(C.observedTimeUnixNano);
  if (obs !== null && obs !== undefined && key('observed_time_unix_nano')) out.text(u64(obs));
  if (key('severity_number')) out.text(String(Number(v(C.severityNumber) ?? 0)));
  optionalText('severity_text', C.severityText);
  const tr = v(C.traceId);
  if (tr instanceof Uint8Array && tr.length > 0 && key('trace_id')) out.text(`"${toHex(tr)}"`);
  const sp = v(C.spanId);
  if (sp instanceof Uint8Array && sp.length > 0 && key('span_id')) out.text(`"${toHex(sp)}"`);
  if (key('flags')) out.text(String(Number(v(C.flags) ?? 0)));
  optionalText('event_name', C.eventName);
  optionalText('scope_name', C.scopeName);
  optionalText('scope_version', C.scopeVersion);
  attributes('scope_attributes', C.scopeAttributes);
  attributes('attributes', C.attributes);
  attributes('resource_attributes', C.resourceAttributes);
  optionalText('resource_schema_url', C.resourceSchemaUrl);
  optionalText('scope_schema_url', C.scopeSchemaUrl);
  if (key('dropped_attributes_count')) out.text(String(Number(v(C.droppedAttributesCount) ?? 0)));
  if (key('template_id')) out.text(u64(v(C.templateId)));
  if (key('template_version')) out.text(String(Number(v(C.templateVersion) ?? 0)));
  const kind = Number(v(C.bodyKind) ?? BODY_KIND.ABSENT);
  if (kind === BODY_KIND.STRING || kind === BODY_KIND.STRUCTURED) {
    const body = textCell(cols[C.body], i);
    if (body !== null && body !== undefined && key('body')) {
      if (kind === BODY_KIND.STRING) {
        out.text('{"kind":"rendered","line":');
        writeJsonText(out, body);
        out.text(v(C.lossyFlag) === true ? ',"reconstruction":"retained_verbatim"}' : ',"reconstruction":"faithful"}');
      } else {
        out.text('{"kind":"structured","value":');
        writeRawText(out, body);
        out.text('}');
      }
    }
  }
  out.text('}');
  return out.end();
}
