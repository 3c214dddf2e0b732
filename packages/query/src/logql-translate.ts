/**
 * @module logql-translate
 * Translates the LogQL subset (logql-ast.ts) into Sluice's query IR, so a Loki API request runs as an ordinary
 * query under the same admission gate, pool, caps and deadline (docs/grafana.md). The translation is exact for
 * what it accepts; what it cannot express exactly it refuses as `unsupported`.
 *
 * Loki semantics kept:
 * - a selector regex is anchored at both ends (`=~"api"` is `^(?:api)$`); a line filter regex is not;
 * - a missing label reads as the empty string, so `{a=""}`, `{a!="x"}` and `{a=~".*"}` match records without `a`
 *   (our comparisons never match a missing value, so these become negations of the opposite test);
 * - `level`/`detected_level` compare the level name of the severity (logql-labels.ts).
 */
import { err, ok, type Result } from '@sluice/core';
import type { CmpOp, GroupTerm, Path, Predicate } from './ir.js';
import type { LogqlError, LogqlExpr, LogqlLogExpr, LogqlRangeFn, LogqlStage } from './logql-ast.js';
import {
  LEVEL_LABELS,
  LOKI_LEVELS,
  groupKeyOfLabel,
  labelFilterPaths,
  streamLabelPaths,
  type LokiLevel,
} from './logql-labels.js';
import { compileLinearRegex } from './regex.js';
import { validateQuery } from './validate.js';

/** A grouping label and the term it is computed from. */
export interface LokiGroupLabel {
  readonly label: string;
  readonly term: GroupTerm;
  /** The term is the severity number: its value is shown as a level name. */
  readonly level: boolean;
  /** The term can be missing on a record (then the label is absent from the series). */
  readonly nullable: boolean;
}

/** What the adapter computes after the engine's aggregation, innermost first. */
export type LokiOuterAgg =
  | { readonly op: 'sum' | 'count'; readonly by: readonly string[] }
  | { readonly op: 'topk'; readonly k: number; readonly by: readonly string[] };

/** A translated LogQL query. */
export type LokiPlan =
  | { readonly kind: 'constant'; readonly value: number }
  | { readonly kind: 'logs'; readonly predicate: Predicate; readonly parsers: readonly ('json' | 'logfmt')[] }
  | {
      readonly kind: 'metric';
      readonly predicate: Predicate;
      readonly fn: LogqlRangeFn;
      readonly rangeNs: bigint;
      /** The innermost `sum by (…)`: the series the engine counts. */
      readonly by: readonly LokiGroupLabel[];
      readonly outer: readonly LokiOuterAgg[];
    };

const TRUE: Predicate = { kind: 'bool', value: true };
const FALSE: Predicate = { kind: 'bool', value: false };

const and = (ps: readonly Predicate[]): Predicate => {
  const kept = ps.filter((p) => !(p.kind === 'bool' && p.value));
  if (kept.some((p) => p.kind === 'bool' && !p.value)) return FALSE;
  return kept.length === 0 ? TRUE : kept.length === 1 ? kept[0]! : { kind: 'and', operands: kept };
};
const or = (ps: readonly Predicate[]): Predicate => {
  const kept = ps.filter((p) => !(p.kind === 'bool' && !p.value));
  if (kept.some((p) => p.kind === 'bool' && p.value)) return TRUE;
  return kept.length === 0 ? FALSE : kept.length === 1 ? kept[0]! : { kind: 'or', operands: kept };
};
const not = (p: Predicate): Predicate =>
  p.kind === 'bool' ? { kind: 'bool', value: !p.value } : p.kind === 'not' ? p.operand : { kind: 'not', operand: p };

class Refused {
  constructor(readonly error: LogqlError) {}
}

function anchored(pattern: string): { pattern: string; matchesEmpty: boolean } {
  const full = `^(?:${pattern})$`;
  const re = compileLinearRegex(full);
  if (!re.ok)
    throw new Refused({
      kind: 'syntax',
      message: `invalid regular expression ${JSON.stringify(pattern)}: ${re.error.message}`,
    });
  return { pattern: full, matchesEmpty: re.value.test('') };
}

