/**
 * @module wal
 * The appender: `openWal` recovers the directory, then `append` writes frames in call order and resolves
 * each one only after an fdatasync covering it succeeded (group commit). Rotation, the fence after an I/O
 * failure and the durable-position notifications live here.
 *
 * Concurrency model: `append` checksums the payload and queues it (call order). One positional write is in
 * flight at a time; it coalesces every queued frame (up to the segment boundary) into one `writev` on the
 * libuv pool, so the main thread never blocks on the disk and frames land on disk in append order. Group
 * commit fdatasyncs run one at a time and may overlap the next write; a round acknowledges exactly the frames
 * whose write had completed when its fdatasync started. Rotation waits for the write in flight, then runs
 * alone: fdatasync the full segment, close it, create the next (header fdatasync'd), fsync the directory,
 * then writing resumes into the new segment.
 *
 * Failure policy (fence, then resume; docs/design/wal.md): a failed write, fdatasync or rotation step rejects
 * every append not yet acknowledged with `WAL_IO` and FENCES the WAL: later appends reject at once with
 * `WAL_FENCED`. It never acknowledges bytes written before a failed fdatasync, and never retries that
 * fdatasync to trust it (Linux may have dropped those pages from the page cache while reporting the error
 * once). Instead, once the write and sync in flight have settled, the fence CUTS the active segment back to
 * the durable position (ftruncate, re-write of the page the cut falls in, fdatasync, directory fsync; after a
 * failed rotation: a fresh next segment), so nothing unacknowledged is left behind an acknowledged frame and
 * nothing before the durable position is touched. A failed cut is retried every `fenceRetryMs`; once the cut is
 * durable and `fenceRetryMs` has passed since the fence, appends resume without a restart.
 */
import * as fs from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ioError, WalError } from './errors.js';
import {
  DEFAULT_MAX_FRAME_BYTES,
  encodeFrameHeader,
  FORMAT_MAX_FRAME_BYTES,
  FRAME_HEADER_BYTES,
  SEGMENT_HEADER_BYTES,
  segmentFileName,
} from './frame-codec.js';
import { nodeFilePort } from './file-port.js';
import type { WalFilePort } from './file-port.js';
import { compareWalPositions, formatWalPosition } from './position.js';
import type { WalPosition } from './position.js';
import { recoverWal } from './recovery.js';
import type { RecoveryReport } from './recovery.js';
import { SegmentWriter } from './segment-writer.js';

/** Default least time a fence lasts, and the cadence of retrying a failed cut. */
export const DEFAULT_FENCE_RETRY_MS = 1000;

/** Options of {@link openWal}. */
export interface WalOptions {
  /** Directory holding the segments (created if missing). One process may open it at a time. */
  readonly dir: string;
  /** Group-commit window: the first unsynced append waits at most this long for its fdatasync. */
  readonly groupCommitMs: number;
  /** A segment that reaches this size is synced and closed, and the next one is opened. */
  readonly segmentBytes: number;
  /** Largest accepted payload; larger ones reject with `WAL_FRAME_TOO_LARGE`. Default 16 MiB. */
  readonly maxFrameBytes?: number;
  /**
   * Least time a fence lasts before appends resume, and the cadence at which a failed cut is retried
   * (default {@link DEFAULT_FENCE_RETRY_MS}). Bounds how often a still-full disk costs a fence.
   */
  readonly fenceRetryMs?: number;
  /** The writer's file operations; default the real file system. Tests pass a faulting port. */
  readonly filePort?: WalFilePort;
  /** Called once per fence, after its first cut attempt (so the event says whether the cut is durable). */
  readonly onFenced?: (event: WalFencedEvent) => void;
  /** Called when a fenced WAL accepts appends again. */
  readonly onResumed?: (event: WalResumedEvent) => void;
}

/** A fence, as {@link WalOptions.onFenced} hears it. */
export interface WalFencedEvent {
  /** The failure that fenced the WAL (`WAL_IO`, naming the operation, the file and the errno). */
  readonly error: WalError;
  /** The position the active segment was cut back to: every acknowledged frame is before it. */
  readonly durable: WalPosition;
  /** Whether the cut is durable; `false` when it failed too (`cutError`; retried every `fenceRetryMs`). */
  readonly cut: boolean;
  readonly cutError: WalError | null;
}

