/**
 * @module structured
 * The structured JSON surface → the same IR as the text parser. It follows the query API's parser rather than its
 * JSON Schema (the parser is the authority; the schema is advisory): it accepts `event_name` and `{resource|attr}` group terms,
 * rejects unknown keys everywhere, and collapses a one-item `and`/`or` to its item (the IR keeps `and`/`or` at two
 * or more operands, which is what the text form can express). Integers may be `number` or `bigint` (use
 * `parseJsonExact` on raw bodies so u64 values arrive exact); a JSON string is always a string literal.
 */
import type { Result } from '@sluice/core';
import { err } from '@sluice/core';
import type { QueryError } from './errors.js';
import { MAX_NESTING_DEPTH, queryError } from './errors.js';
import type {
  AggFn,
  CmpOp,
  FieldName,
  GroupTerm,
  Literal,
  OrdOp,
  Path,
  Predicate,
  Query,
  SeverityName,
  Stage,
  StrFn,
  TimeSpec,
} from './ir.js';
import { FIELD_NAMES, Paths, Predicates, Queries, Stages, isSeverityName } from './ir.js';
import { parseTimeSpec } from './parser.js';
import { DURATION_UNIT_NS } from './time-text.js';
import { validateQuery } from './validate.js';

const ORD_OPS: readonly string[] = ['==', '!=', '<', '<=', '>', '>='];
const CMP_OPS: readonly string[] = [...ORD_OPS, '=~', '!~'];
const STR_FNS: readonly string[] = ['contains', 'matches', 'starts_with', 'ends_with'];
const AGG_FNS: readonly string[] = ['sum', 'min', 'max', 'avg'];
const U64_MAX = 0xffff_ffff_ffff_ffffn;

class Bad {
  constructor(readonly message: string) {}
}

type Obj = Readonly<Record<string, unknown>>;

function fail(at: string, message: string): never {
  throw new Bad(`${at}: ${message}`);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keysOf(o: Obj): string[] {
  return Object.keys(o);
}

/** Requires `o` to have only `allowed` keys and all of `required`. */
function shape(at: string, o: unknown, required: readonly string[], optional: readonly string[] = []): Obj {
  if (!isObj(o)) return fail(at, 'expected an object');
  for (const k of keysOf(o)) {
    if (!required.includes(k) && !optional.includes(k)) fail(at, `unknown key ${JSON.stringify(k)}`);
  }
  for (const k of required) if (!(k in o)) fail(at, `missing key ${JSON.stringify(k)}`);
  return o;
}

function integer(at: string, v: unknown, max: bigint): bigint {
  if (typeof v === 'bigint') {
    if (v < 0n || v > max) fail(at, `expected an integer 0-${max}`);
    return v;
  }
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || BigInt(v) > max)
    return fail(at, `expected an integer 0-${max}`);
  return BigInt(v);
}

function string(at: string, v: unknown): string {
  if (typeof v !== 'string') return fail(at, 'expected a string');
  return v;
}

function path(at: string, v: unknown): Path {
  if (typeof v === 'string') {
    if (!(FIELD_NAMES as readonly string[]).includes(v)) fail(at, `unknown field ${JSON.stringify(v)}`);
    return Paths.field(v as FieldName);
  }
  if (isObj(v)) {
    const ks = keysOf(v);
    const scope = ks[0];
    if (ks.length === 1 && (scope === 'resource' || scope === 'attr')) {
      const key = string(`${at}.${scope}`, v[scope]);
      if (key === '') fail(`${at}.${scope}`, 'empty attribute key');
      return Paths.attr(scope, key);
    }
  }
  return fail(at, 'expected a field name or {"resource": "key"} / {"attr": "key"}');
}

