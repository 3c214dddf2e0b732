/**
 * @module worker-heap-start
 * Starts query workers with V8's first old-generation limit at the garbage slack the querier already allows them
 * (docs/design/query-governance.md, "Idle collection"). A fresh worker's live heap is ~16 MiB, so V8 sets its
 * limit near 38 MiB; once the young generation has grown to match a query's allocation rate, the old generation's
 * headroom is smaller than the young generation and V8 starts incremental marking on every query. Measured on the
 * bench corpus: after ten `limit 10000` queries, 12 of 16 one-group queries each ran a full collection (rare-needle
 * median 42 ms); with the first limit at 64 MiB, 2 of 16 did (median 32–38 ms). The worker's own reclaimer still
 * collects at 64 MiB of garbage, so the worst case is unchanged. V8 keeps the value as the worker's floor for its
 * life, and caps it at half the worker's heap limit.
 *
 * V8 reads `--initial-old-space-size` when an isolate is created, and the flag is process-wide: it is set while a
 * query worker starts and reset to V8's default once every starting worker is online (or failed). A worker of
 * another role (the sink, the compactor) that happens to start in that window gets the same floor. Toggling a V8
 * flag also changes the hash Node checks its built-in code cache against, so the first worker started on the other
 * setting compiles Node's own modules again (about 30 ms, at worker start only).
 */
import { setFlagsFromString } from 'node:v8';

/** What the start needs from a worker: the events that say its isolate exists or never will. */
export interface StartingWorker {
  once(event: 'online' | 'error' | 'exit', listener: () => void): unknown;
}

/** Options of {@link createWorkerHeapStart}. */
export interface WorkerHeapStartOptions {
  /** V8's first old-generation limit for the workers, in MiB (0 = V8's default). */
  readonly initialOldSpaceMb: number;
  /** Sets a V8 flag (injected so the sequencing is testable). Default: `v8.setFlagsFromString`. */
  readonly setFlags?: (flags: string) => void;
}

/** Wraps worker creation: `start(create)` creates the worker under the raised first limit and returns it. */
export interface WorkerHeapStart {
  start<W extends StartingWorker>(create: () => W): W;
}

/** Creates the start policy. */
export function createWorkerHeapStart(options: WorkerHeapStartOptions): WorkerHeapStart {
  const setFlags = options.setFlags ?? setFlagsFromString;
  let starting = 0;
  const begin = (): void => {
    if (starting++ === 0) setFlags(`--initial-old-space-size=${options.initialOldSpaceMb}`);
  };
  const end = (): void => {
    if (--starting === 0) setFlags('--initial-old-space-size=0');
  };
  return {
    start(create) {
      begin();
      let worker: ReturnType<typeof create>;
      try {
        worker = create();
      } catch (e) {
        end();
        throw e;
      }
      let done = false;
      const settle = (): void => {
        if (done) return;
        done = true;
        end();
      };
      worker.once('online', settle);
      worker.once('error', settle);
      worker.once('exit', settle);
      return worker;
    },
  };
}
