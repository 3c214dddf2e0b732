/**
 * @module sorted-merge
 * Bounded-memory external merge sort of a partition's live files into one {@link LogsParquetWriter}.
 *
 * The merge is sized by bytes, not rows: {@link planMerge} estimates the widest row's decoded size from the footers
 * and derives `batchRows` = `memory_budget_bytes` / (3 × row bytes), clamped to [64, output row-group rows].
 *
 * - Small partitions (total rows ≤ `batchRows`): every row is decoded, sorted stably and written as one row group.
 * - Otherwise, two phases. (1) Runs: each input row group is decoded in slices of `batchRows` rows (pages before a
 *   slice are skipped undecoded); each slice is sorted stably and spilled to a scratch directory as a
 *   {@link writeSortRun} file of zstd frames of `batchRows / runs` rows (clamped to [16, 4096]). (2) Merge: one
 *   cursor per run holds one decoded frame; a min-heap on (sort key, run ordinal) emits rows into a `batchRows` buffer that is
 *   written as one output row group each time it fills. Runs are numbered by (input file, row group, slice), so
 *   the run ordinal is the input-file-then-row-ordinal tie-break of {@link compareSortKeys}.
 *
 * Memory bound: one slice (phase 1) or the cursors plus the output buffer (phase 2), each ≤ `batchRows` rows, so
 * ~`memory_budget_bytes` of decoded data whatever the row width — except that the 16-row floor per run can exceed
 * it for partitions with thousands of runs. Separately the writer keeps the compressed output file in memory until
 * the single PUT. No input file is ever read whole: only footers and one row group's column chunks (range reads).
 * Wide rows cost more reads: each slice fetches its group's column chunks again.
 *
 * A slice that does not decode (or, with `tenant`, holds another tenant's row) fails the merge with a
 * {@link MergeInputError} naming the input, row group and slice, so the caller can quarantine that file; a storage
 * fault propagates as thrown.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { LOG_COLUMN_NAMES, decodeLogRows } from '@sluice/storage';
import type { LogsParquetWriter, ParquetFileHandle, StoredLogRow } from '@sluice/storage';
import { detailOf, isStorageFault, tenantProblem } from './corrupt-input.js';
import type { CorruptFinding, FaultSite } from './corrupt-input.js';
import { openSortRun, writeSortRun } from './sort-run.js';
import type { SortRunReader } from './sort-run.js';
import { MinHeap } from './min-heap.js';
import { compareSortKeys, sortKeyOf, sortRowsStable } from './row-order.js';
import type { RowSortKey } from './row-order.js';

/** Decoded rows held across all merge cursors (phase 2), before the per-run floor, when rows are small. */
export const RUN_BUDGET_ROWS = 65_536;
/** Fewest rows per decoded slice, cursor group or output group, however large rows are. */
const MIN_SLICE_ROWS = 64;
/**
 * Live copies of a row the merge may hold at once per budgeted row: the decoded columns, the row objects built
 * from them, and the writer's column arrays while a run or output group is encoded.
 */
const COPIES_PER_ROW = 3;

/** Options of {@link mergeSortedInto}. */
export interface SortedMergeOptions {
  /** Directory for the spilled runs (a fresh subdirectory is created and removed). */
  readonly scratchDir: string;
  /**
   * Decoded bytes the merge may hold (`compaction.memory_budget_bytes`). Rows are sized from the footers with the
   * same per-column estimator the querier reserves with; slices, cursor groups and output groups are cut to fit.
   */
  readonly memoryBudgetBytes: number;
  /** When set, every row must carry this tenant; a row of another is a {@link MergeInputError} (`tenant_mismatch`). */
  readonly tenant?: string;
  readonly signal?: AbortSignal;
}

/**
 * Input `input` (its index in the merge's inputs) could not be read as rows of ours: its bytes arrived but do not
 * decode, or a row carries another tenant. Storage faults are never turned into this error; they propagate as
 * thrown, so the caller can tell a corrupt input from an outage.
 */
export class MergeInputError extends Error {
  override readonly name = 'MergeInputError';
  constructor(
    readonly input: number,
    readonly reason: CorruptFinding['reason'],
    readonly detail: string,
    readonly site: FaultSite,
    options?: { readonly cause?: unknown },
  ) {
    super(`merge input ${input}: ${detail}`, options?.cause !== undefined ? { cause: options.cause } : undefined);
  }
}

/** How a merge is cut to its budget. */
export interface MergePlan {
  /** Estimated decoded bytes of the widest row among the inputs. */
  readonly rowBytes: number;
  /** Rows the budget allows per held batch: input slice, output group and (summed) cursor groups. */
  readonly batchRows: number;
  /** Whether every row fits in one in-memory sort (no spill). */
  readonly inMemory: boolean;
}

/** A run cursor: the decoded current frame of one spilled run. */
interface Cursor {
  readonly run: number;
  readonly reader: SortRunReader;
  rows: StoredLogRow[];
  pos: number;
  key: RowSortKey;
}

