/**
 * @module wal-health
 * What the receiver says about a fenced WAL (docs/design/wal.md, "Fence and resume"): the `/readyz` reason while
 * fenced, and the observer the composition root turns into one log line when the WAL fences and one when it
 * resumes. The reason names the errno, never the file system's message or the path (probes need no token).
 */
import type { WalFencedEvent, WalResumedEvent, WalState } from '@sluice/wal';

/** Hooks for the WAL's fence and resume (log lines live in the composition root). */
export interface WalObserver {
  /** The WAL fenced after an I/O failure: exports are refused (503 / UNAVAILABLE) until it resumes. */
  fenced(event: WalFencedEvent): void;
  /** The WAL accepts exports again. */
  resumed(event: WalResumedEvent): void;
}

/** The `/readyz` reason for a WAL state: `null` when it accepts appends. */
export function walNotReadyReason(state: WalState): string | null {
  if (state.status === 'ok') return null;
  const cause = state.error.errno ?? 'an I/O error';
  return (
    `the write-ahead log is fenced after ${cause} since ${new Date(state.since).toISOString()}; exports are ` +
    'refused until it resumes by itself once the disk accepts writes again (receiver.wal.fence_retry_ms)'
  );
}
