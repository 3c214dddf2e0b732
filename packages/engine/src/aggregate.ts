/**
 * @module aggregate
 * `count [by …]` and `sum|min|max|avg(path) [by …]` (ourios-surface §2.3): a hash table keyed by the group terms
 * (path values in string form, `param(n)` slots, epoch-aligned `bucket(w)` starts as RFC 3339 UTC). Every new
 * entry is reserved before insertion. Rows with a NULL key are excluded and counted in `rows_excluded`.
 */
import type { AggregateStage, CountStage, GroupTerm, Path } from '@sluice/query';
import { formatTimestamp } from '@sluice/query';
import { toHex } from '@sluice/core';
import { LOG_COLUMNS } from '@sluice/storage';
import type { AttrReader } from './attr-value.js';
import { attrKeyString, attrNumber } from './attr-value.js';
import { isPromotedService, pathColumn } from './fields.js';
import type { Columns } from './predicate-eval.js';
import type { MemoryTracker } from './tracker.js';
import { compareKeys } from '@sluice/storage';

/** One group. */
export interface Group {
  readonly key: readonly string[];
  count: number;
  sum: number;
  min: number;
  max: number;
  /** Non-NULL numeric inputs. */
  n: number;
}

/** The columns an aggregation reads. */
export function aggregationColumns(stage: CountStage | AggregateStage): Set<string> {
  const out = new Set<string>();
  for (const t of stage.by) {
    if (t.kind === 'path') out.add(pathColumn(t.path));
    else if (t.kind === 'param') out.add(LOG_COLUMNS.params);
    else out.add(LOG_COLUMNS.effectiveTimeUnixNano).add(LOG_COLUMNS.timeUnixNano);
  }
  if (stage.kind === 'aggregate') out.add(pathColumn(stage.path));
  return out;
}

type KeyGetter = (i: number) => string | null;

function pathKeyGetter(p: Path, cols: Columns, attrs: AttrReader): KeyGetter {
  const c = cols[pathColumn(p)] ?? [];
  if (p.kind === 'attr' && !isPromotedService(p)) {
    const key = p.key;
    return (i) => attrKeyString(attrs.lookup(c, i, key));
  }
  // Group keys repeat (template ids, numbers): render each distinct bigint once per row group, not once per row.
  const rendered = new Map<bigint, string>();
  return (i) => {
    const v = c[i];
    if (v === null || v === undefined) return null;
    if (typeof v === 'bigint') {
      let text = rendered.get(v);
      if (text === undefined) {
        text = BigInt.asUintN(64, v).toString();
        rendered.set(v, text);
      }
      return text;
    }
    if (v instanceof Uint8Array) return v.length === 0 ? null : toHex(v);
    if (typeof v === 'string') return v;
    return String(v);
  };
}

function termGetter(t: GroupTerm, cols: Columns, attrs: AttrReader): KeyGetter {
  if (t.kind === 'path') return pathKeyGetter(t.path, cols, attrs);
  if (t.kind === 'param') {
    const c = cols[LOG_COLUMNS.params] ?? [];
    const n = t.index;
    return (i) => {
      const list = c[i];
      if (!Array.isArray(list)) return null;
      const slot: unknown = list[n];
      if (typeof slot !== 'object' || slot === null) return null;
      const v = (slot as { value?: unknown }).value;
      return typeof v === 'string' ? v : null;
    };
  }
  const eff = cols[LOG_COLUMNS.effectiveTimeUnixNano] ?? [];
  const time = cols[LOG_COLUMNS.timeUnixNano] ?? [];
  const w = t.widthNs;
  let lastStart = -1n;
  let lastText = '';
  return (i) => {
    const raw = eff[i] ?? time[i];
    if (typeof raw !== 'bigint') return null;
    const ns = BigInt.asUintN(64, raw);
    const start = (ns / w) * w;
    if (start !== lastStart) {
      lastStart = start;
      lastText = formatTimestamp(start);
    }
    return lastText;
  };
}

