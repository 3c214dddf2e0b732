/**
 * @module disk-guard
 * The disk guard (docs/design/wal.md#the-disk-guard): free space on the WAL volume, read with `statfs` on a timer
 * so that the ingest path only reads a cached verdict (no syscall per export). Below
 * `receiver.limits.min_free_disk_percent` the receiver refuses exports (`disk_low`, 503 + Retry-After /
 * UNAVAILABLE) *before* anything is written, and `/readyz` answers 503, so a full volume never turns into an
 * ENOSPC in the middle of a WAL write (which fails the WAL).
 *
 * - Free percent = `bavail / blocks`: the blocks an unprivileged writer may still use (root-reserved blocks do not
 *   count as free).
 * - Hysteresis: the guard trips when a sample is below the threshold and clears only once a sample is at least
 *   {@link HYSTERESIS_PERCENT} point above it (half the distance to 100 % for a threshold above 98), so a volume
 *   hovering at the threshold does not flap the readiness probe.
 * - Between two samples, the bytes admitted since the last sample are subtracted from the sampled free space,
 *   and an export that would take the projected free space below the threshold is refused too (without changing
 *   readiness): a burst between samples cannot write the volume past the threshold.
 * - A failed `statfs` keeps the last verdict (a broken WAL directory fails the WAL itself) and is reported once
 *   per run of failures.
 */
import { statfs } from 'node:fs/promises';

/** Percentage points above the threshold a sample must reach before a tripped guard clears. */
export const HYSTERESIS_PERCENT = 1;

/** Default time between two samples, in ms. */
export const DISK_GUARD_INTERVAL_MS = 1000;

/** Size and free space of a volume, in bytes. */
export interface VolumeSpace {
  readonly totalBytes: number;
  /** Bytes an unprivileged writer may still use (`bavail × bsize`). */
  readonly availableBytes: number;
}

/** Reads the space of the volume holding `path` (`fs.promises.statfs` unless a test injects one). */
export type ReadVolumeSpace = (path: string) => Promise<VolumeSpace>;

/** One sample, as the guard's observer sees it. */
export interface DiskSample {
  readonly path: string;
  readonly totalBytes: number;
  readonly freeBytes: number;
  /** `freeBytes / totalBytes × 100` */
  readonly freePercent: number;
  /** `receiver.limits.min_free_disk_percent` */
  readonly thresholdPercent: number;
}

/** What the guard reports (the composition root turns it into log lines). */
export interface DiskGuardObserver {
  /** A sample fell below the threshold: exports are refused from now on. */
  tripped(sample: DiskSample): void;
  /** A sample rose past the threshold plus the hysteresis: exports are accepted again. */
  cleared(sample: DiskSample): void;
  /** `statfs` failed (first failure of a run of failures only); the last verdict stands. */
  checkFailed(path: string, message: string): void;
}

/** Options of {@link createDiskGuard}. */
export interface DiskGuardOptions {
  /** A directory on the guarded volume (`receiver.wal_dir`). */
  readonly path: string;
  /** `receiver.limits.min_free_disk_percent`; 0 disables the guard (no timer, no syscall). */
  readonly minFreePercent: number;
  /** Time between samples, ms (default {@link DISK_GUARD_INTERVAL_MS}). */
  readonly intervalMs?: number;
  readonly readSpace?: ReadVolumeSpace;
  readonly observer?: DiskGuardObserver;
}

/** A running disk guard. */
export interface DiskGuard {
  /** Takes the first sample, then samples every `intervalMs`. Resolves once the first sample is in. */
  start(): Promise<void>;
  /** Takes a sample now (the timer calls this; tests call it to step the guard). */
  sample(): Promise<void>;
  /**
   * Admits an export of `bytes` or says why not: `null` when it may be written (its bytes are then counted
   * against the free space until the next sample), else the refusal message (for the client).
   */
  admit(bytes: number): string | null;
  /** `null` while the guard is not tripped, else why the receiver is not ready. */
  notReadyReason(): string | null;
  /** Stops the timer. */
  stop(): void;
}

const defaultReadSpace: ReadVolumeSpace = async (path) => {
  const s = await statfs(path);
  return { totalBytes: s.blocks * s.bsize, availableBytes: s.bavail * s.bsize };
};

/** The free percent at which a tripped guard clears (see {@link HYSTERESIS_PERCENT}). */
export function clearPercent(thresholdPercent: number): number {
  return Math.min(thresholdPercent + HYSTERESIS_PERCENT, (thresholdPercent + 100) / 2);
}

/** Free space in percent of the volume (0 for a volume reporting no blocks). */
export function freePercentOf(space: VolumeSpace): number {
  return space.totalBytes > 0 ? (space.availableBytes / space.totalBytes) * 100 : 0;
}

const percentText = (p: number): string => `${(Math.floor(p * 10) / 10).toFixed(1)}%`;

/** Creates the disk guard of the WAL volume. */
export function createDiskGuard(options: DiskGuardOptions): DiskGuard {
  const { path, minFreePercent: threshold, observer } = options;
  const readSpace = options.readSpace ?? defaultReadSpace;
  const enabled = threshold > 0;
  let last: VolumeSpace | null = null;
  let tripped = false;
  let admittedSinceSample = 0;
  let failing = false;
  let sampling: Promise<void> | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;

  const sampleOf = (space: VolumeSpace): DiskSample => ({
    path,
    totalBytes: space.totalBytes,
    freeBytes: space.availableBytes,
    freePercent: freePercentOf(space),
    thresholdPercent: threshold,
  });

  const takeSample = async (): Promise<void> => {
    let space: VolumeSpace;
    try {
      space = await readSpace(path);
    } catch (error) {
      if (!failing) observer?.checkFailed(path, error instanceof Error ? error.message : String(error));
      failing = true;
      return;
    }
    failing = false;
    last = space;
    admittedSinceSample = 0;
    const percent = freePercentOf(space);
    if (!tripped && percent < threshold) {
      tripped = true;
      observer?.tripped(sampleOf(space));
    } else if (tripped && percent >= clearPercent(threshold)) {
      tripped = false;
      observer?.cleared(sampleOf(space));
    }
  };

  const sample = (): Promise<void> => {
    if (!enabled) return Promise.resolve();
    // One statfs at a time: a slow volume must not pile samples up.
    sampling ??= takeSample().finally(() => (sampling = null));
    return sampling;
  };

  const refusal = (percent: number): string =>
    `the write-ahead log volume has ${percentText(percent)} free space, below receiver.limits.min_free_disk_percent (${threshold}%); retry`;

  return {
    async start() {
      if (!enabled) return;
      await sample();
      timer = setInterval(() => void sample(), options.intervalMs ?? DISK_GUARD_INTERVAL_MS);
      timer.unref();
    },
    sample,
    admit(bytes) {
      if (!enabled || last === null) return null;
      if (tripped) return refusal(freePercentOf(last));
      const projected = {
        totalBytes: last.totalBytes,
        availableBytes: last.availableBytes - admittedSinceSample - bytes,
      };
      if (freePercentOf(projected) < threshold) return refusal(freePercentOf(projected));
      admittedSinceSample += bytes;
      return null;
    },
    notReadyReason() {
      if (!tripped || last === null) return null;
      return `the write-ahead log volume has ${percentText(freePercentOf(last))} free space, below receiver.limits.min_free_disk_percent (${threshold}%)`;
    },
    stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}
