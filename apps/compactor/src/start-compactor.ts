/**
 * @module start-compactor
 * The compactor role: every `compaction.interval_secs` it sweeps the store's `data/` tree, hands each partition to
 * {@link compactPartition} and records the outcome (log line, metrics, {@link SweepReport}). Sweeps never overlap;
 * one failed partition does not stop the sweep.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { SluiceConfig } from '@sluice/config';
import { createObjectStore, parseDataKey, storageSettingsFrom } from '@sluice/storage';
import type { ObjectStore } from '@sluice/storage';
import type { Logger } from '@sluice/telemetry';
import {
  SLUICE_COMPACTION_RESULT_VALUE_COMMITTED,
  SLUICE_COMPACTION_RESULT_VALUE_ERROR,
  SLUICE_COMPACTION_RESULT_VALUE_LOST_RACE,
  SLUICE_COMPACTION_RESULT_VALUE_NOOP,
  SLUICE_COMPACTION_RESULT_VALUE_QUARANTINED,
} from '@sluice/telemetry';
import { compactPartition } from '@sluice/compaction';
import type { CompactPartitionOptions, PartitionOutcome, QuarantinedObject } from '@sluice/compaction';
import type { MemoryLease, MemoryLender } from './memory-lender.js';
import { compactionHeapLimitMb, createWorkerPartitionRunner } from './partition-runner.js';
import type { PartitionRunner, RunResult } from './partition-runner.js';
import { createCompactionMetrics } from './compaction-metrics.js';
import type { CompactorMeter } from './compaction-metrics.js';

/** Dependencies of {@link startCompactor}. */
export interface CompactorDeps {
  readonly log: Logger;
  readonly meter?: CompactorMeter;
  /** Clock, ms since the epoch (default `Date.now`). */
  readonly now?: () => number;
  /**
   * The object store (default: built from `config.storage`). Tests pass a `createCasEnforcingStore` wrapper.
   * Without `store`, `now` and `beforeCommit` (production), partitions are merged in a compaction worker thread
   * under a heap cap; with any of them, in-process, so the injected objects apply.
   */
  readonly store?: ObjectStore;
  /** Directory for spilled sort runs (default `os.tmpdir()`). */
  readonly scratchDir?: string;
  /** Rows per output row group (default 65,536; tests lower it to exercise the external merge). */
  readonly rowGroupRows?: number;
  /** See {@link CompactPartitionOptions.beforeCommit}. */
  readonly beforeCommit?: CompactPartitionOptions['beforeCommit'];
  /** The querier's pool when both run in one process: each merge borrows its heap cap from it (see memory-lender.ts). */
  readonly memoryLender?: MemoryLender;
  /** Wait between attempts to borrow from a busy pool, ms (default 250). */
  readonly borrowRetryMs?: number;
}

/** An unexpected failure while compacting one partition (it is retried next sweep). */
export interface PartitionFailure {
  readonly status: 'error';
  readonly partition: string;
  readonly message: string;
}

/** What one sweep did. */
export interface SweepReport {
  /** Data partitions seen in the listing. */
  readonly partitions: number;
  /** Partitions skipped because their hour plus the grace has not passed. */
  readonly unsealed: number;
  /** Sealed partitions that needed nothing (at most one live file). */
  readonly noop: number;
  /** Every sealed partition that was committed, quarantined, lost its race or failed, in listing order. */
  readonly outcomes: readonly (Exclude<PartitionOutcome, { status: 'noop' }> | PartitionFailure)[];
  /** Corrupt objects quarantined (across all partitions); see packages/compaction/README.md "Quarantine". */
  readonly quarantined: readonly QuarantinedObject[];
  /** Keys of unreferenced files deleted (across all partitions). */
  readonly deleted: readonly string[];
  /** Keys of unlisted files kept because nothing proves them redundant (see README "Stranded files"). */
  readonly stranded: readonly string[];
  readonly durationMs: number;
}

/** A running compactor. */
export interface Compactor {
  /** Runs one sweep now (after any sweep in progress) and reports it. */
  sweepOnce(): Promise<SweepReport>;
  /** Stops the timer, aborts the sweep in progress between partitions and waits for it. Idempotent. */
  stop(): Promise<void>;
}

/** `data/…/hour=HH/` of a data-file key, or `null`. */
function partitionPrefixOf(key: string): string | null {
  return parseDataKey(key) === null ? null : key.slice(0, key.lastIndexOf('/') + 1);
}

/**
 * Starts the compactor role: the first sweep runs one `compaction.interval_secs` after start, each next one an
 * interval after the previous finished. `config.compaction.enabled` is the caller's decision (this always starts).
 *
 * @example
 * const compactor = startCompactor(config, { log: createLogger('compactor'), meter: telemetry.meter });
 * // on shutdown:
 * await compactor.stop();
 */