/** `label op value` over the label's paths, a missing label reading as "" (see the module comment). */
function labelMatch(paths: readonly Path[], op: '=' | '!=' | '=~' | '!~', value: string): Predicate {
  const any = (cmp: CmpOp, v: string): Predicate =>
    or(paths.map((path) => ({ kind: 'compare', path, op: cmp, value: { kind: 'string', value: v } })));
  if (op === '=' || op === '!=') {
    // `a = ""` holds when a is missing or empty: the negation of "a is present and not empty".
    const positive = value === '' ? not(any('!=', '')) : any('==', value);
    return op === '=' ? positive : not(positive);
  }
  const re = anchored(value);
  const positive = re.matchesEmpty ? not(any('!~', re.pattern)) : any('=~', re.pattern);
  return op === '=~' ? positive : not(positive);
}

function levelBand(level: LokiLevel): Predicate {
  if (level === 'unknown') {
    return or([
      { kind: 'severity', op: '==', level: { kind: 'number', value: 0 } },
      { kind: 'severity', op: '>', level: { kind: 'number', value: 24 } },
    ]);
  }
  return { kind: 'severity', op: '==', level: { kind: 'name', name: level } };
}

/** `level op value`: the levels whose name passes the test, as severity bands. */
function levelMatch(op: string, value: string): Predicate {
  let test: (name: string) => boolean;
  if (op === '=' || op === '==') test = (n) => n === value;
  else if (op === '!=') test = (n) => n !== value;
  else if (op === '=~' || op === '!~') {
    const re = compileLinearRegex(anchored(value).pattern);
    if (!re.ok) throw new Refused({ kind: 'syntax', message: re.error.message });
    test = op === '=~' ? (n) => re.value.test(n) : (n) => !re.value.test(n);
  } else throw new Refused({ kind: 'unsupported', message: `the comparison ${op} on ${'level'} is not supported` });
  return or(LOKI_LEVELS.filter(test).map(levelBand));
}

function matcherPredicate(name: string, op: '=' | '!=' | '=~' | '!~', value: string): Predicate {
  if (LEVEL_LABELS.has(name)) return levelMatch(op, value);
  return labelMatch(streamLabelPaths(name), op, value);
}

function stagePredicate(stage: LogqlStage, afterParser: boolean): Predicate {
  switch (stage.kind) {
    case 'line_filter': {
      const body: Path = { kind: 'field', name: 'body' };
      if (stage.op === '|=' || stage.op === '!=') {
        if (stage.value === '') return stage.op === '|=' ? TRUE : FALSE;
        const p: Predicate = { kind: 'str_call', fn: 'contains', path: body, arg: stage.value };
        return stage.op === '|=' ? p : not(p);
      }
      const re = compileLinearRegex(stage.value);
      if (!re.ok)
        throw new Refused({
          kind: 'syntax',
          message: `invalid regular expression ${JSON.stringify(stage.value)}: ${re.error.message}`,
        });
      const p: Predicate = { kind: 'compare', path: body, op: '=~', value: { kind: 'string', value: stage.value } };
      return stage.op === '|~' ? p : not(p);
    }
    case 'parser':
    case 'drop_error':
      return TRUE;
    case 'label_filter': {
      const { name, op, value } = stage;
      if (LEVEL_LABELS.has(name)) {
        if (value.kind !== 'string') throw new Refused({ kind: 'unsupported', message: `${name} takes a string` });
        return levelMatch(op, value.value);
      }
      if (afterParser) {
        throw new Refused({
          kind: 'unsupported',
          message: `the label filter on ${name} after | json or | logfmt is not supported (fields extracted from the line cannot be filtered); filter structured metadata before the parser`,
        });
      }
      const paths = labelFilterPaths(name);
      if (value.kind === 'string') {
        const o = op === '==' ? '=' : op;
        if (o !== '=' && o !== '!=' && o !== '=~' && o !== '!~') {
          throw new Refused({ kind: 'unsupported', message: `the comparison ${op} with a string is not supported` });
        }
        return labelMatch(paths, o, value.value);
      }
      const cmp: CmpOp = op === '=' ? '==' : (op as CmpOp);
      const literal = Number.isInteger(value.value)
        ? ({ kind: 'int', value: BigInt(value.value) } as const)
        : ({ kind: 'float', value: value.value } as const);
      const attrs = paths.filter((p) => p.kind === 'attr');
      return or(attrs.map((path) => ({ kind: 'compare', path, op: cmp, value: literal })));
    }
  }
}

