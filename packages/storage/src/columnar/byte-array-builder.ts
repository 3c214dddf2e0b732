/**
 * @module columnar/byte-array-builder
 * Builds a BYTE_ARRAY leaf from JS strings into one buffer: either a dictionary (distinct values once, PLAIN,
 * plus an index per value, RLE/bit-packed in pages) or PLAIN (length-prefixed UTF-8 appended to one buffer,
 * with an offset per value so pages slice it without copying values one by one). A dictionary builder turns
 * itself into PLAIN when its dictionary grows past {@link DICTIONARY_MAX_ENTRIES} or
 * {@link DICTIONARY_MAX_BYTES}, so high-cardinality data never pays for a useless dictionary.
 */
import { ByteSink } from './byte-sink.js';
import { compareBytes } from './fixed-width-values.js';
import type { ValueEncoder } from './leaf-column.js';
import { ENCODING } from './parquet-footer.js';
import { bitWidth, writeHybrid } from './rle-hybrid.js';

/** Dictionary entries per chunk before falling back to PLAIN. */
export const DICTIONARY_MAX_ENTRIES = 16_384;
/** Dictionary page bytes per chunk before falling back to PLAIN (one page, kept within the 1 MiB page bound). */
export const DICTIONARY_MAX_BYTES = 1 << 20;
/** Byte-array min/max longer than this are omitted (a footer must stay small; parquet allows absent bounds). */
export const STATISTICS_MAX_BYTES = 64;

const utf8 = new TextEncoder();

/** Appends one length-prefixed UTF-8 value to `sink`. */
function appendPlain(sink: ByteSink, s: string): void {
  sink.reserve(4 + s.length * 3);
  const at = sink.length;
  const { written } = utf8.encodeInto(s, sink.buf.subarray(at + 4));
  new DataView(sink.buf.buffer).setUint32(at, written, true);
  sink.length = at + 4 + written;
}

/** A string leaf under construction (one row group). */
export class ByteArrayBuilder {
  /** Non-null values added. */
  count = 0;
  private dict: Map<string, number> | null;
  /** Dictionary entries (PLAIN) while dictionary-encoded, else all values (PLAIN). */
  private readonly data: ByteSink;
  /** Start of each entry (dictionary mode) or value (plain mode) in `data`, plus the end. */
  private starts: Int32Array;
  private entries = 0;
  private indices: Int32Array;

  /** `plainBytes`: the PLAIN buffer's first size, when the caller knows it (default 64 bytes a value). */
  constructor(capacity: number, dictionary: boolean, plainBytes = capacity * 64) {
    this.dict = dictionary ? new Map() : null;
    this.data = new ByteSink(dictionary ? 1024 : plainBytes);
    this.starts = new Int32Array(dictionary ? 256 : capacity + 1);
    this.indices = new Int32Array(dictionary ? capacity : 0);
  }

  private pushStart(at: number): void {
    if (this.entries + 1 >= this.starts.length) {
      const next = new Int32Array(this.starts.length * 2);
      next.set(this.starts);
      this.starts = next;
    }
    this.starts[this.entries] = at;
  }

  /** Adds one non-null value. */
  add(s: string): void {
    const dict = this.dict;
    if (dict !== null) {
      let ix = dict.get(s);
      if (ix === undefined) {
        if (this.entries >= DICTIONARY_MAX_ENTRIES || this.data.length >= DICTIONARY_MAX_BYTES) {
          this.toPlain();
          this.add(s);
          return;
        }
        ix = this.entries;
        this.pushStart(this.data.length);
        appendPlain(this.data, s);
        this.entries++;
        dict.set(s, ix);
      }
      if (this.count >= this.indices.length) {
        const next = new Int32Array(Math.max(16, this.indices.length * 2));
        next.set(this.indices);
        this.indices = next;
      }
      this.indices[this.count++] = ix;
      return;
    }
    this.pushStart(this.data.length);
    appendPlain(this.data, s);
    this.entries++;
    this.count++;
  }

