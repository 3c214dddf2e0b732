/**
 * @module filter-pruning
 * Row-group pruning from the files' row-group filters (docs/design/storage-format.md, "Row-group filters"):
 * `contains(body, s)` against the body n-gram sketch and `trace_id == X` / `span_id == X` against the id bloom
 * filters — only from the predicate's top-level conjunction, where a group without a match for one conjunct has
 * no matching row. A filter's bytes are reserved on the query's tracker before they are read and given back
 * after the check. A group the footer statistics already pruned is never checked here.
 */
import type { Predicate } from '@sluice/query';
import { topLevelConjuncts } from '@sluice/query';
import type { FilterKind, ParquetFileHandle } from '@sluice/storage';
import { filterRange, groupMayContainText, groupMayContainValue, needleNgramHashes } from '@sluice/storage';
import type { MemoryTracker } from './tracker.js';

/** What the filters can rule out for one query. */
export interface FilterPruner {
  /** True when some conjunct can use a filter (otherwise {@link mayMatch} is never worth calling). */
  readonly active: boolean;
  /** False only when group `index` of `file` certainly holds no matching row. */
  mayMatch(file: ParquetFileHandle, index: number, tracker: MemoryTracker): Promise<boolean>;
}

type Check =
  | { readonly kind: 'body'; readonly hashes: ReturnType<typeof needleNgramHashes> }
  | { readonly kind: 'trace_id' | 'span_id'; readonly value: Uint8Array };

/** Builds the filter pruner for a predicate. */
export function createFilterPruner(predicate: Predicate): FilterPruner {
  const checks: Check[] = [];
  for (const c of topLevelConjuncts(predicate)) {
    if (c.kind === 'str_call' && c.fn === 'contains' && c.path.kind === 'field' && c.path.name === 'body') {
      const hashes = needleNgramHashes(c.arg);
      if (hashes.length > 0) checks.push({ kind: 'body', hashes });
    } else if (
      c.kind === 'compare' &&
      c.op === '==' &&
      c.path.kind === 'field' &&
      (c.path.name === 'trace_id' || c.path.name === 'span_id') &&
      c.value.kind === 'string' &&
      /^(?:[0-9a-fA-F]{2})+$/.test(c.value.value)
    ) {
      checks.push({ kind: c.path.name, value: Buffer.from(c.value.value, 'hex') });
    }
  }
  return {
    active: checks.length > 0,
    async mayMatch(file, index, tracker) {
      for (const check of checks) {
        const range = filterRange(file, index, check.kind as FilterKind);
        if (range === null) continue;
        const held = tracker.grow(range.length);
        try {
          const may =
            check.kind === 'body'
              ? await groupMayContainText(file, index, check.hashes)
              : await groupMayContainValue(file, index, check.kind, check.value);
          if (!may) return false;
        } finally {
          tracker.shrink(held);
        }
      }
      return true;
    },
  };
}