/** Decodes one slice of input `input`, attributing a failure that is not a storage fault to that input. */
async function readRows(
  inputs: readonly ParquetFileHandle[],
  input: number,
  group: number,
  tenant: string | undefined,
  rows?: { start: number; end: number },
): Promise<StoredLogRow[]> {
  const site: FaultSite = { kind: 'rows', group, ...(rows !== undefined ? { rows } : {}) };
  let decoded: StoredLogRow[];
  try {
    decoded = decodeLogRows(await inputs[input]!.readRowGroup(group, LOG_COLUMN_NAMES, rows));
  } catch (e) {
    if (isStorageFault(e)) throw e;
    throw new MergeInputError(input, 'parquet_unreadable', detailOf(e), site, { cause: e });
  }
  const problem = tenant === undefined ? null : tenantProblem(decoded, tenant);
  if (problem !== null) throw new MergeInputError(input, problem.reason, problem.detail, site);
  return decoded;
}

/** Sizes the merge: the widest row (footer estimate) decides how many rows one batch may hold. */
export function planMerge(
  inputs: readonly ParquetFileHandle[],
  maxGroupRows: number,
  memoryBudgetBytes: number,
): MergePlan {
  let rowBytes = 1;
  let totalRows = 0;
  for (const f of inputs) {
    for (const g of f.rowGroups) {
      totalRows += g.numRows;
      if (g.numRows > 0)
        rowBytes = Math.max(rowBytes, Math.ceil(f.estimateDecodedBytes(g.index, LOG_COLUMN_NAMES) / g.numRows));
    }
  }
  const batchRows = Math.max(
    MIN_SLICE_ROWS,
    Math.min(maxGroupRows, Math.floor(memoryBudgetBytes / (COPIES_PER_ROW * rowBytes))),
  );
  return { rowBytes, batchRows, inMemory: totalRows <= batchRows };
}

/**
 * Writes every row of `inputs` (in input order) into `writer`, sorted by {@link compareSortKeys} with ties kept in
 * input order. Returns the number of rows written.
 */
export async function mergeSortedInto(
  inputs: readonly ParquetFileHandle[],
  writer: LogsParquetWriter,
  options: SortedMergeOptions,
): Promise<number> {
  const plan = planMerge(inputs, writer.rowGroupRows, options.memoryBudgetBytes);
  if (plan.inMemory) {
    const all: StoredLogRow[] = [];
    for (const [i, f] of inputs.entries()) {
      for (const g of f.rowGroups) {
        options.signal?.throwIfAborted();
        for (const row of await readRows(inputs, i, g.index, options.tenant)) all.push(row);
      }
    }
    writer.writeRowGroup(sortRowsStable(all));
    return all.length;
  }

  const slices: { input: number; file: ParquetFileHandle; group: number; start: number; end: number }[] = [];
  for (const [i, f] of inputs.entries()) {
    for (const g of f.rowGroups) {
      for (let start = 0; start < g.numRows; start += plan.batchRows)
        slices.push({ input: i, file: f, group: g.index, start, end: Math.min(g.numRows, start + plan.batchRows) });
    }
  }
  const cursorRows = Math.min(RUN_BUDGET_ROWS, plan.batchRows);
  const frameRows = Math.max(16, Math.min(4096, Math.floor(cursorRows / Math.max(1, slices.length))));
  const scratch = await mkdtemp(join(options.scratchDir, 'sluice-compact-'));
  const readers: SortRunReader[] = [];
  try {
    // Phase 1: one sorted run per input slice (slices in input order, so run order is the input-order tie-break).
    const runs: { path: string; size: number }[] = [];
    for (const s of slices) {
      options.signal?.throwIfAborted();
      const whole = s.start === 0 && s.end === s.file.rowGroups[s.group]?.numRows;
      const sorted = sortRowsStable(
        await readRows(inputs, s.input, s.group, options.tenant, whole ? undefined : { start: s.start, end: s.end }),
      );
      const path = join(scratch, `run-${String(runs.length).padStart(6, '0')}.bin`);
      runs.push({ path, size: await writeSortRun(path, sorted, frameRows) });
    }
    // Phase 2: k-way merge, one decoded frame of `frameRows` rows per cursor.
    const heap = new MinHeap<Cursor>((a, b) => {
      const c = compareSortKeys(a.key, b.key);
      return c < 0 || (c === 0 && a.run < b.run);
    });
    for (const [run, r] of runs.entries()) {
      const reader = await openSortRun(r.path, r.size);
      readers.push(reader);
      const rows = (await reader.next()) ?? [];
      const first = rows[0];
      if (first !== undefined) heap.push({ run, reader, rows, pos: 0, key: sortKeyOf(first) });
    }
    let out: StoredLogRow[] = [];
    let written = 0;
    for (let c = heap.pop(); c !== undefined; c = heap.pop()) {
      out.push(c.rows[c.pos]!);
      if (out.length === plan.batchRows) {
        options.signal?.throwIfAborted();
        writer.writeRowGroup(out);
        written += out.length;
        out = [];
      }
      c.pos++;
      if (c.pos >= c.rows.length) {
        c.rows = (await c.reader.next()) ?? [];
        c.pos = 0;
      }
      const next = c.rows[c.pos];
      if (next !== undefined) {
        c.key = sortKeyOf(next);
        heap.push(c);
      }
    }
    if (out.length > 0) {
      writer.writeRowGroup(out);
      written += out.length;
    }
    return written;
  } finally {
    await Promise.allSettled(readers.map((r) => r.close()));
    await rm(scratch, { recursive: true, force: true });
  }
}