/** The end of a fence, as {@link WalOptions.onResumed} hears it. */
export interface WalResumedEvent {
  /** The failure that had fenced the WAL. */
  readonly error: WalError;
  /** How long appends were refused. */
  readonly fencedMs: number;
  /** Where appends continue. */
  readonly durable: WalPosition;
}

/** Whether the WAL accepts appends: `ok`, or `fenced` after an I/O failure until it resumes. */
export type WalState =
  | { readonly status: 'ok' }
  | {
      readonly status: 'fenced';
      /** The failure that fenced it. */
      readonly error: WalError;
      /** When it fenced (epoch ms). */
      readonly since: number;
      /** Whether the cut back to the durable position is done (then it resumes `fenceRetryMs` after `since`). */
      readonly cut: boolean;
    };

/** Counters since open. */
export interface WalStats {
  /** Frames written. */
  readonly appends: number;
  /** Frame bytes written (headers included). */
  readonly bytesWritten: number;
  /** fdatasync calls made to acknowledge appends (group-commit rounds plus rotation syncs). */
  readonly syncs: number;
  /** Segments rotated. */
  readonly rotations: number;
  /** Times the WAL fenced after an I/O failure. */
  readonly fences: number;
  /** Times a fenced WAL resumed. */
  readonly resumes: number;
  /** True while fenced. */
  readonly fenced: boolean;
}

/** An open write-ahead log. */
export interface Wal {
  /** The WAL directory. */
  readonly dir: string;
  /** What recovery found and healed at open. */
  readonly recovery: RecoveryReport;
  /**
   * Appends one frame. Resolves with the position just after it once an fdatasync covering it succeeded.
   * Rejects with `WAL_FRAME_TOO_LARGE` (nothing written), `WAL_CLOSED`, `WAL_FENCED` (refused at once, nothing
   * written), or `WAL_IO` (the failure that fenced it; not durable). Answer 503 to all but the first.
   */
  append(payload: Uint8Array): Promise<WalPosition>;
  /** Everything up to this position is durable (synced). */
  durablePosition(): WalPosition;
  /**
   * Calls `listener` each time the durable position advances (after the covered appends resolve).
   * Listeners must not throw (a throw is swallowed). Returns an unsubscribe function.
   */
  onDurable(listener: (position: WalPosition) => void): () => void;
  /**
   * Frame bytes written after `checkpoint` (all frame bytes when `null`), across the current and retained
   * segments: the sink's backlog, for a backlog cap.
   */
  backlogBytes(checkpoint: WalPosition | null): number;
  /** `ok`, or `fenced` with the failure and since when (for `/readyz`). */
  state(): WalState;
  /** Counters since open. */
  stats(): WalStats;
  /** Waits for pending syncs, fdatasyncs and closes. Later appends reject with `WAL_CLOSED`. Idempotent. */
  close(): Promise<void>;
}

interface Waiter {
  readonly position: WalPosition;
  readonly at: number;
  readonly resolve: (p: WalPosition) => void;
  readonly reject: (e: WalError) => void;
}

interface Queued {
  readonly header: Buffer;
  readonly payload: Uint8Array;
  readonly at: number;
  readonly resolve: (p: WalPosition) => void;
  readonly reject: (e: WalError) => void;
}

interface Fence {
  readonly error: WalError;
  readonly since: number;
  cut: boolean;
  cutError: WalError | null;
  /** Epoch ms of the next cut attempt, or of the resume once cut. */
  nextAt: number;
  reported: boolean;
  triedAtClose: boolean;
}

/** At most this many frames per writev (2 iovecs each; Linux IOV_MAX is 1024). */
const MAX_FRAMES_PER_WRITE = 256;

/**
 * Opens (creating if needed) and recovers the WAL in `options.dir`, then continues the newest segment or
 * starts a fresh one when it is full.
 * @throws WalError `WAL_CORRUPT` (see the recovery rules in the README) or `WAL_IO`; RangeError on bad options.
 * @example
 * const wal = await openWal({ dir: './wal', groupCommitMs: 100, segmentBytes: 128 * 1024 * 1024 });
 * const position = await wal.append(bytes); // durable now: safe to answer 200
 */
