/**
 * @module pruning
 * Row-group pruning from footer min/max statistics (conservative: a group is dropped only when no row in it can
 * match): the window vs `effective_time_unix_nano`, severity conjuncts vs `severity_number`, and
 * `template_id == N` / `resolves_to(N)` vs `template_id` — only from the predicate's top-level conjunction.
 * Statistics that are missing or not provably ordered (negative int64, i.e. u64 ≥ 2^63) never prune.
 */
import type { Predicate, TimeWindow } from '@sluice/query';
import { topLevelConjuncts } from '@sluice/query';
import type { RowGroupInfo } from '@sluice/storage';
import { LOG_COLUMNS } from '@sluice/storage';
import { severityTest } from './predicate-eval.js';

/** A row-group filter built once per query. */
export interface RowGroupPruner {
  /** True when the group may hold a matching row (must be scanned). */
  mayMatch(group: RowGroupInfo): boolean;
}

function bigStats(group: RowGroupInfo, name: string): [bigint, bigint] | undefined {
  const c = group.columns.find((x) => x.name === name);
  if (c === undefined || typeof c.min !== 'bigint' || typeof c.max !== 'bigint') return undefined;
  if (c.min < 0n || c.max < 0n || c.min > c.max) return undefined;
  return [c.min, c.max];
}

function numStats(group: RowGroupInfo, name: string): [number, number] | undefined {
  const c = group.columns.find((x) => x.name === name);
  if (c === undefined || typeof c.min !== 'number' || typeof c.max !== 'number' || c.min > c.max) return undefined;
  return [c.min, c.max];
}

/** Builds the pruner for a predicate and window. */
export function createPruner(predicate: Predicate, window: TimeWindow): RowGroupPruner {
  const severityTests: ((s: number) => boolean)[] = [];
  const templateIds: bigint[] = [];
  for (const c of topLevelConjuncts(predicate)) {
    if (c.kind === 'severity') severityTests.push(severityTest(c));
    else if (c.kind === 'resolves_to') templateIds.push(c.templateId);
    else if (
      c.kind === 'compare' &&
      c.op === '==' &&
      c.path.kind === 'field' &&
      c.path.name === 'template_id' &&
      c.value.kind === 'int'
    ) {
      templateIds.push(c.value.value);
    }
  }
  return {
    mayMatch(group) {
      const t = bigStats(group, LOG_COLUMNS.effectiveTimeUnixNano);
      if (t !== undefined && (t[1] < window.fromNs || t[0] >= window.toNs)) return false;
      if (severityTests.length > 0) {
        const s = numStats(group, LOG_COLUMNS.severityNumber);
        if (s !== undefined && s[1] - s[0] <= 255) {
          let any = false;
          for (let v = s[0]; v <= s[1] && !any; v++) any = severityTests.every((f) => f(v));
          if (!any) return false;
        }
      }
      if (templateIds.length > 0) {
        const id = bigStats(group, LOG_COLUMNS.templateId);
        if (id !== undefined) {
          for (const n of templateIds) if (n < id[0] || n > id[1]) return false;
        }
      }
      return true;
    },
  };
}
