/**
 * @module backlog-budget
 * The WAL backlog as a budget (docs/deployment.md, "The budget tree"): bytes past the sink's checkpoint now, and the
 * most there have been. The backlog grows only when frames become durable, so its high-water mark is taken at each
 * group commit (one `backlogBytes` per fdatasync, never per export) and again at every read.
 */
import type { Wal, WalPosition } from '@sluice/wal';

/** The backlog's figures in bytes. */
export interface BacklogBudget {
  /** Bytes past the checkpoint now, and the most since the tracker was created. */
  figures(): { readonly used: number; readonly peak: number };
  /** Stops listening to the WAL. */
  stop(): void;
}

/** Tracks `wal`'s backlog past `checkpoint()` (the sink's last checkpoint, `null` before its first flush). */
export function trackWalBacklog(
  wal: Pick<Wal, 'onDurable' | 'backlogBytes'>,
  checkpoint: () => WalPosition | null,
): BacklogBudget {
  let peak = 0;
  const now = (): number => {
    const bytes = wal.backlogBytes(checkpoint());
    if (bytes > peak) peak = bytes;
    return bytes;
  };
  const stop = wal.onDurable(() => void now());
  return { figures: () => ({ used: now(), peak }), stop };
}