export async function openWal(options: WalOptions): Promise<Wal> {
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const fenceRetryMs = options.fenceRetryMs ?? DEFAULT_FENCE_RETRY_MS;
  const port = options.filePort ?? nodeFilePort;
  if (!Number.isFinite(options.groupCommitMs) || options.groupCommitMs < 0) {
    throw new RangeError(`groupCommitMs must be a finite number >= 0, got ${options.groupCommitMs}`);
  }
  if (!Number.isSafeInteger(options.segmentBytes) || options.segmentBytes <= SEGMENT_HEADER_BYTES) {
    throw new RangeError(`segmentBytes must be an integer > ${SEGMENT_HEADER_BYTES}, got ${options.segmentBytes}`);
  }
  if (!Number.isSafeInteger(maxFrameBytes) || maxFrameBytes < 0 || maxFrameBytes > FORMAT_MAX_FRAME_BYTES) {
    throw new RangeError(`maxFrameBytes must be an integer in [0, ${FORMAT_MAX_FRAME_BYTES}], got ${maxFrameBytes}`);
  }
  if (!Number.isFinite(fenceRetryMs) || fenceRetryMs < 0) {
    throw new RangeError(`fenceRetryMs must be a finite number >= 0, got ${fenceRetryMs}`);
  }
  try {
    // A newly created directory's own entry must be durable too, or a power loss could drop every segment.
    const created = await fs.mkdir(options.dir, { recursive: true });
    if (created !== undefined) await port.fsyncDir(dirname(options.dir));
  } catch (e) {
    throw ioError('create directory', e, options.dir);
  }
  const recovery = await recoverWal(options.dir);
  const last = recovery.segments.at(-1);
  let writer: SegmentWriter;
  try {
    if (last !== undefined && last.size < options.segmentBytes) {
      writer = await SegmentWriter.reopen(port, last.path, last.sequence, last.size);
    } else {
      writer = await SegmentWriter.create(port, options.dir, last === undefined ? 1 : last.sequence + 1);
      await port.fsyncDir(options.dir);
    }
  } catch (e) {
    throw ioError('open segment for append', e, options.dir);
  }
  return new WalImpl(options, { maxFrameBytes, fenceRetryMs, port }, recovery, writer);
}

class WalImpl implements Wal {
  readonly dir: string;
  private readonly groupCommitMs: number;
  private readonly segmentBytes: number;
  private readonly maxFrameBytes: number;
  private readonly fenceRetryMs: number;
  private readonly port: WalFilePort;
  private readonly onFenced: ((event: WalFencedEvent) => void) | undefined;
  private readonly onResumed: ((event: WalResumedEvent) => void) | undefined;
  /** Sequence → current size of every segment this WAL knows (recovered or created). */
  private readonly sizes = new Map<number, number>();
  /** The open segment; `null` after a rotation closed the old one and failed to open the next. */
  private writer: SegmentWriter | null;
  /** Sequence of the open segment, or of the one a failed rotation closed. */
  private sequence: number;
  /** Accepted, not yet written (append order). */
  private queued: Queued[] = [];
  /** A write is in flight. */
  private writing = false;
  /** Written, not yet covered by a successful fdatasync (append order). */
  private unsynced: Waiter[] = [];
  private rotateRequested = false;
  /** An fdatasync round, a rotation or a fence step is in flight. */
  private busy = false;
  private syncDue = false;
  /** The group-commit window, or while fenced the next fence step. */
  private timer: NodeJS.Timeout | null = null;
  private fence: Fence | null = null;
  private closing = false;
  private closePromise: Promise<void> | null = null;
  private idleWaiters: Array<() => void> = [];
  private durable: WalPosition;
  private readonly listeners = new Set<(position: WalPosition) => void>();
  private counters = { appends: 0, bytesWritten: 0, syncs: 0, rotations: 0, fences: 0, resumes: 0 };