/** Bytes reserved per group entry: the key strings (twice: parts and the map key) plus fixed overhead. */
export function groupEntryBytes(parts: readonly string[]): number {
  let n = 160;
  for (const p of parts) n += 4 * p.length + 48;
  return n;
}

/** Hash aggregation over bound row groups. */
export class Aggregator {
  readonly #stage: CountStage | AggregateStage;
  readonly #tracker: MemoryTracker;
  readonly #groups = new Map<string, Group>();
  /** Rows dropped for a NULL group key. */
  excluded = 0;

  constructor(stage: CountStage | AggregateStage, tracker: MemoryTracker) {
    this.#stage = stage;
    this.#tracker = tracker;
  }

  /** Binds to one row group; the returned function adds a matched row. */
  bind(cols: Columns, attrs: AttrReader): (i: number) => void {
    const getters = this.#stage.by.map((t) => termGetter(t, cols, attrs));
    const stage = this.#stage;
    let value: ((i: number) => number | null) | undefined;
    if (stage.kind === 'aggregate') {
      const c = cols[pathColumn(stage.path)] ?? [];
      const p = stage.path;
      if (p.kind === 'attr' && !isPromotedService(p)) value = (i) => attrNumber(attrs.lookup(c, i, p.key));
      else value = (i) => {
        const v = c[i];
        return typeof v === 'string' ? attrNumber({ t: 's', v }) : typeof v === 'number' && Number.isFinite(v) ? v : null;
      };
    }
    const single = getters.length === 1 ? getters[0] : undefined;
    return (i) => {
      let mapKey: string;
      let parts: string[] | undefined;
      if (single !== undefined) {
        const k = single(i);
        if (k === null) {
          this.excluded++;
          return;
        }
        mapKey = k;
      } else {
        parts = [];
        for (const g of getters) {
          const k = g(i);
          if (k === null) {
            this.excluded++;
            return;
          }
          parts.push(k);
        }
        mapKey = parts.join('\u0000');
      }
      let g = this.#groups.get(mapKey);
      if (g === undefined) {
        const key = parts ?? [mapKey];
        this.#tracker.grow(groupEntryBytes(key)); // reserve before insertion
        g = { key, count: 0, sum: 0, min: Infinity, max: -Infinity, n: 0 };
        this.#groups.set(mapKey, g);
      }
      g.count++;
      if (value !== undefined) {
        const x = value(i);
        if (x !== null) {
          g.n++;
          g.sum += x;
          if (x < g.min) g.min = x;
          if (x > g.max) g.max = x;
        }
      }
    };
  }

  /** The aggregate value of a group (`null` when no numeric input). */
  valueOf(g: Group): number | null {
    if (this.#stage.kind !== 'aggregate' || g.n === 0) return null;
    switch (this.#stage.fn) {
      case 'sum':
        return g.sum;
      case 'min':
        return g.min;
      case 'max':
        return g.max;
      case 'avg':
        return g.sum / g.n;
    }
  }

  /** Groups sorted by key (a bare aggregate over no rows still yields its one group). */
  groups(): Group[] {
    const out = [...this.#groups.values()];
    if (this.#stage.by.length === 0 && out.length === 0) {
      out.push({ key: [], count: 0, sum: 0, min: Infinity, max: -Infinity, n: 0 });
    }
    out.sort((a, b) => {
      for (let k = 0; k < Math.max(a.key.length, b.key.length); k++) {
        const c = compareKeys(a.key[k] ?? '', b.key[k] ?? '');
        if (c !== 0) return c;
      }
      return 0;
    });
    return out;
  }

  /** Bytes reserved for the table (for releasing after rendering). */
  get reservedBytes(): number {
    let n = 0;
    for (const g of this.#groups.values()) n += groupEntryBytes(g.key);
    return n;
  }
}
