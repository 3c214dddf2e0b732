/**
 * @module sink-loop
 * The sink: tails the WAL up to the durable position it is told about, decodes each export, mines its records,
 * buffers them per (tenant, hour), and on a trigger flushes: audit events first (the audit barrier), then one
 * Parquet file per partition, then the checkpoint (WAL position and miner snapshot, atomically), then deletion of
 * the WAL segments below it. See docs/design/wal.md (checkpoint, replay).
 *
 * Every flush writes every buffered partition, so the checkpoint is always a record boundary at which the miner
 * snapshot is exact: a restart restores that snapshot and replays the WAL after it, which re-mines the same
 * records to the same template ids.
 *
 * Thread-agnostic: the receiver runs it in its sink worker (off the thread that acknowledges exports); tests run
 * it in-process.
 */
import type { LogRecord, Result, TemplateAuditEvent } from '@sluice/core';
import { createMiner, restoreMiner, type Miner } from '@sluice/miner';
import { decodeLogsJson, decodeLogsProtobuf, type OtlpEncoding } from '@sluice/otlp';
import type { ObjectStore } from '@sluice/storage';
import {
  compareWalPositions,
  deleteSegmentsBelow,
  readCheckpoint,
  readWal,
  writeCheckpoint,
  type WalPosition,
} from '@sluice/wal';
import { PartitionBuffer } from './partition-buffer.js';
import type { FlushTrigger, SinkEvent } from './sink-events.js';
import type { SinkSettings } from './sink-settings.js';
import { planFlush, storeFlush, type FlushPlan } from './write-flush.js';
import { decodeWalExport } from './wal-payload.js';

/** Options of {@link createSinkLoop}. */
export interface SinkLoopOptions {
  readonly settings: SinkSettings;
  /** Where data and audit files go. */
  readonly store: ObjectStore;
  /** Receives every {@link SinkEvent}. Must not throw. */
  readonly emit: (event: SinkEvent) => void;
  /** Clock, ms since the epoch (default `Date.now`): arrival times and the age trigger. */
  readonly now?: () => number;
}

/** A sink; call {@link SinkLoop.run} once. */
export interface SinkLoop {
  /** The WAL is durable through `position`: consume up to there. */
  durable(position: WalPosition): void;
  /** Consume through `position`, flush everything, checkpoint, then let {@link SinkLoop.run} resolve. */
  shutdown(position: WalPosition | null): void;
  /**
   * Runs until a shutdown's flush has succeeded or given up (after 3 attempts: the WAL keeps the records, the
   * next start replays them).
   * @throws an unrecoverable error (unreadable WAL or checkpoint); the caller restarts the sink from the checkpoint.
   */
  run(): Promise<void>;
}

const maxPosition = (a: WalPosition | null, b: WalPosition | null): WalPosition | null =>
  a === null ? b : b === null ? a : compareWalPositions(a, b) >= 0 ? a : b;

/** The `code` of a Node system error (`ENOSPC`, `EIO`, …) or of a storage error, else `null`. */
function errorCode(error: unknown): string | null {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : null;
}

function decode(encoding: OtlpEncoding, body: Uint8Array): Result<LogRecord[], { message: string }> {
  return encoding === 'protobuf' ? decodeLogsProtobuf(body) : decodeLogsJson(body);
}

