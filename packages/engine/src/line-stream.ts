/**
 * @module line-stream
 * A streamed result (docs/design/query-governance.md, "Streamed results"): NDJSON lines handed to the consumer in
 * batches of about {@link STREAM_BATCH_BYTES}, at most {@link STREAM_BATCHES_IN_FLIGHT} batches not yet taken by
 * it. Every line is reserved on the query's pool reservation while it waits in the batch being filled, and every
 * batch while the consumer has not taken it, so what a stream holds is a few batches, never the whole body: a slow
 * reader makes the query wait (the consumer's `send` resolves only once the batch has been written and the socket
 * drained), it does not make the querier buffer. `max_result_bytes` counts every line sent; in enforce mode the line
 * that would cross it is not sent and the query fails `query_result_limit` (an error line once lines have gone),
 * in observe mode it is sent and reported through {@link LineStream.crossed}.
 */
import type { CeilingCrossed, CeilingEnforcement } from '@sluice/limits';
import { QueryAbort } from './failures.js';
import { retainedRowBytes } from './records.js';
import type { MemoryTracker } from './tracker.js';

/** Target size of one batch of lines, bytes (UTF-8): large enough to amortize a message, small enough to hold a few. */
export const STREAM_BATCH_BYTES = 64 * 1024;

/** Batches handed to the consumer and not yet taken before the query waits: "a few row batches". */
export const STREAM_BATCHES_IN_FLIGHT = 2;

/** Where a streamed query's lines go. */
export interface LineSink {
  /**
   * Hands over one batch of complete NDJSON lines (each ending in `\n`). Resolves once the consumer has taken it
   * (for HTTP: written and drained); rejects when the query is stopped. The batch stays reserved until then.
   */
  send(batch: Uint8Array): Promise<void>;
}

/** Options of {@link LineStream}. */
export interface LineStreamOptions {
  readonly sink: LineSink;
  readonly tracker: MemoryTracker;
  readonly maxResultBytes: number;
  readonly enforcement: CeilingEnforcement;
  /** Batch size in bytes; default {@link STREAM_BATCH_BYTES} (tests make it small). */
  readonly batchBytes?: number;
}

interface InFlight {
  readonly taken: Promise<void>;
  readonly reserved: number;
}

/** The lines of one streamed query. Used from one thread; `push` and `end` are not re-entered. */
export class LineStream {
  readonly #o: LineStreamOptions;
  readonly #batchBytes: number;
  #lines: string[] = [];
  #lineBytes = 0;
  #lineReserved = 0;
  #inFlight: InFlight[] = [];
  #sent = 0;
  #count_ = 0;

  constructor(options: LineStreamOptions) {
    this.#o = options;
    this.#batchBytes = options.batchBytes ?? STREAM_BATCH_BYTES;
  }

  /** Bytes of every line counted so far (sent or about to be). */
  get bytes(): number {
    return this.#sent;
  }

  /** Lines pushed so far. */
  get lines(): number {
    return this.#count_;
  }

  /** Observe mode: `max_result_bytes` crossed; `undefined` while under it. */
  get crossed(): CeilingCrossed | undefined {
    return this.#sent > this.#o.maxResultBytes
      ? { limit: 'max_result_bytes', value: this.#sent, ceiling: this.#o.maxResultBytes }
      : undefined;
  }

  /**
   * Adds one line (a JSON value without its newline). Returns a promise the caller must await when a batch went
   * out and the consumer has not taken enough of them yet, else `undefined` (most lines cost no await).
   * @throws QueryAbort `query_result_limit` (enforce mode) when the line would cross `max_result_bytes`, or a
   *   memory kind when the pool refuses it.
   */
  push(json: string): Promise<void> | undefined {
    const bytes = Buffer.byteLength(json, 'utf8') + 1;
    this.#count(bytes);
    this.#lineReserved += this.#o.tracker.grow(retainedRowBytes(json));
    this.#lines.push(json);
    this.#lineBytes += bytes;
    this.#count_++;
    return this.#lineBytes >= this.#batchBytes ? this.flush() : undefined;
  }

  /** Counts `bytes` sent outside the lines (the trailer) against `max_result_bytes`. */
  count(bytes: number): void {
    this.#count(bytes);
  }

  /** Sends the batch being filled, first waiting until fewer than the allowed batches are in flight. */
  async flush(): Promise<void> {
    if (this.#lines.length === 0) return;
    while (this.#inFlight.length >= STREAM_BATCHES_IN_FLIGHT) await this.#takeOldest();
    // Reserve before retain: the encoded batch, then the strings it came from are given back.
    const reserved = this.#o.tracker.grow(this.#lineBytes);
    const batch = Buffer.from(`${this.#lines.join('\n')}\n`, 'utf8');
    this.#lines = [];
    this.#lineBytes = 0;
    this.#o.tracker.shrink(this.#lineReserved);
    this.#lineReserved = 0;
    const taken = this.#o.sink.send(batch);
    // Awaited in order later; a rejection before then (the query was stopped) must not go unhandled meanwhile.
    taken.catch(() => undefined);
    this.#inFlight.push({ taken, reserved });
  }

  /** Sends what is left and waits until the consumer has taken every batch. */
  async end(): Promise<void> {
    await this.flush();
    while (this.#inFlight.length > 0) await this.#takeOldest();
  }

  async #takeOldest(): Promise<void> {
    const oldest = this.#inFlight[0];
    if (oldest === undefined) return;
    await oldest.taken;
    this.#inFlight.shift();
    this.#o.tracker.shrink(oldest.reserved);
  }

  #count(bytes: number): void {
    if (this.#o.enforcement === 'enforce' && this.#sent + bytes > this.#o.maxResultBytes)
      throw new QueryAbort({ kind: 'query_result_limit', limitBytes: this.#o.maxResultBytes });
    this.#sent += bytes;
  }
}
