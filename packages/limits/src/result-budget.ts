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
  /** Renders nothing itself: counts, reserves and buffers one serialized chunk (UTF-8 for strings). */
  append(chunk: string | Uint8Array): BudgetOutcome;
  /** Counts and reserves `bytes` held elsewhere (e.g. a decoded batch) without buffering anything. */
  count(bytes: number): BudgetOutcome;
  /** Bytes counted so far. */
  readonly countedBytes: number;
  /** Observe mode: `max_result_bytes` crossed, with the bytes counted so far; `undefined` while under it. */
  readonly crossed: CeilingCrossed | undefined;
  /** The first failure, if any (sticky). */
  readonly failure: Exclude<BudgetOutcome, { status: 'ok' }> | undefined;
  /** The buffered body, once every chunk fitted. @throws Error after a failure (a caller bug). */
  body(): Buffer;
  /** Gives back what this budget reserved (after the body has been sent). Idempotent. */
  release(): void;
}

const OK: BudgetOutcome = Object.freeze({ status: 'ok' });

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
  let chunks: Buffer[] = [];
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
    giveBack();
    return f;
  };
  const take = (bytes: number, chunk: Buffer | undefined): BudgetOutcome => {
    if (failure) return failure;
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
    if (chunk) chunks.push(chunk);
    return OK;
  };

  return {
    append(chunk) {
      const buf =
        typeof chunk === 'string'
          ? Buffer.from(chunk, 'utf8')
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      return take(buf.byteLength, buf);
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
    body() {
      if (failure) throw new Error(`result body requested after ${failure.kind}`);
      return Buffer.concat(chunks);
    },
    release() {
      chunks = [];
      giveBack();
    },
  };
}