function logPredicate(log: LogqlLogExpr): { predicate: Predicate; parsers: ('json' | 'logfmt')[] } {
  if (log.matchers.length === 0) {
    throw new Refused({ kind: 'syntax', message: 'a stream selector needs at least one matcher' });
  }
  const parts: Predicate[] = log.matchers.map((m) => matcherPredicate(m.name, m.op, m.value));
  const parsers: ('json' | 'logfmt')[] = [];
  for (const stage of log.stages) {
    parts.push(stagePredicate(stage, parsers.length > 0));
    if (stage.kind === 'parser') parsers.push(stage.parser);
  }
  return { predicate: and(parts), parsers };
}

/** How a label is grouped by: `level`/`detected_level` by severity, `service_name` by service, others by resource key. */
export function lokiGroupLabel(label: string): LokiGroupLabel {
  if (LEVEL_LABELS.has(label)) {
    return { label, term: { kind: 'path', path: { kind: 'field', name: 'severity' } }, level: true, nullable: false };
  }
  const path: Path =
    label === 'service_name'
      ? { kind: 'field', name: 'service' }
      : { kind: 'attr', scope: 'resource', key: groupKeyOfLabel(label) };
  return { label, term: { kind: 'path', path }, level: false, nullable: true };
}

function translateMetric(expr: LogqlExpr): LokiPlan {
  const outer: LokiOuterAgg[] = [];
  let node = expr;
  let inner: readonly string[] | null = null;
  // Walk from the outside in; the innermost aggregation must be a sum directly over the range aggregation.
  while (node.kind === 'vector_agg') {
    if (node.inner.kind === 'range_agg') {
      if (node.op !== 'sum') {
        throw new Refused({
          kind: 'unsupported',
          message: `${node.op}() directly over ${node.inner.fn}() needs one series per stream, which is not supported; aggregate with sum by (…) first`,
        });
      }
      inner = node.by;
    } else {
      outer.unshift(node.op === 'topk' ? { op: 'topk', k: node.k!, by: node.by } : { op: node.op, by: node.by });
    }
    node = node.inner;
  }
  if (node.kind !== 'range_agg' || inner === null) {
    throw new Refused({
      kind: 'unsupported',
      message: 'a range aggregation without sum by (…) around it (one series per stream) is not supported',
    });
  }
  // Each outer grouping must only use labels the inner series have.
  let available = new Set(inner);
  for (const o of outer) {
    for (const l of o.by) {
      if (!available.has(l)) {
        throw new Refused({
          kind: 'unsupported',
          message: `grouping by ${l}, which the inner aggregation drops, is not supported`,
        });
      }
    }
    if (o.op !== 'topk') available = new Set(o.by);
  }
  const by = inner.map(lokiGroupLabel);
  if (by.filter((b) => b.nullable).length > 1) {
    throw new Refused({
      kind: 'unsupported',
      message: 'grouping by more than one label besides level/detected_level is not supported',
    });
  }
  const { predicate, parsers } = logPredicate(node.log);
  void parsers;
  return { kind: 'metric', predicate, fn: node.fn, rangeNs: node.rangeNs, by, outer };
}

/** Translates a parsed LogQL query; the predicate is validated as any DSL predicate is. */
export function translateLogql(expr: LogqlExpr): Result<LokiPlan, LogqlError> {
  try {
    let plan: LokiPlan;
    if (expr.kind === 'constant') plan = expr;
    else if (expr.kind === 'logs') plan = { kind: 'logs', ...logPredicate(expr) };
    else plan = translateMetric(expr);
    if (plan.kind !== 'constant') {
      const valid = validateQuery({ kind: 'logs', predicate: plan.predicate, stages: [] });
      if (!valid.ok) return err({ kind: 'syntax', message: valid.error.message });
    }
    return ok(plan);
  } catch (e) {
    if (e instanceof Refused) return err(e.error);
    throw e;
  }
}