function literal(at: string, v: unknown): Literal {
  if (v === null) return { kind: 'null' };
  if (typeof v === 'string') return { kind: 'string', value: v };
  if (typeof v === 'boolean') return { kind: 'bool', value: v };
  if (typeof v === 'bigint') return { kind: 'int', value: v };
  if (typeof v === 'number' && Number.isFinite(v)) {
    return Number.isInteger(v) ? { kind: 'int', value: BigInt(v) } : { kind: 'float', value: v };
  }
  return fail(at, 'expected a JSON string, number, boolean or null');
}

function predicate(at: string, v: unknown, depth: number): Predicate {
  if (depth > MAX_NESTING_DEPTH) fail(at, `nesting deeper than ${MAX_NESTING_DEPTH} levels`);
  if (!isObj(v)) return fail(at, 'expected a predicate object');
  if ('field' in v) {
    const o = shape(at, v, ['field', 'op', 'value']);
    const p = path(`${at}.field`, o.field);
    const op = string(`${at}.op`, o.op);
    if (p.kind === 'field' && p.name === 'severity') {
      if (!ORD_OPS.includes(op)) fail(`${at}.op`, 'severity takes an ordering operator (==, !=, <, <=, >, >=)');
      if (typeof o.value === 'string') {
        if (!isSeverityName(o.value))
          fail(`${at}.value`, 'expected a severity name (trace, debug, info, warn, error, fatal)');
        return Predicates.severity(op as OrdOp, { kind: 'name', name: o.value.toLowerCase() as SeverityName });
      }
      const n = integer(`${at}.value`, o.value, 255n);
      return Predicates.severity(op as OrdOp, { kind: 'number', value: Number(n) });
    }
    if (!CMP_OPS.includes(op)) fail(`${at}.op`, `unknown operator ${JSON.stringify(op)}`);
    return Predicates.compare(p, op as CmpOp, literal(`${at}.value`, o.value));
  }
  if ('call' in v) {
    const o = shape(at, v, ['call', 'args']);
    const fn = string(`${at}.call`, o.call);
    const args = o.args;
    if (!Array.isArray(args)) return fail(`${at}.args`, 'expected an array');
    if (fn === 'resolves_to') {
      if (args.length !== 1) fail(`${at}.args`, 'resolves_to takes one template id');
      return Predicates.resolvesTo(integer(`${at}.args[0]`, args[0], U64_MAX));
    }
    if (!STR_FNS.includes(fn)) fail(`${at}.call`, `unknown function ${JSON.stringify(fn)}`);
    if (args.length !== 2) fail(`${at}.args`, `${fn} takes a field and a string`);
    return Predicates.strCall(fn as StrFn, path(`${at}.args[0]`, args[0]), string(`${at}.args[1]`, args[1]));
  }
  if ('const' in v) {
    const o = shape(at, v, ['const']);
    if (typeof o.const !== 'boolean') fail(`${at}.const`, 'expected true or false');
    return Predicates.bool(o.const as boolean);
  }
  for (const kind of ['and', 'or'] as const) {
    if (kind in v) {
      const o = shape(at, v, [kind]);
      const items = o[kind];
      if (!Array.isArray(items) || items.length === 0) return fail(`${at}.${kind}`, 'expected a non-empty array');
      const ops = items.map((x, i) => predicate(`${at}.${kind}[${i}]`, x, depth + 1));
      if (ops.length === 1) return ops[0] as Predicate;
      return kind === 'and' ? Predicates.and(ops) : Predicates.or(ops);
    }
  }
  if ('not' in v) {
    const o = shape(at, v, ['not']);
    return Predicates.not(predicate(`${at}.not`, o.not, depth + 1));
  }
  return fail(at, 'expected a comparison, call, const, and, or, or not node');
}

function time(at: string, v: unknown): TimeSpec {
  const r = parseTimeSpec(string(at, v));
  if (!r.ok) fail(at, `expected a time (now, -15m or an RFC 3339 timestamp): ${r.error.message}`);
  return (r as { value: TimeSpec }).value;
}

