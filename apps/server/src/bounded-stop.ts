/**
 * @module bounded-stop
 * A graceful stop with a bound (`server.shutdown_timeout_secs`): the roles stop in order, and if that has not
 * finished in time — typically the sink's last flush to an object store that does not answer — the stop is
 * abandoned and the caller exits. Nothing acknowledged is lost by abandoning: every record not yet in object
 * storage is in the WAL past the sink's checkpoint and is replayed at the next start (docs/configuration.md,
 * `server`). The outcome says where the stop was cut and what stays in the WAL, for the log line an operator reads.
 */
import type { Receiver } from '@sluice/receiver';
import type { RunningServer, StopStage } from './start-server.js';

/** How a bounded stop ended. */
export type BoundedStopOutcome =
  | { readonly status: 'stopped'; readonly ms: number }
  | {
      readonly status: 'abandoned';
      readonly ms: number;
      /** The step still running at the bound. */
      readonly stage: StopStage | null;
      /** The WAL not yet stored (durable position and the sink's checkpoint), or `null` when none. */
      readonly walUnstored: ReturnType<Receiver['unfinished']>;
    }
  | { readonly status: 'failed'; readonly ms: number; readonly error: unknown };

/** Timers, injectable for tests. */
export interface StopTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const defaultTimers: StopTimers = {
  setTimeout: (cb, ms) => setTimeout(cb, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** Stops `server` gracefully, giving up after `timeoutMs`. Never rejects. */
export function stopWithin(
  server: Pick<RunningServer, 'stop' | 'receiver'>,
  timeoutMs: number,
  timers: StopTimers = defaultTimers,
): Promise<BoundedStopOutcome> {
  const started = performance.now();
  const ms = (): number => Math.round(performance.now() - started);
  let stage: StopStage | null = null;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: BoundedStopOutcome): void => {
      if (settled) return;
      settled = true;
      timers.clearTimeout(timer);
      resolve(outcome);
    };
    const timer = timers.setTimeout(() => {
      settle({ status: 'abandoned', ms: ms(), stage, walUnstored: server.receiver?.unfinished() ?? null });
    }, timeoutMs);
    server
      .stop((s) => {
        stage = s;
      })
      .then(
        () => settle({ status: 'stopped', ms: ms() }),
        (error: unknown) => settle({ status: 'failed', ms: ms(), error }),
      );
  });
}
