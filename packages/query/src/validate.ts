/**
 * @module validate
 * The semantic checks of the query language (packages/query/README.md, "Validation"), minus the ones
 * that need deployment state (which attributes are promoted) — the planner owns those. Sluice deviates in one
 * place: `sort` and `project` are executed, so they are accepted here; `render` is still rejected.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';
import type { QueryError } from './errors.js';
import { queryError } from './errors.js';
import type { CompareNode, GroupTerm, LogQuery, Path, Predicate, Query, Stage, StrCallNode } from './ir.js';
import { AGGREGATE_ONLY_FIELDS, FIELD_NAMES } from './ir.js';
import type { Span } from './parser.js';
import { compileLinearRegex } from './regex.js';

const U32_MAX = 0xffff_ffffn;
const U64_MAX = 0xffff_ffff_ffff_ffffn;
const TEXT_FIELDS: readonly string[] = ['body', 'scope', 'event_name', 'service'];
const SORT_KEY_RE = /^[A-Za-z][A-Za-z0-9_]*$/;

class Invalid {
  constructor(readonly error: QueryError) {}
}

/** True for a derived field that only `sum|min|max|avg(…)` may take (`body_bytes`). */
function aggregateOnly(p: Path): boolean {
  return p.kind === 'field' && (AGGREGATE_ONLY_FIELDS as readonly string[]).includes(p.name);
}

/** The refusal of a derived field anywhere but an aggregation's argument. */
function aggregateOnlyMessage(p: Path, where: string): string {
  const name = pathName(p);
  return `${name} (the body's size in UTF-8 bytes) can only be aggregated, as sum(${name}), min, max or avg; not ${where}`;
}

/** Short form of a path for messages (`attr.key`, even when the key needs bracket form in query text). */
function pathName(p: Path): string {
  return p.kind === 'field' ? p.name : `${p.scope}.${p.key}`;
}

/**
 * Checks a parsed query. `spans` (from the text parser) lets errors cite positions; without it they cite 0.
 * Never throws for bad input.
 */
export function validateQuery(q: Query, spans?: ReadonlyMap<object, Span>): Result<Query, QueryError> {
  const fail = (node: object, message: string): never => {
    const s = spans?.get(node);
    throw new Invalid(queryError(s ? `${message} (at ${s.start})` : message, s?.start ?? 0, s?.end ?? 0));
  };
  try {
    if (q.kind === 'logs') {
      checkPredicate(q.predicate, fail);
      checkStages(q, fail);
    }
    return ok(q);
  } catch (e) {
    if (e instanceof Invalid) return err(e.error);
    throw e;
  }
}

type Fail = (node: object, message: string) => never;

function checkPredicate(root: Predicate, fail: Fail): void {
  // Iterative walk: depth is bounded by the parser, but structured input is checked here too.
  const stack: Predicate[] = [root];
  while (stack.length > 0) {
    const p = stack.pop() as Predicate;
    switch (p.kind) {
      case 'and':
      case 'or':
        if (p.operands.length < 2) fail(p, `'${p.kind}' needs at least two operands`);
        stack.push(...p.operands);
        break;
      case 'not':
        stack.push(p.operand);
        break;
      case 'bool':
        break;
      case 'severity':
        if (
          p.level.kind === 'number' &&
          (!Number.isInteger(p.level.value) || p.level.value < 0 || p.level.value > 255)
        ) {
          fail(p, `severity number ${p.level.value} is out of range 0-255`);
        }
        break;
      case 'compare':
        checkCompare(p, fail);
        break;
      case 'str_call':
        checkStrCall(p, fail);
        break;
      case 'resolves_to':
        if (p.templateId < 0n || p.templateId > U64_MAX)
          fail(p, 'resolves_to() needs a template id 0-18446744073709551615');
        break;
    }
  }
}

function checkRegex(node: object, pattern: string, fail: Fail): void {
  // The pattern-size bound (MAX_REGEX_PATTERN_BYTES) is checked here, so an over-long pattern is a 400 at parse
  // time naming its position; the engine checks it again for queries built without this validation.
  const compiled = compileLinearRegex(pattern);
  if (!compiled.ok) fail(node, compiled.error.message);
}

