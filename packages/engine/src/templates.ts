/**
 * @module templates
 * MCP `list_templates` (packages/engine/README.md): the tenant's template registry folded from its audit events
 * (`template_created`, `template_widened`, `template_type_expanded`) in `(timestamp, file key, row index)` order,
 * rendered as `{"templates":[{template_id, version, rendered_template}]}` sorted by (id, version). Decoded audit
 * columns and every registry entry are reserved; the body goes through the result budget.
 */
import type { ObjectStore } from '@sluice/storage';
import { StorageCorruptError } from '@sluice/storage';
import type { CeilingEnforcement, QueryReservation } from '@sluice/limits';
import { ALL_TIME, listAuditFiles } from './audit-files.js';
import type { ExecuteOutcome } from './outcome.js';
import { renderThroughBudget } from './result-body.js';
import type { CorruptObjectPolicy } from './corrupt-objects.js';
import { createCorruptObjects } from './corrupt-objects.js';
import { checkAborted, failureOf } from './failures.js';
import { emptyStats, jsonString, jsonU64, renderSkipped } from './render-json.js';
import type { OpenedFile } from './scan.js';
import { AUDIT_FILE_COLUMNS, openReserved, readReserved } from './scan.js';
import { MemoryTracker, type HeapReclaimer } from './tracker.js';

const REGISTRY_EVENTS = new Set(['template_created', 'template_widened', 'template_type_expanded']);
const COLUMNS = ['tenant_id', 'timestamp', 'event_type', 'template_id', 'new_version', 'new_template'];

/** Input of {@link listTemplates}. */
export interface ListTemplatesOptions {
  readonly store: ObjectStore;
  readonly tenant: string;
  readonly reservation: QueryReservation;
  readonly limits: {
    readonly maxListedObjects: number;
    readonly maxResultBytes: number;
    readonly enforcement?: CeilingEnforcement;
  };
  readonly signal?: AbortSignal;
  /** `querier.on_corrupt_object` (default `fail`). */
  readonly onCorruptObject?: CorruptObjectPolicy;
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
  const corrupt = createCorruptObjects(o.onCorruptObject);
  try {
    const files = await listAuditFiles(o.store, o.tenant, ALL_TIME, o.limits.maxListedObjects, o.signal);
    const stats = emptyStats();
    const events: RegistryEvent[] = [];
    for (const [fi, f] of files.entries()) {
      checkAborted(o.signal);
      let opened: OpenedFile;
      try {
        opened = await openReserved(o.store, f.key, f.size, tracker, AUDIT_FILE_COLUMNS, o.signal);
      } catch (e) {
        if (corrupt.absorb(e)) continue;
        throw e;
      }
      try {
        for (const g of opened.handle.rowGroups) {
          stats.row_groups_scanned++;
          const { cols, reserved } = await readReserved(opened, g.index, COLUMNS, tracker);
          try {
            const [tn, ts, et, id, nv, nt] = COLUMNS.map((c) => cols[c] ?? []);
            // The whole group is checked before any of it counts: a foreign file contributes nothing.
            for (let i = 0; i < g.numRows; i++)
              if (tn?.[i] !== o.tenant) throw new StorageCorruptError(f.key, 'tenant_mismatch');
            for (let i = 0; i < g.numRows; i++) {
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
      } catch (e) {
        if (!corrupt.absorb(e)) throw e;
      } finally {
        stats.bytes_read += opened.handle.bytesRead;
        tracker.shrink(opened.reserved);
      }
    }
    events.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.file - b.file || a.row - b.row));
    const registry = new Map<string, RegistryEvent>();
    for (const e of events) registry.set(`${e.id}/${e.version}`, e);
    const entries = [...registry.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.version - b.version));
    const budget = renderThroughBudget(
      o.reservation,
      o.limits.maxResultBytes,
      (append) => {
        append('{"templates":[');
        entries.forEach((e, i) => {
          append(
            `${i === 0 ? '' : ','}{"template_id":${jsonU64(e.id)},"version":${e.version},"rendered_template":${jsonString(e.template)}}`,
          );
        });
        // Only a registry that left files out has stats: otherwise the body is what it always was.
        append(corrupt.met.length === 0 ? ']}' : `],"stats":{${renderSkipped(corrupt.met).slice(1)}}}`);
      },
      o.limits.enforcement,
    );
    tracker.releaseAll();
    const crossed = budget.crossed === undefined ? [] : [budget.crossed];
    return { status: 'ok', body: budget.body(), budget, rows: entries.length, stats, corrupt: corrupt.met, crossed };
  } catch (e) {
    tracker.releaseAll();
    return { status: 'error', error: failureOf(e, o.signal), corrupt: corrupt.met };
  }
}
