/**
 * @module tail-session
 * One live tail on its response (docs/design/query-governance.md, "Live tail"). The 200 and the NDJSON content type
 * are committed at once; then, every `tail_poll_ms`, one poll runs as a query through the query service (admitted,
 * on the general lane, under the deadline like any query) and hands its lines to the tail, which writes them to the
 * socket. Between polls the tail holds no admission permit, so tails delay one another and /v1/query only by
 * their polls, never by their lifetime; a poll the querier is too busy to admit (a 503 kind) is simply tried again
 * at the next poll.
 *
 * A poll never waits for the client: its lines are written at once, and the bytes the socket has not taken yet are
 * the tail's buffer, reserved on the pool before each write and released as the socket takes them. A write that
 * would take the buffer past `max_tail_buffer_bytes` (or that the pool refuses) ends the tail with
 * `{"dropped":n,…}`: the client fell behind, and the querier does not buffer for it without bound. The tail also
 * ends at `max_tail_secs` (`{"end":"max_tail_secs",…}`), when the querier stops (`{"end":"shutdown",…}`), on a
 * poll error that retrying cannot fix (an `{"error":{…}}` line, as in streamed results), or when the client goes
 * away.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '@sluice/telemetry';
import { errorEnvelope, isRetryable, type QueryError } from './query-error.js';
import type { QueryService } from './query-service.js';
import type { TailSlot } from './live-tails.js';
import type { TailRequest } from './tail-request.js';
import type { TailPollJob } from './worker-protocol.js';

/** Hour partitions a poll lists behind now (late records) and ahead of it (clock skew), ns. */
export const TAIL_PARTITIONS_BEHIND_NS = 3_600_000_000_000n;
export const TAIL_PARTITIONS_AHEAD_NS = 3_600_000_000_000n;

/** Default wait after a tail's last line before a client that does not read it is disconnected, ms. */
export const DEFAULT_TAIL_LINGER_MS = 5000;

/** Why a tail ended. */
export type TailEnd =
  | { readonly kind: 'client_closed' }
  | { readonly kind: 'max_tail_secs' }
  | { readonly kind: 'shutdown' }
  | { readonly kind: 'dropped' }
  | { readonly kind: 'error'; readonly error: QueryError };

/** What a tail session needs. */
export interface TailSessionOptions {
  readonly service: QueryService;
  readonly log: Logger;
  readonly tenant: string;
  readonly request: TailRequest;
  readonly slot: TailSlot;
  readonly outgoing: ServerResponse;
  /** `querier.limits.max_tail_secs`, in ms. */
  readonly maxTailMs: number;
  readonly maxTailBufferBytes: number;
  /** `querier.limits.tail_poll_ms`. */
  readonly pollMs: number;
  /** How long the last line may wait for a client that does not read before it is disconnected. */
  readonly lingerMs?: number;
  readonly nowNs: () => bigint;
  readonly hooks?: TailHooks;
}

/** What a tail reports when it ends. */
export interface TailSummary {
  /** Records written to the client. */
  readonly rows: number;
  /** Records not written because the client fell behind. */
  readonly dropped: number;
  /** Replaced files that were gone before the tail read them (their records were not sent). */
  readonly missedFiles: number;
}

/** Deterministic test seams; production sets none. */
export interface TailHooks {
  /** Awaited before each poll; `signal` fires when the tail ends. */
  beforePoll?(signal: AbortSignal): Promise<void>;
  /** After each poll has been answered (whatever the outcome). */
  afterPoll?(): void;
  /** Once, when the tail knows how it ends, before its last line is written. */
  onEnd?(end: TailEnd, summary: TailSummary): void;
}

const NEWLINE = 0x0a;

function linesIn(batch: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < batch.length; i++) if (batch[i] === NEWLINE) n++;
  return n;
}

/** The start of the hour partition a data key lies in, ns; `null` for a key that is not one. */
function partitionStartNs(key: string): bigint | null {
  const m = /\/year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\//.exec(key);
  if (m === null) return null;
  return BigInt(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]))) * 1_000_000n;
}

