/**
 * @module result-budget
 * Counts a result's rendered bytes while it is serialized (count while serializing, abort past a ceiling:
 * docs/design/query-governance.md): each chunk is reserved on the query's pool reservation and added to the running
 * `max_result_bytes` total *before* it is retained. The budget buffers the chunks, so the HTTP layer commits the
 * 200 status only when the whole body is known to fit — never a 200 followed by an error. Any failure is sticky
 * and releases what the budget held at once (fail safe: the partial body is dropped, never sent).
 *
 * With `enforcement: 'observe'` crossing `max_result_bytes` is not a failure: the body goes on being counted,
 * reserved and buffered, and {@link ResultBudget.crossed} reports it. The pool still refuses what it cannot hold.
 */
import type { CeilingCrossed, CeilingEnforcement } from './ceiling-observation.js';
import type { GrowRefused } from './grow-outcome.js';
import type { QueryReservation } from './query-reservation.js';
import { checkBytes } from './pool-layout.js';

/** The outcome of adding a chunk. */
export type BudgetOutcome =
  | { readonly status: 'ok' }
  | {
      readonly status: 'over';
      readonly kind: 'query_result_limit';
      /** `max_result_bytes`. */
      readonly limitBytes: number;
      /** Bytes counted including the chunk that crossed the ceiling. */
      readonly countedBytes: number;
    }
  /** The pool refused the chunk's reservation (`query_memory_limit` or `query_memory_contended`). */
  | GrowRefused;

/** Options of {@link createResultBudget}. */
export interface ResultBudgetOptions {
  /** `max_result_bytes`: integer ≥ 1. */
  readonly maxResultBytes: number;
  /** The query's reservation; the buffered body is reserved on it. */
  readonly reservation: QueryReservation;
  /** `querier.limits.enforcement`; default `enforce`. */
  readonly enforcement?: CeilingEnforcement;
}

/** A result being serialized. */
export interface ResultBudget {
  /**
   * Renders nothing itself: counts and reserves one serialized chunk (its UTF-8 bytes for a string) and keeps it. A
   * string is kept as it is, not copied into a buffer of its own: {@link ResultBudget.seal} writes it once, into the
   * body. V8 may hold a string at two bytes a character, more than its UTF-8 form: a caller that appends strings
   * it already reserved (rendered records) keeps that reservation until the body is sealed. Bytes are handed over,
   * not copied: a body of one byte chunk is that chunk.
   */
  append(chunk: string | Uint8Array): BudgetOutcome;
  /** Counts and reserves `bytes` held elsewhere (e.g. a decoded batch) without buffering anything. */
  count(bytes: number): BudgetOutcome;
  /** Bytes counted so far. */
  readonly countedBytes: number;
  /** Observe mode: `max_result_bytes` crossed, with the bytes counted so far; `undefined` while under it. */
  readonly crossed: CeilingCrossed | undefined;
  /** The first failure, if any (sticky). */
  readonly failure: Exclude<BudgetOutcome, { status: 'ok' }> | undefined;
  /**
   * Writes the kept chunks into the one body buffer. The buffer is reserved before it is allocated, while the chunks
   * still exist, so for that moment the budget holds the body twice; then the chunks are dropped and the body is held
   * once. A refusal of that reservation is the budget's failure (sticky, everything released).
   */
  seal(): BudgetOutcome;
  /**
   * The body, once every chunk fitted: the sealed buffer, sealing first when {@link ResultBudget.seal} was not
   * called. @throws Error after a failure, or when sealing here is refused (call `seal()` to get that as an outcome).
   */
  body(): Buffer;
  /** Gives back what this budget reserved (after the body has been sent). Idempotent. */
  release(): void;
}

const OK: BudgetOutcome = Object.freeze({ status: 'ok' });

/** Node's fast UTF-8 write (what `write(s, at, 'utf8')` calls after checking its arguments, per chunk here). */
type WritableBuffer = Buffer & { utf8Write?: (s: string, at: number) => number };