function checkCompare(c: CompareNode, fail: Fail): void {
  const v = c.value;
  const name = pathName(c.path);
  if (aggregateOnly(c.path)) fail(c, aggregateOnlyMessage(c.path, 'compared'));
  const isRegex = c.op === '=~' || c.op === '!~';
  if (v.kind === 'null') fail(c, `${name} cannot be compared with null; a missing field never matches`);
  const isText = c.path.kind === 'attr' || TEXT_FIELDS.includes(c.path.name);
  if (isRegex) {
    if (!isText)
      fail(c, `regex match (${c.op}) applies to text: body, scope, event_name, service or an attribute, not ${name}`);
    if (v.kind !== 'string') fail(c, `${c.op} needs a string pattern`);
    checkRegex(c, v.kind === 'string' ? v.value : '', fail);
    return;
  }
  if (c.path.kind === 'attr') {
    if (v.kind === 'duration' || v.kind === 'timestamp') {
      fail(c, `${name} compares with a string, number or boolean, not a ${v.kind}`);
    }
    return;
  }
  const isInt = v.kind === 'int';
  const num = v.kind === 'int' ? v.value : undefined;
  switch (c.path.name) {
    case 'severity':
      fail(c, 'severity takes a severity comparison');
      break;
    case 'body':
    case 'scope':
    case 'event_name':
    case 'service':
      if (v.kind !== 'string') fail(c, `${name} compares with a string`);
      break;
    case 'ts':
    case 'observed_ts':
      if (v.kind !== 'timestamp' && !(isInt && (num as bigint) >= 0n)) {
        fail(c, `${name} compares with an RFC 3339 timestamp or integer nanoseconds`);
      }
      break;
    case 'trace_id':
    case 'span_id': {
      const digits = c.path.name === 'trace_id' ? 32 : 16;
      if (v.kind !== 'string' || !new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(v.value)) {
        fail(c, `${name} compares with a hex string of ${digits} digits`);
      }
      break;
    }
    case 'flags':
      if (!isInt || (num as bigint) < 0n || (num as bigint) > U32_MAX)
        fail(c, 'flags compares with an integer 0-4294967295');
      break;
    case 'template_id':
      if (!isInt || (num as bigint) < 0n || (num as bigint) > U64_MAX) {
        fail(c, 'template_id compares with an integer 0-18446744073709551615');
      }
      break;
    case 'confidence':
      if (v.kind !== 'int' && v.kind !== 'float') fail(c, 'confidence compares with a number');
      break;
    case 'lossy':
      if (v.kind !== 'bool') fail(c, 'lossy compares with true or false');
      if (c.op !== '==' && c.op !== '!=') fail(c, 'lossy takes == or !=');
      break;
  }
}

function checkStrCall(c: StrCallNode, fail: Fail): void {
  if (aggregateOnly(c.path)) fail(c, aggregateOnlyMessage(c.path, `in ${c.fn}()`));
  if (c.path.kind === 'field' && !TEXT_FIELDS.includes(c.path.name)) {
    fail(c, `${c.fn}() applies to text: body, scope, event_name, service or an attribute, not ${c.path.name}`);
  }
  if (c.fn === 'matches') checkRegex(c, c.arg, fail);
}

/** The conjuncts of the predicate's top-level conjunction (nested `and`s flattened; `or`/`not` are opaque). */
export function topLevelConjuncts(p: Predicate): readonly Predicate[] {
  const out: Predicate[] = [];
  const stack: Predicate[] = [p];
  while (stack.length > 0) {
    const x = stack.pop() as Predicate;
    if (x.kind === 'and') for (let i = x.operands.length - 1; i >= 0; i--) stack.push(x.operands[i] as Predicate);
    else out.push(x);
  }
  return out;
}

/**
 * The single template the predicate pins via `template_id == N` at its top-level conjunction, or `undefined`
 * when it pins none or several different ids. `or`, `not` and `resolves_to` never pin.
 */
