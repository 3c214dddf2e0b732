/**
 * @module tail-poll
 * One poll of a live tail (docs/design/query-governance.md, "Live tail"): list the live files of the tail's
 * partitions, and send as NDJSON lines the matching records of every file the tail has not read yet, in key order
 * (partition, then UUIDv7 = creation order). The caller keeps the set of files already read between polls and
 * passes it in; the outcome's trailer names the files this poll read, so a record is sent once.
 *
 * A compaction output (its footer's provenance `sluice.compaction` lists what it `replaces`) is where the rows of
 * files the tail may already have sent reappear. When the tail has read none of its inputs, its rows are new and
 * are sent. When it has read some, the output is not sent; each input it has not read is read by its own key
 * instead (the compactor keeps replaced files for `compaction.grace_secs`), and an input already deleted is
 * reported `missed`: its rows are not sent, never sent twice.
 *
 * Everything held is reserved on the poll's reservation first, as for a query (scan.ts, line-stream.ts).
 */
import type { CeilingEnforcement, QueryReservation, ResultBudget } from '@sluice/limits';
import type { Predicate, TimeWindow } from '@sluice/query';
import type { ObjectStore } from '@sluice/storage';
import { LOG_COLUMNS, StorageCorruptError, provenanceOf } from '@sluice/storage';
import { AttrReader } from './attr-value.js';
import type { CorruptObject, CorruptObjectPolicy, CorruptObjects } from './corrupt-objects.js';
import { createCorruptObjects } from './corrupt-objects.js';
import type { QueryFailure } from './failures.js';
import { checkAborted, failureOf } from './failures.js';
import { LineStream, type LineSink } from './line-stream.js';
import { listLiveFiles } from './listing.js';
import { compilePredicate } from './predicate-eval.js';
import { RECORD_COLUMNS, renderLogRow } from './records.js';
import { jsonString } from './render-json.js';
import { renderThroughBudget } from './result-body.js';
import type { OpenedFile } from './scan.js';
import { DATA_FILE_COLUMNS, openReserved, readReserved } from './scan.js';
import { MemoryTracker, type HeapReclaimer } from './tracker.js';

/** Compaction outputs nested inside each other that one poll follows before it gives up on a file. */
const MAX_PROVENANCE_DEPTH = 8;

/** Input of {@link pollTail}. */
export interface TailPollOptions {
  readonly store: ObjectStore;
  readonly tenant: string;
  readonly predicate: Predicate;
  /** `project` keys of the tail's statement; absent = the whole record. */
  readonly projectKeys?: ReadonlySet<string>;
  /** The partitions to list: every hour partition overlapping it. */
  readonly partitions: TimeWindow;
  /** Keys of the files the tail has read (sent or deliberately passed over) in earlier polls. */
  readonly read: readonly string[];
  /** Records with an effective time below this are not sent (the look-back of the first poll); `null` = all. */
  readonly emitFromNs: bigint | null;
  readonly limits: {
    readonly maxListedObjects: number;
    readonly maxFiles: number;
    readonly maxResultBytes: number;
    readonly enforcement?: CeilingEnforcement;
  };
  readonly reservation: QueryReservation;
  readonly sink: LineSink;
  readonly batchBytes?: number;
  readonly signal?: AbortSignal;
  readonly onCorruptObject?: CorruptObjectPolicy;
  readonly reclaim?: HeapReclaimer;
}

/**
 * Outcome of a poll. On `ok`, `body` is the trailer `{"rows":n,"read":[key…],"missed":[key…]}` (still reserved
 * through the reservation until the caller releases it): `read` are the keys this poll read, to add to the tail's
 * set; `missed` the replaced inputs that were gone before the tail read them.
 */
export type TailPollOutcome =
  | {
      readonly status: 'ok';
      readonly body: Buffer;
      /** Holds the trailer's reservation; the caller releases the poll's reservation once it has been used. */
      readonly budget: ResultBudget;
      readonly rows: number;
      readonly streamedBytes: number;
      readonly corrupt: readonly CorruptObject[];
    }
  | { readonly status: 'error'; readonly error: QueryFailure; readonly corrupt: readonly CorruptObject[] };

/** Runs one poll. Never throws: every failure is a typed outcome, with the reservation given back. */
export async function pollTail(options: TailPollOptions): Promise<TailPollOutcome> {
  const tracker = new MemoryTracker(options.reservation, options.reclaim);
  const corrupt = createCorruptObjects(options.onCorruptObject);
  try {
    return await runPoll(options, tracker, corrupt);
  } catch (e) {
    tracker.releaseAll();
    return { status: 'error', error: failureOf(e, options.signal), corrupt: corrupt.met };
  }
}

