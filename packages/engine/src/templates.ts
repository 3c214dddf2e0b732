/**
 * @module templates
 * MCP `list_templates` (packages/engine/README.md): the tenant's template registry folded from its audit events
 * (`template_created`, `template_widened`, `template_type_expanded`) in `(timestamp, file key, row index)` order,
 * rendered as `{"templates":[{template_id, version, rendered_template}]}` sorted by (id, version). Decoded audit
 * columns and every registry entry are reserved; the body goes through the result budget.
 */
import type { ObjectStore } from '@sluice/storage';
import type { QueryReservation } from '@sluice/limits';
import { ALL_TIME, listAuditFiles } from './audit-files.js';
import type { ExecuteOutcome } from './execute.js';
import { renderThroughBudget } from './result-body.js';
import { QueryAbort, checkAborted, failureOf } from './failures.js';
import { emptyStats, jsonString, jsonU64 } from './render-json.js';
import { openReserved, readReserved } from './scan.js';
import { MemoryTracker, type HeapReclaimer } from './tracker.js';

const REGISTRY_EVENTS = new Set(['template_created', 'template_widened', 'template_type_expanded']);
const COLUMNS = ['tenant_id', 'timestamp', 'event_type', 'template_id', 'new_version', 'new_template'];

/** Input of {@link listTemplates}. */
export interface ListTemplatesOptions {
  readonly store: ObjectStore;
  readonly tenant: string;
  readonly reservation: QueryReservation;
  readonly limits: { readonly maxListedObjects: number; readonly maxResultBytes: number };
  readonly signal?: AbortSignal;
  /** Runs before each decode with the query's held bytes (see {@link HeapReclaimer}). */
  readonly reclaim?: HeapReclaimer;
}

interface RegistryEvent {
  readonly ts: bigint;
  readonly file: number;
  readonly row: number;
  readonly id: bigint;
  readonly version: number;
  readonly template: string;
}

/** Lists the tenant's templates. Never throws; on error nothing stays reserved. */
export async function listTemplates(o: ListTemplatesOptions): Promise<ExecuteOutcome> {
  const tracker = new MemoryTracker(o.reservation, o.reclaim);
  try {
    const files = await listAuditFiles(o.store, o.tenant, ALL_TIME, o.limits.maxListedObjects, o.signal);
    const stats = emptyStats();
    const events: RegistryEvent[] = [];
    for (const [fi, f] of files.entries()) {
      checkAborted(o.signal);
      const opened = await openReserved(o.store, f.key, f.size, tracker);
      try {
        for (const g of opened.handle.rowGroups) {
          stats.row_groups_scanned++;
          const { cols, reserved } = await readReserved(opened.handle, g.index, COLUMNS, tracker);
          try {
            const [tn, ts, et, id, nv, nt] = COLUMNS.map((c) => cols[c] ?? []);
            for (let i = 0; i < g.numRows; i++) {
              if (tn?.[i] !== o.tenant) throw new QueryAbort({ kind: 'internal', message: 'failed to read storage' });
              if (!REGISTRY_EVENTS.has(String(et?.[i]))) continue;
              const t = ts?.[i];
              const rawId = id?.[i];
              const text = nt?.[i];
              if (typeof t !== 'bigint' || typeof rawId !== 'bigint' || typeof text !== 'string') continue;
              tracker.grow(text.length * 2 + 128);
              events.push({
                ts: BigInt.asUintN(64, t),
                file: fi,
                row: i,
                id: BigInt.asUintN(64, rawId),
                version: Number(nv?.[i] ?? 0),
                template: text,
              });
            }
          } finally {
            tracker.shrink(reserved);
          }
        }
      } finally {
        stats.bytes_read += opened.handle.bytesRead;
        tracker.shrink(opened.reserved);
      }
    }
    events.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.file - b.file || a.row - b.row));
    const registry = new Map<string, RegistryEvent>();
    for (const e of events) registry.set(`${e.id}/${e.version}`, e);
    const entries = [...registry.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.version - b.version));
    const budget = renderThroughBudget(o.reservation, o.limits.maxResultBytes, (append) => {
      append('{"templates":[');
      entries.forEach((e, i) => {
        append(
          `${i === 0 ? '' : ','}{"template_id":${jsonU64(e.id)},"version":${e.version},"rendered_template":${jsonString(e.template)}}`,
        );
      });
      append(']}');
    });
    tracker.releaseAll();
    return { status: 'ok', body: budget.body(), budget, rows: entries.length, stats };
  } catch (e) {
    tracker.releaseAll();
    return { status: 'error', error: failureOf(e, o.signal) };
  }
}
