/**
 * @module aggregate
 * `count [by …]` and `sum|min|max|avg(path) [by …]` (packages/query/README.md): a hash table keyed by the group terms
 * (path values in string form, `param(n)` slots, epoch-aligned `bucket(w)` starts as RFC 3339 UTC). Every new
 * entry is reserved before insertion. Rows with a NULL key are excluded and counted in `rows_excluded`.
 */
import type { AggregateStage, CountStage, GroupTerm, Path } from '@sluice/query';
import { formatTimestamp } from '@sluice/query';
import { toHex } from '@sluice/core';
import { LOG_COLUMNS } from '@sluice/storage';
import type { AttrReader } from './attr-value.js';
import { attrKeyString, attrNumber } from './attr-value.js';
import { bodyBytesReader } from './body-bytes.js';
import { isPromotedService, pathColumn } from './fields.js';
import type { Columns } from './predicate-eval.js';
import type { MemoryTracker } from './tracker.js';
import { compareKeys } from '@sluice/storage';
import { DictStringVector, cellReader } from './decode/string-vector.js';
import { bucketIds, dictIds, keyIds, u64Ids, type TermIds } from './decode/term-ids.js';
import { DIRECT_TABLE_BYTES, DIRECT_VALUES, countDict, countU64 } from './decode/term-counts.js';

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

/**
 * The columns an aggregation reads. `bucket(w)` reads the effective time, falling back to `time_unix_nano` where it
 * is NULL; with `effectiveComplete` (the row group's effective time has no NULL, by its statistics) it reads the
 * effective time alone (docs/design/query-engine.md).
 */
export function aggregationColumns(stage: CountStage | AggregateStage, effectiveComplete = false): Set<string> {
  const out = new Set<string>();
  for (const t of stage.by) {
    if (t.kind === 'path') out.add(pathColumn(t.path));
    else if (t.kind === 'param') out.add(LOG_COLUMNS.params);
    else {
      out.add(LOG_COLUMNS.effectiveTimeUnixNano);
      if (!effectiveComplete) out.add(LOG_COLUMNS.timeUnixNano);
    }
  }
  if (stage.kind === 'aggregate') out.add(pathColumn(stage.path));
  return out;
}

type KeyGetter = (i: number) => string | null;

function pathKeyGetter(p: Path, cols: Columns, attrs: AttrReader): KeyGetter {
  const c = cols[pathColumn(p)] ?? [];
  const at = cellReader(c);
  if (p.kind === 'attr' && !isPromotedService(p)) {
    const key = p.key;
    return (i) => attrKeyString(attrs.lookup(c, i, key));
  }
  // Group keys repeat (template ids, numbers): render each distinct bigint once per row group, not once per row.
  const rendered = new Map<bigint, string>();
  return (i) => {
    const v = at(i);
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
    const c = cellReader(cols[LOG_COLUMNS.params]);
    const n = t.index;
    return (i) => {
      const list = c(i);
      if (!Array.isArray(list)) return null;
      const slot: unknown = list[n];
      if (typeof slot !== 'object' || slot === null) return null;
      const v = (slot as { value?: unknown }).value;
      return typeof v === 'string' ? v : null;
    };
  }
  const eff = cellReader(cols[LOG_COLUMNS.effectiveTimeUnixNano]);
  const time = cellReader(cols[LOG_COLUMNS.timeUnixNano]);
  const w = t.widthNs;
  // Rows are mostly time-ordered, so consecutive rows share a bucket: test the current bucket's bounds first
  // (two comparisons) and divide only when a row falls outside it.
  let lastStart = -1n;
  let lastEnd = -1n;
  let lastText = '';
  return (i) => {
    const raw = eff(i) ?? time(i);
    if (typeof raw !== 'bigint') return null;
    const ns = raw >= 0n ? raw : BigInt.asUintN(64, raw);
    if (ns >= lastStart && ns < lastEnd) return lastText;
    lastStart = (ns / w) * w;
    lastEnd = lastStart + w;
    lastText = formatTimestamp(lastStart);
    return lastText;
  };
}

/** Bytes reserved per group entry: the key strings (twice: parts and the map key) plus fixed overhead. */
export function groupEntryBytes(parts: readonly string[]): number {
  let n = 160;
  for (const p of parts) n += 4 * p.length + 48;
  return n;
}