async function runPoll(
  options: TailPollOptions,
  tracker: MemoryTracker,
  corrupt: CorruptObjects,
): Promise<TailPollOutcome> {
  const { store, tenant, signal, limits } = options;
  checkAborted(signal);
  const predicate = compilePredicate(options.predicate);
  const stream = new LineStream({
    sink: options.sink,
    tracker,
    maxResultBytes: limits.maxResultBytes,
    enforcement: limits.enforcement ?? 'enforce',
    ...(options.batchBytes !== undefined ? { batchBytes: options.batchBytes } : {}),
  });
  const read = new Set(options.read);
  const added: string[] = [];
  const missed: string[] = [];
  let rows = 0;
  const markRead = (key: string): void => {
    if (read.has(key)) return;
    read.add(key);
    added.push(key);
  };

  /** Sends the matching records of an opened file. */
  const sendRows = async (opened: OpenedFile): Promise<void> => {
    const file = opened.handle;
    const hasEffective = file.columnNames.includes(LOG_COLUMNS.effectiveTimeUnixNano);
    const timeColumn = hasEffective ? LOG_COLUMNS.effectiveTimeUnixNano : LOG_COLUMNS.timeUnixNano;
    const want = new Set<string>(predicate.columns);
    want.add(timeColumn).add(LOG_COLUMNS.tenantId);
    for (const g of file.rowGroups) {
      checkAborted(signal);
      const first = await readReserved(opened, g.index, want, tracker);
      let second: { reserved: number } | undefined;
      const matchBytes = tracker.grow(g.numRows * 4);
      try {
        const cols = first.cols;
        const t = cols[LOG_COLUMNS.tenantId] ?? [];
        for (let i = 0; i < t.length; i++)
          if (t[i] !== tenant) throw new StorageCorruptError(opened.key, 'tenant_mismatch');
        const eff = cols[timeColumn] ?? [];
        const test = predicate.bind(cols, new AttrReader());
        const matched = new Int32Array(g.numRows);
        let m = 0;
        for (let i = 0; i < g.numRows; i++) {
          if (options.emitFromNs !== null) {
            const e = eff[i];
            if (typeof e !== 'bigint' || BigInt.asUintN(64, e) < options.emitFromNs) continue;
          }
          if (test(i)) matched[m++] = i;
        }
        if (m === 0) continue;
        const rest = await readReserved(
          opened,
          g.index,
          RECORD_COLUMNS.filter((c) => !want.has(c)),
          tracker,
        );
        second = rest;
        const all = { ...cols, ...rest.cols };
        for (let k = 0; k < m; k++) {
          const wait = stream.push(renderLogRow(all, matched[k] as number, options.projectKeys));
          rows++;
          if (wait) await wait;
        }
      } finally {
        tracker.shrink(matchBytes);
        if (second) tracker.shrink(second.reserved);
        tracker.shrink(first.reserved);
      }
    }
  };

  /**
   * Reads one file the tail has not read: a plain file's rows are sent; a compaction output's only when none of
   * its inputs was read, else its unread inputs are visited by their own keys. `size` `null`: not listed (a
   * replaced input), so it is looked up first and may be gone.
   */
  const visit = async (key: string, size: number | null, depth: number): Promise<void> => {
    if (read.has(key)) return;
    checkAborted(signal);
    let bytes = size;
    if (bytes === null) {
      const head = await store.head(key, signal !== undefined ? { signal } : undefined);
      if (head === null) {
        missed.push(key);
        markRead(key);
        return;
      }
      bytes = head.size;
    }
    let opened: OpenedFile;
    try {
      opened = await openReserved(store, key, bytes, tracker, DATA_FILE_COLUMNS, signal);
    } catch (e) {
      if (corrupt.absorb(e)) return markRead(key); // skip: left out, and not retried every poll
      throw e;
    }
    let inputs: string[] = [];
    try {
      const provenance = provenanceOf(opened.handle);
      const prefix = key.slice(0, key.lastIndexOf('/') + 1);
      inputs = provenance === null ? [] : provenance.replaces.map((name) => `${prefix}${name}`);
      const seenInput = inputs.some((k) => read.has(k));
      if (!seenInput || depth >= MAX_PROVENANCE_DEPTH) {
        // New rows (or a chain too deep to follow: sent whole rather than lost).
        try {
          await sendRows(opened);
        } catch (e) {
          if (!corrupt.absorb(e)) throw e;
        }
        markRead(key);
        for (const k of inputs) markRead(k);
        return;
      }
      markRead(key);
    } finally {
      tracker.shrink(opened.reserved);
    }
    // The output repeats rows already sent: read only the inputs the tail has not, each by its own key.
    for (const k of inputs) await visit(k, null, depth + 1);
  };

  const { files } = await listLiveFiles(store, tenant, options.partitions, limits, signal, corrupt);
  for (const f of files) await visit(f.key, f.size, 0);
  await stream.end();
  checkAborted(signal);
  const trailer = `{"rows":${rows},"read":[${added.map(jsonString).join(',')}],"missed":[${missed.map(jsonString).join(',')}]}`;
  const budget = renderThroughBudget(options.reservation, Number.MAX_SAFE_INTEGER, (append) => append(trailer));
  tracker.releaseAll();
  return {
    status: 'ok' as const,
    body: budget.body(),
    budget,
    rows,
    streamedBytes: stream.bytes,
    corrupt: corrupt.met,
  };
}