/**
 * Creates a budget over `reservation`.
 * @example
 * const budget = createResultBudget({ maxResultBytes: 67_108_864, reservation });
 * for (const row of rows) { const o = budget.append(render(row)); if (o.status !== 'ok') return reject(o); }
 * res.writeHead(200).end(budget.body()); budget.release();
 */
export function createResultBudget(options: ResultBudgetOptions): ResultBudget {
  const { maxResultBytes, reservation } = options;
  if (!Number.isSafeInteger(maxResultBytes) || maxResultBytes < 1) {
    throw new RangeError(`maxResultBytes must be an integer ≥ 1, got ${String(maxResultBytes)}`);
  }
  let counted = 0;
  let reservedBytes = 0;
  let chunks: (string | Buffer)[] = [];
  /** The bytes of `chunks` (what `count()` counted is held elsewhere). */
  let keptBytes = 0;
  let sealed: Buffer | undefined;
  let failure: Exclude<BudgetOutcome, { status: 'ok' }> | undefined;
  const observe = options.enforcement === 'observe';
  let over = false;

  const giveBack = (): void => {
    if (reservedBytes > 0 && !reservation.released) reservation.shrink(Math.min(reservedBytes, reservation.held));
    reservedBytes = 0;
  };
  const fail = (f: Exclude<BudgetOutcome, { status: 'ok' }>): BudgetOutcome => {
    failure = f;
    chunks = [];
    keptBytes = 0;
    sealed = undefined;
    giveBack();
    return f;
  };
  const take = (bytes: number, chunk: string | Buffer | undefined): BudgetOutcome => {
    if (failure) return failure;
    if (sealed !== undefined && chunk !== undefined) throw new Error('result chunk appended after the body was sealed');
    if (counted + bytes > maxResultBytes && !observe) {
      return fail({
        status: 'over',
        kind: 'query_result_limit',
        limitBytes: maxResultBytes,
        countedBytes: counted + bytes,
      });
    }
    const grown = reservation.tryGrow(bytes); // reserve before retain
    if (grown.status !== 'ok') return fail(grown);
    counted += bytes;
    if (counted > maxResultBytes) over = true;
    reservedBytes += bytes;
    if (chunk !== undefined) {
      chunks.push(chunk);
      keptBytes += bytes;
    }
    return OK;
  };
  const seal = (): BudgetOutcome => {
    if (failure) return failure;
    if (sealed !== undefined) return OK;
    const only = chunks.length === 1 ? chunks[0] : undefined;
    if (only !== undefined && typeof only !== 'string') {
      sealed = only;
    } else {
      // Reserve before retain: the body buffer exists alongside the chunks until they are dropped below.
      const grown = reservation.tryGrow(keptBytes);
      if (grown.status !== 'ok') return fail(grown);
      let out: WritableBuffer;
      try {
        out = Buffer.allocUnsafe(keptBytes) as WritableBuffer;
      } catch (e) {
        reservation.shrink(keptBytes);
        throw e;
      }
      let at = 0;
      for (const c of chunks) {
        if (typeof c !== 'string') at += c.copy(out, at);
        else at += out.utf8Write !== undefined ? out.utf8Write(c, at) : out.write(c, at, 'utf8');
      }
      sealed = out;
      reservation.shrink(keptBytes);
    }
    chunks = [];
    return OK;
  };

  return {
    append(chunk) {
      if (typeof chunk === 'string') return take(Buffer.byteLength(chunk, 'utf8'), chunk);
      return take(chunk.byteLength, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    },
    count(bytes) {
      checkBytes(bytes, 'count bytes');
      return take(bytes, undefined);
    },
    get countedBytes() {
      return counted;
    },
    get crossed() {
      return over ? { limit: 'max_result_bytes' as const, value: counted, ceiling: maxResultBytes } : undefined;
    },
    get failure() {
      return failure;
    },
    seal,
    body() {
      if (failure) throw new Error(`result body requested after ${failure.kind}`);
      const o = seal();
      if (o.status !== 'ok') throw new Error(`result body could not be sealed: ${o.kind}`);
      return sealed!;
    },
    release() {
      chunks = [];
      keptBytes = 0;
      sealed = undefined;
      giveBack();
    },
  };
}