  constructor(
    options: WalOptions,
    resolved: { readonly maxFrameBytes: number; readonly fenceRetryMs: number; readonly port: WalFilePort },
    readonly recovery: RecoveryReport,
    writer: SegmentWriter,
  ) {
    this.dir = options.dir;
    this.groupCommitMs = options.groupCommitMs;
    this.segmentBytes = options.segmentBytes;
    this.maxFrameBytes = resolved.maxFrameBytes;
    this.fenceRetryMs = resolved.fenceRetryMs;
    this.port = resolved.port;
    this.onFenced = options.onFenced;
    this.onResumed = options.onResumed;
    for (const s of recovery.segments) this.sizes.set(s.sequence, s.size);
    this.writer = writer;
    this.sequence = writer.sequence;
    this.sizes.set(writer.sequence, writer.size);
    this.durable = { segment: writer.sequence, offset: writer.size };
  }

  append(payload: Uint8Array): Promise<WalPosition> {
    if (this.closing) return Promise.reject(new WalError('WAL_CLOSED', 'WAL is closed'));
    if (this.fence !== null) {
      const f = this.fence;
      return Promise.reject(
        new WalError(
          'WAL_FENCED',
          `WAL fenced since ${new Date(f.since).toISOString()} after: ${f.error.message}; appends resume once the cut ` +
            `back to ${formatWalPosition(this.durable)} is durable`,
          { cause: f.error, ...(f.error.file === undefined ? {} : { file: f.error.file }) },
        ),
      );
    }
    if (payload.length > this.maxFrameBytes) {
      return Promise.reject(
        new WalError(
          'WAL_FRAME_TOO_LARGE',
          `payload of ${payload.length} bytes exceeds the WAL frame limit of ${this.maxFrameBytes} bytes`,
        ),
      );
    }
    const header = encodeFrameHeader(payload);
    return new Promise<WalPosition>((resolve, reject) => {
      this.queued.push({ header, payload, at: Date.now(), resolve, reject });
      this.step();
    });
  }

  durablePosition(): WalPosition {
    return this.durable;
  }

