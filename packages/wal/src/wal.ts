/**
 * @module wal
 * The appender: `openWal` recovers the directory, then `append` writes frames in call order and resolves
 * each one only after an fdatasync covering it succeeded (group commit). Rotation, failure handling and
 * the durable-position notifications live here.
 *
 * Concurrency model: `append` checksums the payload and queues it (call order). One positional write is in
 * flight at a time; it coalesces every queued frame (up to the segment boundary) into one `writev` on the
 * libuv pool, so the main thread never blocks on the disk and frames land on disk in append order. Group
 * commit fdatasyncs run one at a time and may overlap the next write; a round acknowledges exactly the frames
 * whose write had completed when its fdatasync started. Rotation waits for the write in flight, then runs
 * alone: fdatasync the full segment, close it, create the next (header fdatasync'd), fsync the directory,
 * then writing resumes into the new segment.
 *
 * Failure policy (fail closed): a failed write or fdatasync rejects every append it covers and every append
 * not yet acknowledged, and the WAL refuses all later appends with `WAL_IO`. It never acknowledges bytes
 * written before a failed fdatasync (Linux may have dropped them from the page cache while reporting the
 * error once). Recovery on the next `openWal` decides what survived; such frames may then be replayed, which
 * is fine under at-least-once delivery (their exporters got a 503 and retry).
 */
import * as fs from 'node:fs/promises';
import { dirname } from 'node:path';
import { ioError, WalError } from './errors.js';
import {
  DEFAULT_MAX_FRAME_BYTES,
  encodeFrameHeader,
  FORMAT_MAX_FRAME_BYTES,
  FRAME_HEADER_BYTES,
  SEGMENT_HEADER_BYTES,
} from './frame-codec.js';
import { fsyncDir } from './fs-util.js';
import { compareWalPositions } from './position.js';
import type { WalPosition } from './position.js';
import { recoverWal } from './recovery.js';
import type { RecoveryReport } from './recovery.js';
import { SegmentWriter } from './segment-writer.js';

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
  /** Called once when the WAL fails closed (a write, fdatasync, rotation or close step failed). */
  readonly onSyncError?: (error: WalError) => void;
}

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
  /** True once the WAL failed closed. */
  readonly failed: boolean;
}

/** An open write-ahead log. */
export interface Wal {
  /** The WAL directory. */
  readonly dir: string;
  /** What recovery found and healed at open. */
  readonly recovery: RecoveryReport;
  /**
   * Appends one frame. Resolves with the position just after it once an fdatasync covering it succeeded.
   * Rejects with `WAL_FRAME_TOO_LARGE` (nothing written), `WAL_CLOSED`, or `WAL_IO` (not durable; answer 503).
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
  if (!Number.isFinite(options.groupCommitMs) || options.groupCommitMs < 0) {
    throw new RangeError(`groupCommitMs must be a finite number >= 0, got ${options.groupCommitMs}`);
  }
  if (!Number.isSafeInteger(options.segmentBytes) || options.segmentBytes <= SEGMENT_HEADER_BYTES) {
    throw new RangeError(`segmentBytes must be an integer > ${SEGMENT_HEADER_BYTES}, got ${options.segmentBytes}`);
  }
  if (!Number.isSafeInteger(maxFrameBytes) || maxFrameBytes < 0 || maxFrameBytes > FORMAT_MAX_FRAME_BYTES) {
    throw new RangeError(`maxFrameBytes must be an integer in [0, ${FORMAT_MAX_FRAME_BYTES}], got ${maxFrameBytes}`);
  }
  try {
    // A newly created directory's own entry must be durable too, or a power loss could drop every segment.
    const created = await fs.mkdir(options.dir, { recursive: true });
    if (created !== undefined) await fsyncDir(dirname(options.dir));
  } catch (e) {
    throw ioError('create directory', e, options.dir);
  }
  const recovery = await recoverWal(options.dir);
  const last = recovery.segments.at(-1);
  let writer: SegmentWriter;
  try {
    if (last !== undefined && last.size < options.segmentBytes) {
      writer = await SegmentWriter.reopen(last.path, last.sequence, last.size);
    } else {
      writer = await SegmentWriter.create(options.dir, last === undefined ? 1 : last.sequence + 1);
      await fsyncDir(options.dir);
    }
  } catch (e) {
    throw ioError('open segment for append', e, options.dir);
  }
  return new WalImpl(options, maxFrameBytes, recovery, writer);
}

class WalImpl implements Wal {
  readonly dir: string;
  private readonly groupCommitMs: number;
  private readonly segmentBytes: number;
  private readonly onSyncError: ((error: WalError) => void) | undefined;
  /** Sequence → current size of every segment this WAL knows (recovered or created). */
  private readonly sizes = new Map<number, number>();
  private writerOpen = true;
  /** Accepted, not yet written (append order). */
  private queued: Queued[] = [];
  /** A write is in flight. */
  private writing = false;
  /** Written, not yet covered by a successful fdatasync (append order). */
  private unsynced: Waiter[] = [];
  private rotateRequested = false;
  /** An fdatasync round or a rotation is in flight. */
  private busy = false;
  private syncDue = false;
  private timer: NodeJS.Timeout | null = null;
  private failure: WalError | null = null;
  private closing = false;
  private closePromise: Promise<void> | null = null;
  private idleWaiters: Array<() => void> = [];
  private durable: WalPosition;
  private readonly listeners = new Set<(position: WalPosition) => void>();
  private counters = { appends: 0, bytesWritten: 0, syncs: 0, rotations: 0 };