/** Creates a sink over `settings.walDir` (it starts consuming when {@link SinkLoop.run} is called). */
export function createSinkLoop(options: SinkLoopOptions): SinkLoop {
  const { settings, store, emit } = options;
  const now = options.now ?? Date.now;
  const buffer = new PartitionBuffer();
  let target: WalPosition | null = settings.replayTarget;
  let consumed: WalPosition | null = null;
  let shutdown: { position: WalPosition | null } | null = null;
  /** Ends the current sleep early; `onDurable` is false for a retry's back-off, which only a shutdown cuts short. */
  let wake: { readonly resolve: () => void; readonly onDurable: boolean } | null = null;
  let pendingAudit: TemplateAuditEvent[] = [];
  // The buffer's high-water mark (sluice.budget.peak for sink_buffers): one comparison per WAL frame.
  let peakBytes = 0;
  let lastBufferReport = 0;

  function reportBuffer(at: number): void {
    lastBufferReport = at;
    emit({ type: 'buffer', bytes: buffer.bytes, records: buffer.records, peakBytes });
  }

  async function loadMiner(): Promise<Miner> {
    const checkpoint = await readCheckpoint(settings.walDir);
    if (checkpoint === null) return createMiner(settings.miner);
    consumed = checkpoint.position;
    return checkpoint.payload.length > 0
      ? restoreMiner(checkpoint.payload, settings.miner)
      : createMiner(settings.miner);
  }

  function ingestFrame(miner: Miner, payload: Uint8Array): void {
    const exported = decodeWalExport(payload);
    const decoded = decode(exported.encoding, exported.body);
    // Validated before the ack; a failure here means the decoder changed under a WAL. Skip it, loudly.
    if (!decoded.ok) {
      emit({ type: 'parse_failures', reason: 'undecodable_wal_record', count: 1 });
      return;
    }
    const records = decoded.value;
    const share = records.length === 0 ? 0 : exported.body.length / records.length;
    const arrived = now();
    for (const record of records) {
      buffer.add({ tenantId: exported.tenant, record, mined: miner.mine(exported.tenant, record) }, share, arrived);
    }
    if (buffer.bytes > peakBytes) peakBytes = buffer.bytes;
    if (arrived - lastBufferReport >= 1000) reportBuffer(arrived);
  }

  /** Takes the buffer into a flush plan: keys fixed, checkpoint and miner snapshot taken at the same record. */
  function takeFlush(miner: Miner): { plan: FlushPlan; checkpoint: WalPosition; snapshot: Uint8Array } | null {
    if (buffer.records === 0 || consumed === null) return null;
    // The level the flush takes: its rows stay held (by the plan) until it has been stored.
    reportBuffer(now());
    const audit = pendingAudit.concat(miner.drainAuditEvents());
    pendingAudit = [];
    return { plan: planFlush(audit, buffer.takeAll()), checkpoint: consumed, snapshot: miner.snapshot() };
  }

  /**
   * Flushes, retrying with backoff until it succeeds (once a shutdown is asked for, gives up after 3 tries: the WAL
   * keeps the data). Every retry stores the same plan under the same keys: what a failed attempt stored is not
   * stored again.
   */
  async function flushWithRetry(miner: Miner, trigger: FlushTrigger): Promise<boolean> {
    const oldestArrivalMs = buffer.oldestArrivalMs;
    const flush = takeFlush(miner);
    if (flush === null) return true;
    const started = performance.now();
    let delayMs = 250;
    for (let attempt = 1; ; attempt++) {
      let written;
      try {
        written = await storeFlush(store, flush.plan);
      } catch (error) {
        // Nothing is lost: the checkpoint has not moved, and the plan is stored again (same keys).
        emit({
          type: 'flush_failed',
          trigger,
          message: error instanceof Error ? error.message : String(error),
          code: errorCode(error),
        });
        // Once a shutdown is asked for, a flush under way (an age or size flush that started before it) gives
        // up like the shutdown's own: retrying forever against a silent endpoint would hold the stop open.
        if ((trigger === 'shutdown' || shutdown !== null) && attempt >= 3) return false;
        // New durable frames do not cut the back-off short: under a steady stream they arrive every group
        // commit, and a full store volume (ENOSPC) would be retried at that rate instead of backing off.
        await sleep(delayMs, false);
        delayMs = Math.min(delayMs * 2, 30_000);
        continue;
      }
      // Stored means visible (docs/design/freshness.md): readers list the store, with no cache in between.
      const visibilityLagSecs = oldestArrivalMs === null ? 0 : Math.max(0, now() - oldestArrivalMs) / 1000;
      // Only now: every row up to `checkpoint` is stored, so replay may start after it.
      await writeCheckpoint(settings.walDir, flush.checkpoint, flush.snapshot);
      await deleteSegmentsBelow(settings.walDir, flush.checkpoint);
      emit({
        type: 'flushed',
        trigger,
        ...written,
        seconds: (performance.now() - started) / 1000,
        checkpoint: flush.checkpoint,
        templates: miner.templateCount(),
        visibilityLagSecs,
      });
      return true;
    }
  }

  /** Waits `ms`, or less when {@link SinkLoop.shutdown} (or, with `onDurable`, {@link SinkLoop.durable}) is called. */
  function sleep(ms: number, onDurable = true): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = {
        onDurable,
        resolve: () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        },
      };
    });
  }

  // The freshness cadence (docs/design/freshness.md) is an age trigger in ms; whichever of the two is shorter
  // decides when the oldest buffered row is flushed.
  const intervalMs = settings.flushIntervalMs ?? 0;
  const ageMs = settings.flushAgeSecs * 1000;
  const timedMs = intervalMs > 0 ? Math.min(intervalMs, ageMs) : ageMs;
  const timedTrigger: FlushTrigger = intervalMs > 0 && intervalMs < ageMs ? 'interval' : 'age';

  function dueTrigger(): FlushTrigger | null {
    if (buffer.bytes >= settings.ceilingBytes) return 'ceiling';
    if (buffer.bytes >= settings.flushBytes) return 'size';
    const oldest = buffer.oldestArrivalMs;
    if (oldest !== null && now() - oldest >= timedMs) return timedTrigger;
    return null;
  }

  async function run(): Promise<void> {
    const miner = await loadMiner();
    let replayed = false;
    let replayedExports = 0;
    for (;;) {
      if (target !== null && (consumed === null || compareWalPositions(consumed, target) < 0)) {
        const until = target;
        for await (const frame of readWal(settings.walDir, consumed, until)) {
          ingestFrame(miner, frame.payload);
          consumed = frame.position;
          if (!replayed) replayedExports++;
          const due = dueTrigger();
          // A flush given up at shutdown ends the run: the rest of the WAL stays for the next start. The timed
          // triggers wait for the startup replay to end (a replay is not cut into one file per second), but not
          // for the sink to catch up with a live stream: a sink that trails a steady load never reaches the
          // durable position, and its rows must still be stored at the cadence (docs/design/freshness.md).
          const timed = due === 'age' || due === 'interval';
          if (due !== null && (replayed || !timed) && !(await flushWithRetry(miner, due))) return;
        }
        // Everything through `until` is consumed, even when it held no frame (an empty WAL at startup).
        consumed = maxPosition(consumed, until);
        continue;
      }
      if (!replayed) {
        replayed = true;
        emit({ type: 'replayed', exports: replayedExports });
      }
      if (shutdown !== null) {
        await flushWithRetry(miner, 'shutdown');
        return;
      }
      const due = dueTrigger();
      if (due !== null) {
        if (!(await flushWithRetry(miner, due))) return;
        continue;
      }
      const at = now();
      if (at - lastBufferReport >= 1000) reportBuffer(at);
      const oldest = buffer.oldestArrivalMs;
      const waitMs = oldest === null ? 1000 : Math.max(10, oldest + timedMs - at);
      await sleep(Math.min(waitMs, 1000));
    }
  }

  return {
    durable(position) {
      target = maxPosition(target, position);
      if (wake?.onDurable === true) wake.resolve();
    },
    shutdown(position) {
      shutdown = { position };
      target = maxPosition(target, position);
      wake?.resolve();
    },
    run,
  };
}
