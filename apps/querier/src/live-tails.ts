/**
 * @module live-tails
 * The live tails of one querier (docs/design/query-governance.md, "Live tail"): at most `max_live_tails` open at
 * once across tenants (the next is refused 503 `query_tail_limit` before anything is held), each with its own
 * reservation on the shared memory pool for the NDJSON bytes it holds for its client (at most
 * `max_tail_buffer_bytes`). A slot and its reservation are taken together and given back together, once, when the
 * tail's response is over (finished, or the client went away). When the querier stops, every open tail is ended
 * (`stopAll`), so a shutdown never waits on a tail's client.
 */
import type { MemoryPool, QueryReservation } from '@sluice/limits';
import type { Logger } from '@sluice/telemetry';
import type { QueryError } from './query-error.js';

/** Options of {@link createLiveTails}. */
export interface LiveTailsOptions {
  readonly pool: MemoryPool;
  readonly log: Logger;
  /** `querier.limits.max_live_tails`. */
  readonly maxLiveTails: number;
  /** `querier.limits.max_tail_buffer_bytes`: the ceiling of each tail's reservation. */
  readonly maxTailBufferBytes: number;
}

/** One open tail's hold: its pool reservation, and `close()` to give it and the slot back (idempotent). */
export interface TailSlot {
  readonly id: string;
  readonly reservation: QueryReservation;
  /** Registers what ends the tail when the querier stops ({@link LiveTails.stopAll}). */
  onStop(stop: () => void): void;
  close(): void;
}

/** The registry of open tails. */
export interface LiveTails {
  /** Takes a slot and a pool reservation for a new tail, or refuses `query_tail_limit`. */
  open(
    tenant: string,
  ): { readonly ok: true; readonly value: TailSlot } | { readonly ok: false; readonly error: QueryError };
  /** Tails open now (`sluice.query.tails.open`). */
  openCount(): number;
  /** Ends every open tail (the querier is stopping): each writes its last line and closes its connection. */
  stopAll(): void;
}

/** Creates the registry. */
export function createLiveTails(options: LiveTailsOptions): LiveTails {
  const { pool, log, maxLiveTails, maxTailBufferBytes } = options;
  let open = 0;
  let sequence = 0;
  const stoppers = new Map<string, () => void>();
  return {
    open(tenant) {
      if (open >= maxLiveTails) {
        log.info('live tail refused: every slot is taken', { tenant, max_live_tails: maxLiveTails });
        return {
          ok: false,
          error: {
            kind: 'query_tail_limit',
            message: `${maxLiveTails} live tails are open already (querier.limits.max_live_tails); retry once one has ended`,
            details: { limit: 'querier.limits.max_live_tails', value: null, ceiling: maxLiveTails },
          },
        };
      }
      const id = `tail${process.pid}-${++sequence}`;
      const reservation = pool.createQuery(id, { maxBytes: Math.min(maxTailBufferBytes, pool.size) });
      open++;
      let closed = false;
      return {
        ok: true,
        value: {
          id,
          reservation,
          onStop(stop) {
            if (!closed) stoppers.set(id, stop);
          },
          close() {
            if (closed) return;
            closed = true;
            open--;
            stoppers.delete(id);
            pool.releaseQuery(id);
          },
        },
      };
    },
    openCount: () => open,
    stopAll() {
      for (const stop of [...stoppers.values()]) stop();
    },
  };
}