export function startCompactor(config: SluiceConfig, deps: CompactorDeps): Compactor {
  const { log } = deps;
  const now = deps.now ?? Date.now;
  const ownStore = deps.store === undefined;
  const store = deps.store ?? createObjectStore(storageSettingsFrom(config.storage));
  const metrics = createCompactionMetrics(deps.meter);
  const intervalMs = config.compaction.intervalSecs * 1000;
  const graceSecs = config.compaction.graceSecs;
  const openHourMinFileAgeSecs = config.compaction.openHourMinFileAgeSecs;
  const abort = new AbortController();
  let chain: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const inProcess = deps.store !== undefined || deps.now !== undefined || deps.beforeCommit !== undefined;
  const memoryBudgetBytes = config.compaction.memoryBudgetBytes;
  const localRunner: PartitionRunner = {
    async run(prefix, beforeMerge): Promise<RunResult> {
      try {
        const outcome = await compactPartition(store, prefix, {
          now,
          graceSecs,
          openHourMinFileAgeSecs,
          memoryBudgetBytes,
          signal: abort.signal,
          ...(deps.scratchDir !== undefined ? { scratchDir: deps.scratchDir } : {}),
          ...(deps.rowGroupRows !== undefined ? { rowGroupRows: deps.rowGroupRows } : {}),
          ...(deps.beforeCommit !== undefined ? { beforeCommit: deps.beforeCommit } : {}),
          ...(beforeMerge !== undefined ? { beforeMerge } : {}),
        });
        return { status: 'ok', outcome };
      } catch (e) {
        if (abort.signal.aborted) throw e;
        return { status: 'error', message: e instanceof Error ? e.message : String(e) };
      }
    },
    close: () => Promise.resolve(),
  };
  const newRunner = (): PartitionRunner =>
    inProcess
      ? localRunner
      : createWorkerPartitionRunner({
          data: {
            storage: storageSettingsFrom(config.storage),
            graceSecs,
            openHourMinFileAgeSecs,
            memoryBudgetBytes,
            ...(deps.scratchDir !== undefined ? { scratchDir: deps.scratchDir } : {}),
            ...(deps.rowGroupRows !== undefined ? { rowGroupRows: deps.rowGroupRows } : {}),
          },
        });

  const loanBytes = deps.memoryLender?.loanBytes(compactionHeapLimitMb(memoryBudgetBytes) * 1_048_576) ?? 0;
  const retryMs = deps.borrowRetryMs ?? 250;

  /** Borrows the merge's memory from the query pool, waiting (abortably) while queries hold it. */
  async function borrow(prefix: string): Promise<MemoryLease | null> {
    const lender = deps.memoryLender;
    if (lender === undefined) return null;
    let waited = false;
    for (;;) {
      const lease = lender.tryBorrow(loanBytes);
      if (lease !== null) {
        if (waited) log.info('compaction got its memory from the query pool', { partition: prefix, bytes: loanBytes });
        return lease;
      }
      if (!waited)
        log.info('compaction waiting for the query pool to lend its memory', { partition: prefix, bytes: loanBytes });
      waited = true;
      // Abortable wait (the timer and its abort listener both go away when it ends).
      await delay(retryMs, undefined, { signal: abort.signal }).catch(() => undefined);
      if (abort.signal.aborted) throw new Error('compactor stopped');
    }
  }

  async function compactOne(runner: PartitionRunner, prefix: string, into: Accumulator): Promise<void> {
    // Borrowed only once the partition is known to need a merge: unsealed and single-file partitions borrow nothing.
    let lease: MemoryLease | null = null;
    const started = performance.now();
    let result: RunResult;
    try {
      result = await runner.run(prefix, async () => {
        lease = await borrow(prefix);
      });
    } finally {
      // The cast undoes TS narrowing `lease` to null: it cannot see the callback's assignment.
      (lease as MemoryLease | null)?.release();
    }
    if (abort.signal.aborted) throw new Error('compactor stopped');
    if (result.status === 'error') {
      log.error('compaction failed; the partition is unchanged and is retried next sweep', {
        partition: prefix,
        reason: result.message,
      });
      metrics.record(SLUICE_COMPACTION_RESULT_VALUE_ERROR, (performance.now() - started) / 1000, 0, 0);
      into.outcomes.push({ status: 'error', partition: prefix, message: result.message });
      return;
    }
    const outcome: PartitionOutcome = result.outcome;
    const seconds = (performance.now() - started) / 1000;
    if (outcome.status === 'noop' && outcome.reason === 'unsealed') {
      into.unsealed++;
      return;
    }
    into.deleted.push(...outcome.cleanup.deleted);
    into.stranded.push(...outcome.cleanup.stranded);
    if (outcome.cleanup.stranded.length > 0) {
      log.warn(
        'adopting unlisted data files (late writes) into the partition: not in the manifest and not compaction outputs',
        {
          partition: prefix,
          files: outcome.cleanup.stranded,
        },
      );
    }
    const deleted = outcome.cleanup.deleted.length;
    switch (outcome.status) {
      case 'noop':
        into.noop++;
        metrics.record(SLUICE_COMPACTION_RESULT_VALUE_NOOP, seconds, 0, deleted);
        return;
      case 'committed':
        into.outcomes.push(outcome);
        metrics.record(SLUICE_COMPACTION_RESULT_VALUE_COMMITTED, seconds, outcome.rows, deleted);
        log.info('partition compacted', {
          partition: prefix,
          generation: outcome.generation,
          inputs: outcome.inputs.length,
          output: outcome.output,
          rows: outcome.rows,
        });
        if (outcome.auditError !== undefined)
          log.error('compaction audit record not written', { partition: prefix, error: outcome.auditError });
        return;
      case 'quarantined':
        into.outcomes.push(outcome);
        into.quarantined.push(...outcome.quarantined);
        metrics.record(SLUICE_COMPACTION_RESULT_VALUE_QUARANTINED, seconds, 0, deleted);
        for (const q of outcome.quarantined) {
          metrics.corrupt(q.reason);
          log.warn('corrupt object quarantined; the partition carries on without it', {
            partition: prefix,
            key: q.key,
            reason: q.reason,
            quarantine_key: q.quarantineKey,
            detail: q.detail,
            generation: outcome.generation,
          });
        }
        if (outcome.auditError !== undefined)
          log.error('quarantine audit record not written', { partition: prefix, error: outcome.auditError });
        return;
      case 'lost_race':
        into.outcomes.push(outcome);
        metrics.record(SLUICE_COMPACTION_RESULT_VALUE_LOST_RACE, seconds, 0, deleted);
        log.info('another compactor committed the partition first; output left as an orphan', {
          partition: prefix,
          output: outcome.output,
        });
        return;
    }
  }

  async function sweep(): Promise<SweepReport> {
    const started = performance.now();
    const acc: Accumulator = {
      partitions: 0,
      unsealed: 0,
      noop: 0,
      outcomes: [],
      deleted: [],
      stranded: [],
      quarantined: [],
    };
    let current: string | null = null;
    const runner = newRunner();
    const onAbort = (): void => void runner.close();
    abort.signal.addEventListener('abort', onAbort, { once: true });
    try {
      // Keys arrive in order, so a partition's keys are contiguous: compact each when the listing moves past it.
      for await (const e of store.list({ prefix: 'data/', signal: abort.signal })) {
        if (e.kind !== 'object') continue;
        const prefix = partitionPrefixOf(e.key);
        if (prefix === null || prefix === current) continue;
        if (current !== null) await compactOne(runner, current, acc);
        current = prefix;
        acc.partitions++;
      }
      if (current !== null) await compactOne(runner, current, acc);
    } finally {
      abort.signal.removeEventListener('abort', onAbort);
      await runner.close();
    }
    return { ...acc, durationMs: performance.now() - started };
  }

  function enqueue(): Promise<SweepReport> {
    const run = chain.then(() => sweep());
    chain = run.catch(() => undefined);
    return run;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      enqueue()
        .then(
          (r) => {
            if (r.outcomes.length > 0 || r.deleted.length > 0) {
              log.info('compaction sweep done', {
                partitions: r.partitions,
                outcomes: r.outcomes.length,
                deleted: r.deleted.length,
                quarantined: r.quarantined.length,
                ms: Math.round(r.durationMs),
              });
            }
          },
          (e: unknown) => {
            if (!stopped) log.error('compaction sweep failed; retrying next interval', { error: e });
          },
        )
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  }
  schedule();

  return {
    sweepOnce() {
      if (stopped) return Promise.reject(new Error('compactor stopped'));
      return enqueue();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      abort.abort();
      await chain;
      if (ownStore && 'close' in store && typeof store.close === 'function') (store as { close(): void }).close();
    },
  };
}

interface Accumulator {
  partitions: number;
  unsealed: number;
  noop: number;
  outcomes: (Exclude<PartitionOutcome, { status: 'noop' }> | PartitionFailure)[];
  deleted: string[];
  stranded: string[];
  quarantined: QuarantinedObject[];
}