  constructor(
    options: WalOptions,
    private readonly maxFrameBytes: number,
    readonly recovery: RecoveryReport,
    private writer: SegmentWriter,
  ) {
    this.dir = options.dir;
    this.groupCommitMs = options.groupCommitMs;
    this.segmentBytes = options.segmentBytes;
    this.onSyncError = options.onSyncError;
    for (const s of recovery.segments) this.sizes.set(s.sequence, s.size);
    this.sizes.set(writer.sequence, writer.size);
    this.durable = { segment: writer.sequence, offset: writer.size };
  }

  append(payload: Uint8Array): Promise<WalPosition> {
    if (this.closing) return Promise.reject(new WalError('WAL_CLOSED', 'WAL is closed'));
    if (this.failure !== null) {
      return Promise.reject(
        new WalError('WAL_IO', `WAL failed closed after an I/O error; restart to recover: ${this.failure.message}`, {
          cause: this.failure,
        }),
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

  stats(): WalStats {
    return { ...this.counters, failed: this.failure !== null };
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
    if (!this.writerOpen) return;
    this.writerOpen = false;
    let finalError: WalError | null = null;
    if (this.failure === null) {
      try {
        await this.writer.sync();
      } catch (e) {
        finalError = ioError('fdatasync on close', e, this.writer.path);
        this.fail(finalError);
      }
    }
    try {
      await this.writer.close();
    } catch (e) {
      finalError ??= ioError('close segment', e, this.writer.path);
    }
    if (finalError !== null) throw finalError;
  }

  private step(): void {
    this.startWrite();
    this.pump();
  }

  /** Starts one coalesced write of the queued frames, unless one is in flight or a rotation is pending. */
  private startWrite(): void {
    if (this.writing || this.rotateRequested || this.failure !== null || this.queued.length === 0) return;
    const w = this.writer;
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
          if (this.failure !== null) {
            for (const q of batch) q.reject(this.failure);
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
          this.fail(error);
        },
      )
      .finally(() => {
        this.writing = false;
        this.step();
      });
  }

  /** Starts the next sync step if none is running: rotation, a due sync round, or arming the window timer. */
  private pump(): void {
    if (this.busy) return;
    if (this.failure === null) {
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
    for (const f of idle) f();
  }

  private run(op: () => Promise<void>): void {
    this.busy = true;
    void op()
      .catch((e: unknown) => this.fail(e instanceof WalError ? e : ioError('sync step', e, this.dir)))
      .finally(() => {
        this.busy = false;
        this.step();
      });
  }

  /** One group-commit round: fdatasync the active segment, acknowledge the frames written before it began. */
  private async syncRound(): Promise<void> {
    const batch = this.unsynced.splice(0);
    const w = this.writer;
    this.counters.syncs++;
    try {
      await w.sync();
    } catch (e) {
      const error = ioError('fdatasync', e, w.path);
      for (const b of batch) b.reject(error);
      this.fail(error);
      return;
    }
    this.acknowledge(batch);
  }

  /** fdatasync and close the full segment, acknowledge it, create the next, fsync the dir. No write in flight. */
  private async rotate(): Promise<void> {
    const old = this.writer;
    const batch = this.unsynced.splice(0);
    this.counters.syncs++;
    try {
      await old.sync();
    } catch (e) {
      const error = ioError('fdatasync before rotation', e, old.path);
      for (const b of batch) b.reject(error);
      this.fail(error);
      return;
    }
    this.acknowledge(batch);
    this.writerOpen = false;
    try {
      await old.close();
    } catch (e) {
      this.fail(ioError('close segment', e, old.path));
      return;
    }
    let next: SegmentWriter;
    try {
      next = await SegmentWriter.create(this.dir, old.sequence + 1);
    } catch (e) {
      this.fail(ioError('create segment', e, this.dir));
      return;
    }
    this.writer = next;
    this.writerOpen = true;
    this.sizes.set(next.sequence, next.size);
    try {
      await fsyncDir(this.dir);
    } catch (e) {
      this.fail(ioError('fsync directory after rotation', e, this.dir));
      return;
    }
    this.counters.rotations++;
    this.rotateRequested = false;
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

  /** Fails closed: rejects every unacknowledged append and refuses later ones. */
  private fail(error: WalError): void {
    if (this.failure !== null) return;
    this.failure = error;
    this.clearTimer();
    this.rotateRequested = false;
    const pending = [...this.unsynced, ...this.queued];
    this.unsynced = [];
    this.queued = [];
    for (const p of pending) p.reject(error);
    try {
      this.onSyncError?.(error);
    } catch {
      // The hook is advisory.
    }
  }

  private clearTimer(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}