function groupTerms(at: string, v: unknown): GroupTerm[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return fail(at, 'expected an array of group terms');
  return v.map((t, i): GroupTerm => {
    const a = `${at}[${i}]`;
    if (isObj(t) && 'param' in t) {
      const o = shape(a, t, ['param']);
      return { kind: 'param', index: Number(integer(`${a}.param`, o.param, 0xffff_ffffn)) };
    }
    if (isObj(t) && 'bucket' in t) {
      const o = shape(a, t, ['bucket']);
      const s = string(`${a}.bucket`, o.bucket);
      const m = /^([0-9]+)([smhdw])$/.exec(s);
      if (!m) return fail(`${a}.bucket`, 'expected a duration like "5m"');
      return {
        kind: 'bucket',
        widthNs: BigInt(m[1] as string) * DURATION_UNIT_NS[m[2] as 's' | 'm' | 'h' | 'd' | 'w'],
      };
    }
    return { kind: 'path', path: path(a, t) };
  });
}

function stage(at: string, v: unknown): Stage {
  if (!isObj(v)) return fail(at, 'expected a stage object');
  const ks = keysOf(v);
  const agg = ks.find((k) => AGG_FNS.includes(k));
  if (agg !== undefined) {
    const o = shape(at, v, [agg], ['by']);
    return Stages.aggregate(agg as AggFn, path(`${at}.${agg}`, o[agg]), groupTerms(`${at}.by`, o.by));
  }
  if (ks.length !== 1) return fail(at, 'expected exactly one stage key');
  const k = ks[0] as string;
  const body = v[k];
  switch (k) {
    case 'range': {
      const o = shape(`${at}.range`, body, ['from', 'to']);
      return Stages.range(time(`${at}.range.from`, o.from), time(`${at}.range.to`, o.to));
    }
    case 'count': {
      const o = shape(`${at}.count`, body, [], ['by']);
      return Stages.count(groupTerms(`${at}.count.by`, o.by));
    }
    case 'sort': {
      const o = shape(`${at}.sort`, body, ['key'], ['desc']);
      const key = string(`${at}.sort.key`, o.key);
      if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(key)) fail(`${at}.sort.key`, 'expected an identifier');
      if (o.desc !== undefined && typeof o.desc !== 'boolean') fail(`${at}.sort.desc`, 'expected true or false');
      return Stages.sort(key, o.desc === true);
    }
    case 'limit':
      return Stages.limit(integer(`${at}.limit`, body, U64_MAX));
    case 'project': {
      if (!Array.isArray(body)) return fail(`${at}.project`, 'expected an array of fields');
      return Stages.project(body.map((p, i) => path(`${at}.project[${i}]`, p)));
    }
    case 'render':
      if (body !== null) shape(`${at}.render`, body, []);
      return Stages.render();
    default:
      return fail(at, `unknown stage ${JSON.stringify(k)}`);
  }
}

function query(v: unknown): Query {
  if (isObj(v) && 'drift' in v) {
    const o = shape('$', v, ['drift']);
    const d = shape('$.drift', o.drift, ['from', 'to']);
    return Queries.drift(time('$.drift.from', d.from), time('$.drift.to', d.to));
  }
  const o = shape('$', v, ['predicate'], ['stages']);
  const p = predicate('$.predicate', o.predicate, 1);
  const stages = o.stages === undefined ? [] : o.stages;
  if (!Array.isArray(stages)) return fail('$.stages', 'expected an array');
  return Queries.logs(
    p,
    stages.map((s, i) => stage(`$.stages[${i}]`, s)),
  );
}

/**
 * Parses and validates a structured query (already JSON-decoded). Errors name the JSON path
 * (`$.stages[1].count.by[0]: …`) and carry `start`/`end` 0. Never throws for bad input.
 */
export function parseStructuredQuery(json: unknown): Result<Query, QueryError> {
  let q: Query;
  try {
    q = query(json);
  } catch (e) {
    if (e instanceof Bad) return err(queryError(e.message));
    throw e;
  }
  return validateQuery(q);
}
