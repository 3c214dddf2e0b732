/**
 * @module drift
 * `drift from … to …` (packages/engine/README.md): `template_widened` (and `template_type_expanded`) audit events with a
 * timestamp in `[from, to)`, grouped by template id — `widening_count`, `min_old_version`, `max_new_version`,
 * `first_seen_unix_nano`, `last_seen_unix_nano` — ordered by count desc, then id asc. Day partitions are pruned
 * first; decoded columns and group entries are reserved; the body goes through the result budget.
 */
import type { ObjectStore } from '@sluice/storage';
import { StorageCorruptError } from '@sluice/storage';
import type { TimeWindow } from '@sluice/query';
import type { CeilingEnforcement, QueryReservation } from '@sluice/limits';
import { listAuditFiles } from './audit-files.js';
import type { CorruptObjects } from './corrupt-objects.js';
import { checkAborted } from './failures.js';
import type { ExecuteOutcome } from './outcome.js';
import { renderThroughBudget } from './result-body.js';
import { emptyStats, jsonU64, renderStats } from './render-json.js';
import type { OpenedFile } from './scan.js';
import { AUDIT_FILE_COLUMNS, openReserved, readReserved } from './scan.js';
import type { MemoryTracker } from './tracker.js';

const WIDENING = new Set(['template_widened', 'template_type_expanded']);
const DRIFT_COLUMNS = ['tenant_id', 'timestamp', 'event_type', 'template_id', 'old_version', 'new_version'];
const ENTRY_BYTES = 256;

interface DriftRow {
  readonly id: bigint;
  count: number;
  minOld: number;
  maxNew: number;
  first: bigint;
  last: bigint;
}

/** Inputs of {@link runDrift}. */
export interface DriftOptions {
  readonly store: ObjectStore;
  readonly tenant: string;
  readonly window: TimeWindow;
  readonly reservation: QueryReservation;
  readonly tracker: MemoryTracker;
  readonly limits: {
    readonly maxListedObjects: number;
    readonly maxResultBytes: number;
    readonly enforcement?: CeilingEnforcement;
  };
  readonly signal?: AbortSignal;
  /** Where corrupt audit files are met: under `skip` such a file (or the rest of it) is left out. */
  readonly corrupt: CorruptObjects;
}

function bigStat(v: unknown): bigint | undefined {
  return typeof v === 'bigint' && v >= 0n ? v : undefined;
}

/** Runs a drift statement. Throws `QueryAbort` on limits and failures (the caller releases). */
export async function runDrift(o: DriftOptions): Promise<ExecuteOutcome> {
  const { store, tenant, window, tracker, signal, corrupt } = o;
  const stats = emptyStats();
  const files = await listAuditFiles(store, tenant, window, o.limits.maxListedObjects, signal);
  const byId = new Map<bigint, DriftRow>();
  for (const f of files) {
    checkAborted(signal);
    let opened: OpenedFile;
    try {
      opened = await openReserved(store, f.key, f.size, tracker, AUDIT_FILE_COLUMNS, signal);
    } catch (e) {
      if (corrupt.absorb(e)) continue;
      throw e;
    }
    const file = opened.handle;
    try {
      for (const g of file.rowGroups) {
        const ts = g.columns.find((c) => c.name === 'timestamp');
        const lo = bigStat(ts?.min);
        const hi = bigStat(ts?.max);
        if (lo !== undefined && hi !== undefined && (hi < window.fromNs || lo >= window.toNs)) {
          stats.row_groups_pruned++;
          continue;
        }
        stats.row_groups_scanned++;
        checkAborted(signal);
        const { cols, reserved } = await readReserved(opened, g.index, DRIFT_COLUMNS, tracker);
        try {
          const [tn, tsc, et, id, ov, nv] = DRIFT_COLUMNS.map((c) => cols[c] ?? []);
          // The whole group is checked before any of it counts: a foreign file contributes nothing.
          for (let i = 0; i < g.numRows; i++)
            if (tn?.[i] !== tenant) throw new StorageCorruptError(f.key, 'tenant_mismatch');
          for (let i = 0; i < g.numRows; i++) {
            const t = tsc?.[i];
            if (typeof t !== 'bigint' || !WIDENING.has(String(et?.[i]))) continue;
            const tu = BigInt.asUintN(64, t);
            if (tu < window.fromNs || tu >= window.toNs) continue;
            const rawId = id?.[i];
            if (typeof rawId !== 'bigint') continue;
            const tid = BigInt.asUintN(64, rawId);
            let r = byId.get(tid);
            if (r === undefined) {
              tracker.grow(ENTRY_BYTES);
              r = { id: tid, count: 0, minOld: Number.MAX_SAFE_INTEGER, maxNew: 0, first: tu, last: tu };
              byId.set(tid, r);
            }
            r.count++;
            r.minOld = Math.min(r.minOld, Number(ov?.[i] ?? 0));
            r.maxNew = Math.max(r.maxNew, Number(nv?.[i] ?? 0));
            if (tu < r.first) r.first = tu;
            if (tu > r.last) r.last = tu;
          }
        } finally {
          tracker.shrink(reserved);
        }
      }
    } catch (e) {
      if (!corrupt.absorb(e)) throw e;
    } finally {
      stats.bytes_read += file.bytesRead;
      tracker.shrink(opened.reserved);
    }
  }
  const rows = [...byId.values()].sort((a, b) => b.count - a.count || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const budget = renderThroughBudget(
    o.reservation,
    o.limits.maxResultBytes,
    (append) => {
      append('{"rows":[');
      rows.forEach((r, i) => {
        append(
          `${i === 0 ? '' : ','}{"template_id":${jsonU64(r.id)},"widening_count":${r.count},"min_old_version":${r.minOld},` +
            `"max_new_version":${r.maxNew},"first_seen_unix_nano":${jsonU64(r.first)},"last_seen_unix_nano":${jsonU64(r.last)}}`,
        );
      });
      append(`],"stats":${renderStats(stats, corrupt.met)}}`);
    },
    o.limits.enforcement,
  );
  tracker.releaseAll();
  const crossed = budget.crossed === undefined ? [] : [budget.crossed];
  return { status: 'ok', body: budget.body(), budget, rows: rows.length, stats, corrupt: corrupt.met, crossed };
}