/** One level of the multi-term group index. */
type NestedGroups = Map<string, NestedGroups | Group>;

/** Hash aggregation over bound row groups. */
export class Aggregator {
  readonly #stage: CountStage | AggregateStage;
  readonly #tracker: MemoryTracker;
  readonly #groups = new Map<string, Group>();
  /** Multi-term groups: one map level per `by` term, the last level holding the group. */
  readonly #nested: NestedGroups = new Map();
  /** Rows dropped for a NULL group key. */
  excluded = 0;
  /** The direct table of `count by` one u64 term, reserved for the query once allocated. */
  #direct: Int32Array | undefined;

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
      else if (p.kind === 'field' && p.name === 'body_bytes') value = bodyBytesReader(c);
      else {
        const at = cellReader(c);
        value = (i) => {
          const v = at(i);
          return typeof v === 'string'
            ? attrNumber({ t: 's', v })
            : typeof v === 'number' && Number.isFinite(v)
              ? v
              : null;
        };
      }
    }
    const single = getters.length === 1 ? getters[0] : undefined;
    // Several terms: walk one nested map per term with a reused key array, so a row allocates nothing unless it
    // starts a new group (a joined string key per row was most of the cost of `count by a, bucket(w)`).
    const parts = new Array<string>(getters.length);
    const last = getters.length - 1;
    return (i) => {
      let g: Group | undefined;
      if (single !== undefined) {
        const k = single(i);
        if (k === null) {
          this.excluded++;
          return;
        }
        g = this.#groups.get(k);
        if (g === undefined) {
          this.#tracker.grow(groupEntryBytes([k])); // reserve before insertion
          g = { key: [k], count: 0, sum: 0, min: Infinity, max: -Infinity, n: 0 };
          this.#groups.set(k, g);
        }
      } else {
        for (let t = 0; t <= last; t++) {
          const k = (getters[t] as KeyGetter)(i);
          if (k === null) {
            this.excluded++;
            return;
          }
          parts[t] = k;
        }
        g = this.#groupFor(parts);
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

  /**
   * Counts the selected rows of one row group (`sel` null: rows `0 … m − 1`) column at a time: each term becomes
   * per-row ids ({@link TermIds}), rows are counted per id combination, and a group's key is looked up once per
   * distinct combination. Returns false, having done nothing, where the per-row path must run instead (a value
   * aggregate, or more than two terms).
   */
  addBatch(cols: Columns, attrs: AttrReader, sel: Int32Array | null, m: number): boolean {
    const stage = this.#stage;
    if (stage.kind !== 'count' || stage.by.length > 2) return false;
    if (stage.by.length === 0) {
      if (m > 0) this.#groupFor([]).count += m;
      return true;
    }
    if (stage.by.length === 1 && this.#countOneTerm(stage.by[0] as GroupTerm, cols, sel, m)) return true;
    const terms = stage.by.map((t) => this.#termIds(t, cols, attrs, sel, m));
    const a = terms[0] as TermIds;
    const b = terms[1];
    const card = b === undefined ? 1 : b.cardinality;
    const domain = a.cardinality * card;
    const dense = domain <= 1 << 20 ? new Int32Array(domain) : undefined;
    const sparse = dense === undefined ? new Map<number, number>() : undefined;
    for (let k = 0; k < m; k++) {
      const x = a.ids[k] as number;
      const y = b === undefined ? 0 : (b.ids[k] as number);
      if (x < 0 || y < 0) {
        this.excluded++;
        continue;
      }
      const c = x * card + y;
      if (dense !== undefined) dense[c] = (dense[c] as number) + 1;
      else sparse?.set(c, (sparse.get(c) ?? 0) + 1);
    }
    const emit = (c: number, n: number): void => {
      if (n === 0) return;
      const x = Math.floor(c / card);
      const parts = b === undefined ? [a.text(x)] : [a.text(x), b.text(c - x * card)];
      this.#groupFor(parts).count += n;
    };
    if (dense !== undefined) for (let c = 0; c < dense.length; c++) emit(c, dense[c] as number);
    else for (const [c, n] of sparse ?? []) emit(c, n);
    return true;
  }

  /**
   * `count by t` for one u64 or dictionary term, counted from the column itself (decode/term-counts.ts); false
   * when the term is of another kind. The u64 direct table is reserved once, before it is first allocated, and
   * kept for the query; a dictionary's counters are reserved while they live.
   */
  #countOneTerm(t: GroupTerm, cols: Columns, sel: Int32Array | null, m: number): boolean {
    if (t.kind !== 'path' || !(t.path.kind === 'field' || isPromotedService(t.path))) return false;
    const c = cols[pathColumn(t.path)];
    if (c instanceof BigUint64Array || c instanceof BigInt64Array) {
      if (this.#direct === undefined) {
        this.#tracker.grow(DIRECT_TABLE_BYTES); // reserve before retention
        this.#direct = new Int32Array(DIRECT_VALUES);
      }
      for (const { text, count } of countU64(c, sel, m, this.#direct)) this.#groupFor([text]).count += count;
      return true;
    }
    if (c instanceof DictStringVector) {
      const bytes = this.#tracker.grow(c.dict.length * 4);
      try {
        const counts = new Int32Array(c.dict.length);
        this.excluded += countDict(c, sel, m, counts);
        for (let j = 0; j < counts.length; j++) {
          const n = counts[j] as number;
          if (n > 0) this.#groupFor([c.dict[j] as string]).count += n;
        }
      } finally {
        this.#tracker.shrink(bytes);
      }
      return true;
    }
    return false;
  }

  #termIds(t: GroupTerm, cols: Columns, attrs: AttrReader, sel: Int32Array | null, m: number): TermIds {
    if (t.kind === 'path' && (t.path.kind === 'field' || isPromotedService(t.path))) {
      const c = cols[pathColumn(t.path)];
      if (c instanceof DictStringVector) return dictIds(c, sel, m);
      if (c instanceof BigUint64Array || c instanceof BigInt64Array) return u64Ids(c, sel, m);
    }
    if (t.kind === 'bucket') {
      // Decoded as a typed array, the effective time has no NULLs: the time column's fallback never applies.
      const eff = cols[LOG_COLUMNS.effectiveTimeUnixNano];
      if (eff instanceof BigInt64Array || eff instanceof BigUint64Array)
        return bucketIds(eff, t.widthNs, sel, m, formatTimestamp);
    }
    return keyIds(termGetter(t, cols, attrs), sel, m);
  }

  /** The group of `parts` (as the per-row path keys it), reserved and created when new. */
  #groupFor(parts: readonly string[]): Group {
    if (parts.length === 1) {
      const k = parts[0] as string;
      let g = this.#groups.get(k);
      if (g === undefined) {
        this.#tracker.grow(groupEntryBytes([k])); // reserve before insertion
        g = { key: [k], count: 0, sum: 0, min: Infinity, max: -Infinity, n: 0 };
        this.#groups.set(k, g);
      }
      return g;
    }
    let node = this.#nested;
    const last = parts.length - 1;
    for (let t = 0; t < last; t++) {
      let next = node.get(parts[t] as string) as NestedGroups | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(parts[t] as string, next);
      }
      node = next;
    }
    let g = node.get(parts[last] as string) as Group | undefined;
    if (g === undefined) {
      const key = parts.slice();
      this.#tracker.grow(groupEntryBytes(key)); // reserve before insertion
      g = { key, count: 0, sum: 0, min: Infinity, max: -Infinity, n: 0 };
      node.set(parts[last] as string, g);
      this.#groups.set(key.join('\u0000'), g);
    }
    return g;
  }

  /** Every group so far, unsorted (a helper's partial table; no synthetic empty group). */
  partialGroups(): Group[] {
    return [...this.#groups.values()];
  }

  /**
   * Adds a helper's partial table (docs/design/query-engine.md, "Parallel scans"): counts add, minima and maxima
   * combine; each group new to this table is reserved before insertion. Exact only for the stages
   * `mergesExactly` admits (a floating-point sum depends on the order of its additions).
   */
  merge(groups: readonly Group[], excluded: number): void {
    for (const p of groups) {
      const g = this.#groupFor(p.key);
      g.count += p.count;
      g.n += p.n;
      g.sum += p.sum;
      if (p.min < g.min) g.min = p.min;
      if (p.max > g.max) g.max = p.max;
    }
    this.excluded += excluded;
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