  onDurable(listener: (position: WalPosition) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  backlogBytes(checkpoint: WalPosition | null): number {
    let total = 0;
    for (const [sequence, size] of this.sizes) {
      if (checkpoint === null || sequence > checkpoint.segment) total += size - SEGMENT_HEADER_BYTES;
      else if (sequence === checkpoint.segment)
        total += Math.max(0, size - Math.max(checkpoint.offset, SEGMENT_HEADER_BYTES));
    }
    return total;
  }

  state(): WalState {
    const f = this.fence;
    return f === null ? { status: 'ok' } : { status: 'fenced', error: f.error, since: f.since, cut: f.cut };
  }

  stats(): WalStats {
    return { ...this.counters, fenced: this.fence !== null };
  }

  close(): Promise<void> {
    this.closePromise ??= this.doClose();
    return this.closePromise;
  }

  private async doClose(): Promise<void> {
    this.closing = true;
    await new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.step();
    });
    this.clearTimer();
    const w = this.writer;
    if (w === null) return;
    this.writer = null;
    let finalError: WalError | null = null;
    if (this.fence === null) {
      try {
        await w.sync();
      } catch (e) {
        finalError = ioError('fdatasync on close', e, w.path);
      }
    }
    try {
      await w.close();
    } catch (e) {
      finalError ??= ioError('close segment', e, w.path);
    }
    if (finalError !== null) throw finalError;
  }

  private step(): void {
    this.startWrite();
    this.pump();
  }

  /** Starts one coalesced write of the queued frames, unless one is in flight, a rotation is pending or fenced. */
  private startWrite(): void {
    const w = this.writer;
    if (this.writing || this.rotateRequested || this.fence !== null || w === null || this.queued.length === 0) return;
    const start = w.size;
    let end = start;
    let take = 0;
    const buffers: Uint8Array[] = [];
    while (take < this.queued.length && take < MAX_FRAMES_PER_WRITE && end < this.segmentBytes) {
      const q = this.queued[take++]!;
      buffers.push(q.header, q.payload);
      end += FRAME_HEADER_BYTES + q.payload.length;
    }
    const batch = this.queued.splice(0, take);
    this.writing = true;
    void w
      .writeFrames(buffers)
      .then(
        () => {
          if (this.fence !== null) {
            // Fenced while this write was in flight: its frames are past the cut.
            for (const q of batch) q.reject(this.fence.error);
            return;
          }
          let offset = start;
          for (const q of batch) {
            offset += FRAME_HEADER_BYTES + q.payload.length;
            this.unsynced.push({
              position: { segment: w.sequence, offset },
              at: q.at,
              resolve: q.resolve,
              reject: q.reject,
            });
          }
          this.counters.appends += batch.length;
          this.counters.bytesWritten += offset - start;
          this.sizes.set(w.sequence, offset);
          if (offset >= this.segmentBytes) this.rotateRequested = true;
        },
        (e: unknown) => {
          const error = ioError('write', e, w.path);
          for (const q of batch) q.reject(error);
          this.fenceAfter(error);
        },
      )
      .finally(() => {
        this.writing = false;
        this.step();
      });
  }

  /**
   * Starts the next step if none is running: while fenced, the cut or the resume (once the write in flight has
   * settled); else rotation, a due sync round, or arming the window timer. Tells close() when all is idle.
   */
  private pump(): void {
    if (this.busy) return;
    const f = this.fence;
    if (f !== null) {
      if (this.writing) return; // the write's completion steps again
      if (this.closing) {
        // One last cut, so no unacknowledged frame is left in the file for the next start to replay or trip on.
        if (!f.cut && !f.triedAtClose) {
          f.triedAtClose = true;
          this.run(() => this.fenceStep());
          return;
        }
      } else {
        const wait = f.nextAt - Date.now();
        if (wait <= 0) {
          this.clearTimer();
          this.run(() => this.fenceStep());
        } else if (this.timer === null) {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.pump();
          }, wait);
        }
        return;
      }
    } else {
      if (this.rotateRequested) {
        if (this.writing) return; // the write's completion steps again
        this.clearTimer();
        this.run(() => this.rotate());
        return;
      }
      if (this.unsynced.length > 0) {
        if (this.syncDue || this.closing) {
          this.syncDue = false;
          this.clearTimer();
          this.run(() => this.syncRound());
          return;
        }
        if (this.timer === null) {
          const delay = Math.max(0, this.unsynced[0]!.at + this.groupCommitMs - Date.now());
          this.timer = setTimeout(() => {
            this.timer = null;
            this.syncDue = true;
            this.pump();
          }, delay);
        }
        return;
      }
    }
    if (this.writing || this.queued.length > 0) return;
    const idle = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of idle) resolve();
  }

  private run(op: () => Promise<void>): void {
    this.busy = true;
    void op()
      .catch((e: unknown) => this.fenceAfter(e instanceof WalError ? e : ioError('sync step', e, this.dir)))
      .finally(() => {
        this.busy = false;
        this.step();
      });
  }

  /** One group-commit round: fdatasync the active segment, acknowledge the frames written before it began. */
  private async syncRound(): Promise<void> {
    const batch = this.unsynced.splice(0);
    const w = this.writer!; // frames are unsynced only while a segment is open
    this.counters.syncs++;
    try {
      await w.sync();
    } catch (e) {
      const error = ioError('fdatasync', e, w.path);
      for (const b of batch) b.reject(error);
      this.fenceAfter(error);
      return;
    }
    this.acknowledge(batch);
  }

  /** fdatasync and close the full segment, acknowledge it, create the next, fsync the dir. No write in flight. */
  private async rotate(): Promise<void> {
    const old = this.writer!; // a rotation is requested only by a write into the open segment
    const batch = this.unsynced.splice(0);
    this.counters.syncs++;
    try {
      await old.sync();
    } catch (e) {
      const error = ioError('fdatasync before rotation', e, old.path);
      for (const b of batch) b.reject(error);
      this.fenceAfter(error);
      return;
    }
    this.acknowledge(batch);
    this.writer = null;
    try {
      await old.close();
    } catch (e) {
      this.fenceAfter(ioError('close segment', e, old.path));
      return;
    }
    try {
      await this.openNext();
    } catch (e) {
      this.fenceAfter(e instanceof WalError ? e : ioError('create segment', e, this.dir));
      return;
    }
    this.counters.rotations++;
    this.rotateRequested = false;
  }

  /** Creates segment `sequence + 1` (header synced) and makes its directory entry durable. */
  private async openNext(): Promise<void> {
    const next = await SegmentWriter.create(this.port, this.dir, this.sequence + 1).catch((e: unknown) => {
      throw ioError('create segment', e, this.dir);
    });
    this.writer = next;
    this.sequence = next.sequence;
    this.sizes.set(next.sequence, next.size);
    await this.port.fsyncDir(this.dir).catch((e: unknown) => {
      throw ioError('fsync directory after creating a segment', e, this.dir);
    });
  }

  private acknowledge(batch: readonly Waiter[]): void {
    const last = batch.at(-1);
    if (last === undefined) return;
    for (const b of batch) b.resolve(b.position);
    if (compareWalPositions(last.position, this.durable) > 0) {
      this.durable = last.position;
      for (const l of this.listeners) {
        try {
          l(last.position);
        } catch {
          // A listener's bug must not break acknowledgement; listeners are documented as non-throwing.
        }
      }
    }
  }

  /** Fences: rejects every unacknowledged append and refuses later ones until a cut and a resume. */
  private fenceAfter(error: WalError): void {
    if (this.fence !== null) return;
    this.fence = {
      error,
      since: Date.now(),
      cut: false,
      cutError: null,
      nextAt: 0,
      reported: false,
      triedAtClose: false,
    };
    this.counters.fences++;
    this.clearTimer();
    this.rotateRequested = false;
    this.syncDue = false;
    const pending = [...this.unsynced, ...this.queued];
    this.unsynced = [];
    this.queued = [];
    for (const p of pending) p.reject(error);
  }

  /**
   * Runs alone (no write, sync or rotation in flight): cuts the active segment back to the durable position (or,
   * after a failed rotation, opens a fresh next segment), then resumes once `fenceRetryMs` has passed since the
   * fence. A failed cut is retried at the next step, `fenceRetryMs` later.
   */
  private async fenceStep(): Promise<void> {
    const f = this.fence!;
    if (!f.cut) {
      try {
        await this.cut();
        f.cut = true;
        f.cutError = null;
      } catch (e) {
        f.cutError = e instanceof WalError ? e : ioError('fence cut', e, this.writer?.path ?? this.dir);
      }
      f.nextAt = f.cut ? f.since + this.fenceRetryMs : Date.now() + this.fenceRetryMs;
      if (!f.reported) {
        f.reported = true;
        this.notify(() => this.onFenced?.({ error: f.error, durable: this.durable, cut: f.cut, cutError: f.cutError }));
      }
    }
    if (!f.cut || this.closing || Date.now() < f.nextAt) return;
    this.fence = null;
    this.counters.resumes++;
    this.notify(() => this.onResumed?.({ error: f.error, fencedMs: Date.now() - f.since, durable: this.durable }));
  }

  /**
   * The cut: every byte after the durable position goes (frames never acknowledged; the WAL never trusts a
   * retried fdatasync over them), nothing before it is touched, and the result is durable with its directory
   * entry. An older segment therefore stays perfect and the newest ends at its last acknowledged frame, as
   * recovery requires (README, "Recovery rules").
   */
  private async cut(): Promise<void> {
    const w = this.writer;
    if (w === null) {
      // A rotation closed the old segment (complete and synced) and failed to open the next: a partial next
      // file holds no acknowledged frame (nothing goes into a segment before its entry is durable).
      const next = join(this.dir, segmentFileName(this.sequence + 1));
      await this.port.unlinkIfExists(next).catch((e: unknown) => {
        throw ioError('remove a partial segment', e, next);
      });
      await this.openNext();
    } else {
      const to = this.durable.segment === w.sequence ? this.durable.offset : SEGMENT_HEADER_BYTES;
      await w.cutTo(to).catch((e: unknown) => {
        throw ioError(`cut back to byte ${to}`, e, w.path);
      });
      this.sizes.set(w.sequence, to);
      await this.port.fsyncDir(this.dir).catch((e: unknown) => {
        throw ioError('fsync directory', e, this.dir);
      });
    }
    const open = this.writer!;
    this.rotateRequested = open.size >= this.segmentBytes;
  }

  private notify(call: () => void): void {
    try {
      call();
    } catch {
      // The hooks are advisory (a log line); a throw must not break the WAL.
    }
  }

  private clearTimer(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}