export function pinnedTemplateId(p: Predicate): bigint | undefined {
  const ids = new Set<bigint>();
  for (const c of topLevelConjuncts(p)) {
    if (
      c.kind === 'compare' &&
      c.op === '==' &&
      c.path.kind === 'field' &&
      c.path.name === 'template_id' &&
      c.value.kind === 'int'
    ) {
      ids.add(c.value.value);
    }
  }
  return ids.size === 1 ? [...ids][0] : undefined;
}

function checkStages(q: LogQuery, fail: Fail): void {
  const aggs = q.stages.filter((s) => s.kind === 'count' || s.kind === 'aggregate');
  if (aggs.length > 1) fail(aggs[1] as Stage, 'a query may have at most one aggregation stage');
  const agg = aggs[0];
  for (const s of q.stages) {
    switch (s.kind) {
      case 'range':
        break;
      case 'limit':
        if (s.n < 0n || s.n > U64_MAX) fail(s, 'limit needs a row count 0-18446744073709551615');
        if (agg) fail(s, 'limit cannot be combined with an aggregation (limiting groups is not supported)');
        break;
      case 'count':
        checkGroupTerms(q, s.by, fail);
        break;
      case 'aggregate':
        if (s.path.kind !== 'attr' && !aggregateOnly(s.path)) {
          fail(s, `${s.fn}() needs a promoted attr. or resource. path or body_bytes, not the field ${s.path.name}`);
        }
        checkGroupTerms(q, s.by, fail);
        break;
      case 'sort': {
        const derived = FIELD_NAMES.find((n) => n === s.key && aggregateOnly({ kind: 'field', name: n }));
        if (derived !== undefined) fail(s, aggregateOnlyMessage({ kind: 'field', name: derived }, 'sorted by'));
        const allowed = new Set<string>(FIELD_NAMES.filter((n) => !aggregateOnly({ kind: 'field', name: n })));
        if (agg?.kind === 'count') allowed.add('count');
        if (agg?.kind === 'aggregate') {
          allowed.add('value');
          allowed.add(agg.fn);
        }
        if (!SORT_KEY_RE.test(s.key) || !allowed.has(s.key)) {
          fail(
            s,
            `cannot sort by '${s.key}': use a field${agg ? ' or the aggregate output' : ''} (${[...allowed].join(', ')})`,
          );
        }
        break;
      }
      case 'project':
        if (s.paths.length === 0) fail(s, 'project needs at least one field');
        for (const p of s.paths) if (aggregateOnly(p)) fail(s, aggregateOnlyMessage(p, 'projected'));
        if (agg) fail(s, 'project cannot be combined with an aggregation (aggregations return groups, not records)');
        break;
      case 'render':
        fail(s, 'the render stage is not yet supported by the querier');
        break;
    }
  }
}

function checkGroupTerms(q: LogQuery, by: readonly GroupTerm[], fail: Fail): void {
  let buckets = 0;
  const params = new Set<number>();
  for (const t of by) {
    if (t.kind === 'path' && aggregateOnly(t.path)) fail(t, aggregateOnlyMessage(t.path, 'grouped by'));
    if (t.kind === 'bucket') {
      if (t.widthNs <= 0n) fail(t, 'bucket() needs a width greater than 0');
      if (++buckets > 1) fail(t, 'a by-list takes at most one bucket()');
    } else if (t.kind === 'param') {
      if (!Number.isInteger(t.index) || t.index < 0 || t.index > 0xffff_ffff)
        fail(t, 'param() needs a slot 0-4294967295');
      if (params.has(t.index)) fail(t, `param(${t.index}) appears more than once in the by-list`);
      params.add(t.index);
      if (pinnedTemplateId(q.predicate) === undefined) {
        fail(
          t,
          `param(${t.index}) needs the predicate to pin exactly one template with template_id == N at the top level ` +
            '(or, not and resolves_to do not pin)',
        );
      }
    }
  }
}