/** Runs a tail until it ends; the slot is closed once the response is over. Never throws. */
export async function runTailSession(o: TailSessionOptions): Promise<void> {
  const { outgoing, slot } = o;
  const { reservation } = slot;
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    slot.close();
  };
  let end: TailEnd | null = null;
  const stop = new AbortController();
  const finish = (e: TailEnd): void => {
    if (end !== null) return;
    end = e;
    stop.abort();
  };
  outgoing.once('close', () => {
    finish({ kind: 'client_closed' });
    // Every byte the socket had not taken is gone with it: the reservation and the slot go back now.
    release();
  });
  const lifetime = setTimeout(() => finish({ kind: 'max_tail_secs' }), o.maxTailMs);
  slot.onStop(() => finish({ kind: 'shutdown' }));
  let buffered = 0;
  let sent = 0;
  let dropped = 0;
  let missed = 0;

  /** Reserves then writes `bytes`; false (nothing written) when the buffer or the pool cannot hold them. */
  const send = (bytes: Uint8Array, cb?: () => void): boolean => {
    const n = bytes.byteLength;
    if (buffered + n > o.maxTailBufferBytes) return false;
    if (reservation.tryGrow(n).status !== 'ok') return false;
    buffered += n;
    const taken = (): void => {
      buffered -= n;
      if (!released) reservation.shrink(n);
    };
    if (outgoing.destroyed) {
      taken();
      return false;
    }
    outgoing.write(bytes, () => {
      taken();
      cb?.();
    });
    return true;
  };

  outgoing.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  outgoing.flushHeaders();

  const write = (batch: Uint8Array): Promise<void> => {
    const lines = linesIn(batch);
    if (end !== null) {
      if (end.kind === 'dropped') dropped += lines;
    } else if (send(batch)) sent += lines;
    else {
      dropped += lines;
      finish({ kind: 'dropped' });
    }
    // Never waits for the socket: a poll holds a permit, and a slow client must not hold it (see the module doc).
    return Promise.resolve();
  };

  const read = new Set<string>();
  let first = true;
  while (end === null) {
    if (o.hooks?.beforePoll) await o.hooks.beforePoll(stop.signal);
    if (end !== null) break;
    const now = o.nowNs();
    const from = (first && o.request.sinceNs < now ? o.request.sinceNs : now) - TAIL_PARTITIONS_BEHIND_NS;
    const job: TailPollJob = {
      kind: 'tail_poll',
      predicate: o.request.predicate,
      ...(o.request.projectKeys !== undefined ? { projectKeys: o.request.projectKeys } : {}),
      partitions: { fromNs: from, toNs: now + TAIL_PARTITIONS_AHEAD_NS },
      read: [...read],
      emitFromNs: first ? o.request.sinceNs : null,
    };
    const outcome = await o.service.run(o.tenant, job, { signal: stop.signal, stream: { write } });
    if (outcome.status === 'ok') {
      const trailer = JSON.parse(Buffer.from(outcome.body).toString('utf8')) as {
        read: string[];
        missed: string[];
      };
      outcome.done();
      for (const k of trailer.read) read.add(k);
      missed += trailer.missed.length;
      // Files of partitions no later poll lists are never met again.
      const oldest = now - TAIL_PARTITIONS_BEHIND_NS - TAIL_PARTITIONS_BEHIND_NS;
      for (const k of read) {
        const start = partitionStartNs(k);
        if (start !== null && start < oldest) read.delete(k);
      }
      first = false;
    } else if (outcome.status === 'error') {
      if (!isRetryable(outcome.error.kind)) finish({ kind: 'error', error: outcome.error });
      else
        o.log.info('live tail poll not admitted; retried at the next poll', {
          tail: slot.id,
          error: outcome.error.kind,
        });
    }
    o.hooks?.afterPoll?.();
    if (end !== null) break;
    await new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(t);
        stop.signal.removeEventListener('abort', wake);
        resolve();
      };
      const t = setTimeout(wake, o.pollMs);
      stop.signal.addEventListener('abort', wake, { once: true });
    });
  }
  clearTimeout(lifetime);
  const ended = end as TailEnd;
  o.hooks?.onEnd?.(ended, { rows: sent, dropped, missedFiles: missed });
  o.log.info('live tail ended', {
    tail: slot.id,
    tenant: o.tenant,
    end: ended.kind,
    rows: sent,
    dropped,
    missed_files: missed,
  });
  if (ended.kind === 'client_closed') return release();
  const summary = { rows: sent, missed_files: missed };
  const last =
    ended.kind === 'error'
      ? errorEnvelope(ended.error)
      : JSON.stringify(
          ended.kind === 'dropped' ? { dropped, end: 'client_too_slow', ...summary } : { end: ended.kind, ...summary },
        );
  // A stopping querier closes the connection after the last line, so its listener can close.
  if (ended.kind === 'shutdown') outgoing.shouldKeepAlive = false;
  const line = Buffer.from(`${last}\n`, 'utf8');
  // The last line is written even past the buffer bound (it is small); a client that never reads it is
  // disconnected after the linger, so what it pins is bounded in time too.
  if (!released && reservation.tryGrow(line.byteLength).status === 'ok') {
    const n = line.byteLength;
    buffered += n;
    outgoing.end(line, () => {
      buffered -= n;
      if (!released) reservation.shrink(n);
    });
  } else outgoing.end(line);
  outgoing.once('finish', release);
  if (outgoing.writableFinished) release();
  const linger = setTimeout(() => {
    if (!outgoing.writableFinished) outgoing.destroy();
  }, o.lingerMs ?? DEFAULT_TAIL_LINGER_MS);
  linger.unref();
  outgoing.once('close', () => clearTimeout(linger));
}
