/**
 * @module sorted-merge
 * Bounded-memory external merge sort of a partition's live files into one {@link LogsParquetWriter}.
 *
 * - Small partitions (total rows ≤ one output row group): every row group is decoded, the rows are sorted stably
 *   and written as one row group. Memory: ≤ `rowGroupRows` decoded rows.
 * - Otherwise, two phases. (1) Runs: each input row group in turn is decoded, sorted stably and spilled to a
 *   scratch directory as a run file with small row groups (`RUN_BUDGET_ROWS / runs` rows each, clamped to
 *   [64, 4096]). (2) Merge: one cursor per run holds one decoded run row group; a min-heap on (sort key, run
 *   ordinal) emits rows into a `rowGroupRows` buffer that is written as each output row group fills.
 *   Runs are numbered by (input file, row group), so the run ordinal is the input-file-then-row-ordinal
 *   tie-break of {@link compareSortKeys}.
 *
 * Memory bound: phase 1 holds one input row group (≤ 65,536 rows as the sink writes them); phase 2 holds at most
 * max(RUN_BUDGET_ROWS, 64 × runs) decoded cursor rows plus the `rowGroupRows` output buffer. Separately the writer
 * keeps the compressed output file in memory until the single PUT (≈ 66 B/row measured). No input file is ever
 * read whole: only footers and one row group's column chunks at a time (range reads).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  LOG_COLUMN_NAMES,
  createLocalObjectStore,
  decodeLogRows,
  encodeLogsParquet,
  openParquetFile,
  sourceFromStore,
} from '@sluice/storage';
import type { LogsParquetWriter, ParquetFileHandle, StoredLogRow } from '@sluice/storage';
import { MinHeap } from './min-heap.js';
import { compareSortKeys, sortKeyOf, sortRowsStable } from './row-order.js';
import type { RowSortKey } from './row-order.js';

/** Decoded rows held across all merge cursors (phase 2), before the per-run floor of 64 rows. */
export const RUN_BUDGET_ROWS = 65_536;

/** Options of {@link mergeSortedInto}. */
export interface SortedMergeOptions {
  /** Directory for the spilled runs (a fresh subdirectory is created and removed). */
  readonly scratchDir: string;
  readonly signal?: AbortSignal;
}

interface Cursor {
  readonly run: number;
  readonly file: ParquetFileHandle;
  group: number;
  rows: StoredLogRow[];
  pos: number;
  key: RowSortKey;
}

async function readRows(file: ParquetFileHandle, group: number): Promise<StoredLogRow[]> {
  return decodeLogRows(await file.readRowGroup(group, LOG_COLUMN_NAMES));
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
  const totalRows = inputs.reduce((n, f) => n + f.numRows, 0);
  if (totalRows <= writer.rowGroupRows) {
    const all: StoredLogRow[] = [];
    for (const f of inputs) {
      for (const g of f.rowGroups) {
        options.signal?.throwIfAborted();
        for (const row of await readRows(f, g.index)) all.push(row);
      }
    }
    writer.writeRowGroup(sortRowsStable(all));
    return all.length;
  }

  const runCount = inputs.reduce((n, f) => n + f.rowGroups.length, 0);
  const runGroupRows = Math.max(64, Math.min(4096, Math.floor(RUN_BUDGET_ROWS / runCount)));
  const scratch = await mkdtemp(join(options.scratchDir, 'sluice-compact-'));
  try {
    const runs = createLocalObjectStore({ root: scratch });
    // Phase 1: one sorted run per input row group.
    const runFiles: ParquetFileHandle[] = [];
    for (const f of inputs) {
      for (const g of f.rowGroups) {
        options.signal?.throwIfAborted();
        const sorted = sortRowsStable(await readRows(f, g.index));
        const bytes = await encodeLogsParquet(sorted, { rowGroupRows: runGroupRows });
        const key = `run-${String(runFiles.length).padStart(6, '0')}.parquet`;
        await runs.put(key, bytes);
        runFiles.push(await openParquetFile(sourceFromStore(runs, key, bytes.byteLength)));
      }
    }
    // Phase 2: k-way merge, one decoded run row group per cursor.
    const heap = new MinHeap<Cursor>((a, b) => {
      const c = compareSortKeys(a.key, b.key);
      return c < 0 || (c === 0 && a.run < b.run);
    });
    for (const [run, file] of runFiles.entries()) {
      if (file.rowGroups.length === 0) continue;
      const rows = await readRows(file, 0);
      const first = rows[0];
      if (first !== undefined) heap.push({ run, file, group: 0, rows, pos: 0, key: sortKeyOf(first) });
    }
    let out: StoredLogRow[] = [];
    let written = 0;
    for (let c = heap.pop(); c !== undefined; c = heap.pop()) {
      out.push(c.rows[c.pos]!);
      if (out.length === writer.rowGroupRows) {
        options.signal?.throwIfAborted();
        writer.writeRowGroup(out);
        written += out.length;
        out = [];
      }
      c.pos++;
      while (c.pos >= c.rows.length && c.group + 1 < c.file.rowGroups.length) {
        c.group++;
        c.rows = await readRows(c.file, c.group);
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
    await rm(scratch, { recursive: true, force: true });
  }
}