  /**
   * Adds one non-null value given as UTF-8 bytes `src[from, to)` (a value the row buffer, ./log-row-buffer.ts, already encoded):
   * the same page bytes as {@link add} of its string, without making the string. PLAIN builders only.
   */
  addUtf8(src: Uint8Array, from: number, to: number): void {
    if (this.dict !== null) throw new Error('ByteArrayBuilder.addUtf8: dictionary builders take strings');
    const len = to - from;
    const data = this.data;
    this.pushStart(data.length);
    data.reserve(4 + len);
    const at = data.length;
    const buf = data.buf;
    buf[at] = len & 0xff;
    buf[at + 1] = (len >>> 8) & 0xff;
    buf[at + 2] = (len >>> 16) & 0xff;
    buf[at + 3] = len >>> 24;
    buf.set(src.subarray(from, to), at + 4);
    data.length = at + 4 + len;
    this.entries++;
    this.count++;
  }

  /** Re-lays the values seen so far as PLAIN and continues in PLAIN. */
  private toPlain(): void {
    const dictBytes = this.data.toBytes();
    const dictStarts = this.starts;
    dictStarts[this.entries] = this.data.length;
    this.dict = null;
    this.data.reset();
    this.starts = new Int32Array(Math.max(this.indices.length, this.count) + 1);
    this.entries = 0;
    for (let i = 0; i < this.count; i++) {
      const ix = this.indices[i]!;
      this.pushStart(this.data.length);
      this.data.bytes(dictBytes.subarray(dictStarts[ix]!, dictStarts[ix + 1]!));
      this.entries++;
    }
    this.indices = new Int32Array(0);
  }

  /**
   * The values as laid out in a PLAIN page (value `v` at `[starts[v] + 4, starts[v + 1])` of `data`), or null while
   * dictionary-encoded. Valid until {@link encoder} is called and the builder dropped.
   */
  plainValues(): { readonly data: Uint8Array; readonly starts: Int32Array; readonly count: number } | null {
    if (this.dict !== null) return null;
    this.starts[this.entries] = this.data.length;
    return { data: this.data.buf, starts: this.starts, count: this.entries };
  }

  /** True while dictionary-encoded. */
  get isDictionary(): boolean {
    return this.dict !== null;
  }

  /** Min/max over the values (unsigned byte order), or undefined when absent or too long to keep. */
  bounds(): { min: Uint8Array; max: Uint8Array } | undefined {
    if (this.count === 0) return undefined;
    const buf = this.data.buf;
    const starts = this.starts;
    starts[this.entries] = this.data.length;
    let min = buf.subarray(starts[0]! + 4, starts[1]!);
    let max = min;
    for (let i = 1; i < this.entries; i++) {
      const x = buf.subarray(starts[i]! + 4, starts[i + 1]!);
      if (compareBytes(x, min) < 0) min = x;
      else if (compareBytes(x, max) > 0) max = x;
    }
    if (min.length > STATISTICS_MAX_BYTES || max.length > STATISTICS_MAX_BYTES) return undefined;
    return { min: min.slice(), max: max.slice() };
  }

  /** The finished values; the builder must not be used afterwards. */
  encoder(): ValueEncoder {
    const starts = this.starts;
    starts[this.entries] = this.data.length;
    const buf = this.data.buf;
    if (this.dict !== null) {
      const indices = this.indices;
      const width = Math.max(1, bitWidth(this.entries - 1));
      return {
        encoding: ENCODING.RLE_DICTIONARY,
        dictionary: { bytes: buf.subarray(0, this.data.length), count: this.entries },
        sizeOf: () => 4,
        write(v0, v1, out) {
          out.byte(width);
          writeHybrid(indices, v0, v1, width, out);
        },
      };
    }
    return {
      encoding: ENCODING.PLAIN,
      sizeOf: (v) => starts[v + 1]! - starts[v]!,
      write: (v0, v1, out) => out.bytes(buf.subarray(starts[v0]!, starts[v1]!)),
    };
  }
}
