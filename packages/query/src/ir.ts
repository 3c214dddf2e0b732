/**
 * @module ir
 * The immutable query IR shared by the text parser, the structured JSON parser, the printer, the validator and
 * (later) the planner. Every node is a readonly object with a string `kind` discriminant and is frozen on
 * creation. Times and u64 integers are `bigint` so nothing above 2^53 is rounded.
 */

/**
 * Scalar fields of the DSL (packages/query/README.md). `severity` is separate because it has its own comparison.
 * `body_bytes` is derived (the body's size in UTF-8 bytes) and may only be aggregated: see {@link AGGREGATE_ONLY_FIELDS}.
 */
export type ScalarField =
  | 'body'
  | 'ts'
  | 'observed_ts'
  | 'trace_id'
  | 'span_id'
  | 'scope'
  | 'event_name'
  | 'flags'
  | 'service'
  | 'template_id'
  | 'confidence'
  | 'lossy'
  | 'body_bytes';

/** Every field name, `severity` included. */
export type FieldName = 'severity' | ScalarField;

/** All scalar field names, in grammar order. */
export const SCALAR_FIELDS: readonly ScalarField[] = Object.freeze([
  'body',
  'ts',
  'observed_ts',
  'trace_id',
  'span_id',
  'scope',
  'event_name',
  'flags',
  'service',
  'template_id',
  'confidence',
  'lossy',
  'body_bytes',
]);

/**
 * Derived fields that exist only as the argument of `sum|min|max|avg(…)`: validation refuses them in comparisons,
 * string functions, `by` lists, `sort` and `project` (packages/query/README.md, "Derived fields").
 */
export const AGGREGATE_ONLY_FIELDS: readonly ScalarField[] = Object.freeze(['body_bytes']);

/** All field names, `severity` first. */
export const FIELD_NAMES: readonly FieldName[] = Object.freeze(['severity', ...SCALAR_FIELDS]);

/** A built-in field. */
export interface FieldPath {
  readonly kind: 'field';
  readonly name: FieldName;
}

/**
 * A resource or log attribute. `key` is the attribute key as stored (`attr.a.b` and `attr["a.b"]` are the same
 * key `a.b`); the promoted column, when configured, is named `<scope>.<key>`.
 */
export interface AttrPath {
  readonly kind: 'attr';
  readonly scope: 'resource' | 'attr';
  readonly key: string;
}

/** Anything a comparison, string function, aggregation, group term or projection can address. */
export type Path = FieldPath | AttrPath;

/** Ordering and equality operators. */
export type OrdOp = '==' | '!=' | '<' | '<=' | '>' | '>=';
/** Comparison operators: ordering plus regex match / non-match. */
export type CmpOp = OrdOp | '=~' | '!~';

/** Literal operands of a comparison. Integers are exact (`bigint`); durations and timestamps are nanoseconds. */
export type Literal =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'bool'; readonly value: boolean }
  | { readonly kind: 'null' }
  | { readonly kind: 'duration'; readonly ns: bigint }
  | { readonly kind: 'timestamp'; readonly ns: bigint };

/** OTel severity band names (packages/query/README.md). */
export type SeverityName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** Severity operand: a band name or a raw SeverityNumber (0–255). */
export type SeverityLevel =
  { readonly kind: 'name'; readonly name: SeverityName } | { readonly kind: 'number'; readonly value: number };

/** String-matching functions. */
export type StrFn = 'contains' | 'matches' | 'starts_with' | 'ends_with';

/** `a and b [and …]` — at least two operands, kept as written (not flattened). */
export interface AndNode {
  readonly kind: 'and';
  readonly operands: readonly Predicate[];
}
/** `a or b [or …]` — at least two operands. */
export interface OrNode {
  readonly kind: 'or';
  readonly operands: readonly Predicate[];
}
/** `not x`. */
export interface NotNode {
  readonly kind: 'not';
  readonly operand: Predicate;
}
/** `true` / `false`. */
export interface BoolNode {
  readonly kind: 'bool';
  readonly value: boolean;
}
/** `severity <op> <name|int>`; see {@link severityBand} for what a name means. */
export interface SeverityNode {
  readonly kind: 'severity';
  readonly op: OrdOp;
  readonly level: SeverityLevel;
}
/** `<scalar path> <op> <literal>` (never `severity`). */
export interface CompareNode {
  readonly kind: 'compare';
  readonly path: Path;
  readonly op: CmpOp;
  readonly value: Literal;
}
/** `contains|matches|starts_with|ends_with(path, "s")`. */
export interface StrCallNode {
  readonly kind: 'str_call';
  readonly fn: StrFn;
  readonly path: Path;
  readonly arg: string;
}
/** `resolves_to(n)`: `template_id IN <alias class of n>`. */
export interface ResolvesToNode {
  readonly kind: 'resolves_to';
  readonly templateId: bigint;
}

/** A predicate node. */
export type Predicate =
  AndNode | OrNode | NotNode | BoolNode | SeverityNode | CompareNode | StrCallNode | ResolvesToNode;

/**
 * A point in time as written: `now`, `now + offsetNs` (`-15m` is offset −15 min), or an absolute instant.
 * {@link resolveTimes} turns every spec into `absolute`.
 */
export type TimeSpec =
  | { readonly kind: 'now' }
  | { readonly kind: 'relative'; readonly offsetNs: bigint }
  | { readonly kind: 'absolute'; readonly ns: bigint };

/** A `by` term. */
export type GroupTerm =
  | { readonly kind: 'path'; readonly path: Path }
  | { readonly kind: 'param'; readonly index: number }
  | { readonly kind: 'bucket'; readonly widthNs: bigint };

/** Numeric aggregation functions. */
export type AggFn = 'sum' | 'min' | 'max' | 'avg';

/** `range(from, to)`: the half-open window `[from, to)`; the last one wins. */
export interface RangeStage {
  readonly kind: 'range';
  readonly from: TimeSpec;
  readonly to: TimeSpec;
}
/** `limit n`; the last one wins and the server clamps it. */
export interface LimitStage {
  readonly kind: 'limit';
  readonly n: bigint;
}
/** `count [by …]`. */
export interface CountStage {
  readonly kind: 'count';
  readonly by: readonly GroupTerm[];
}
/** `sum|min|max|avg(path) [by …]`. */
export interface AggregateStage {
  readonly kind: 'aggregate';
  readonly fn: AggFn;
  readonly path: Path;
  readonly by: readonly GroupTerm[];
}
/** `sort key [asc|desc]` — executed by Sluice (the original language rejects it). */
export interface SortStage {
  readonly kind: 'sort';
  readonly key: string;
  readonly descending: boolean;
}
/** `project p1, p2, …` — executed by Sluice (the original language rejects it). */
export interface ProjectStage {
  readonly kind: 'project';
  readonly paths: readonly Path[];
}
/** `render` — parses, rejected by validation as in the original language. */
export interface RenderStage {
  readonly kind: 'render';
}

/** A pipeline stage. */
export type Stage = RangeStage | LimitStage | CountStage | AggregateStage | SortStage | ProjectStage | RenderStage;

/** A log query: a predicate and its stages in source order. */
export interface LogQuery {
  readonly kind: 'logs';
  readonly predicate: Predicate;
  readonly stages: readonly Stage[];
}

/** `drift from <time> to <time>`. */
export interface DriftQuery {
  readonly kind: 'drift';
  readonly from: TimeSpec;
  readonly to: TimeSpec;
}

/** A statement. */
export type Query = LogQuery | DriftQuery;

const SEVERITY_FLOORS: Readonly<Record<SeverityName, number>> = Object.freeze({
  trace: 1,
  debug: 5,
  info: 9,
  warn: 13,
  error: 17,
  fatal: 21,
});

/** Severity names in band order. */
export const SEVERITY_NAMES: readonly SeverityName[] = Object.freeze([
  'trace',
  'debug',
  'info',
  'warn',
  'error',
  'fatal',
]);

/**
 * The OTel band of a severity name: `floor` to `ceil` inclusive (e.g. `error` is 17–20). `==`/`!=` with a name
 * test band membership; ordering with a name uses the floor (packages/query/README.md).
 */
export function severityBand(name: SeverityName): { readonly floor: number; readonly ceil: number } {
  const floor = SEVERITY_FLOORS[name];
  return { floor, ceil: floor + 3 };
}

/** True when `s` (any case) is a severity name. */
export function isSeverityName(s: string): boolean {
  return (SEVERITY_NAMES as readonly string[]).includes(s.toLowerCase());
}

const f = Object.freeze;
/** Freezes a shallow copy unless already frozen (keeps node identity, which the parser's span map relies on). */
const fz = <T extends object>(o: T): T => (Object.isFrozen(o) ? o : f({ ...o }));

/** Frozen factories for predicate nodes (house style rule 14). */
export const Predicates = f({
  and: (operands: readonly Predicate[]): AndNode => f({ kind: 'and', operands: f([...operands]) }),
  or: (operands: readonly Predicate[]): OrNode => f({ kind: 'or', operands: f([...operands]) }),
  not: (operand: Predicate): NotNode => f({ kind: 'not', operand }),
  bool: (value: boolean): BoolNode => f({ kind: 'bool', value }),
  severity: (op: OrdOp, level: SeverityLevel): SeverityNode => f({ kind: 'severity', op, level: fz(level) }),
  compare: (path: Path, op: CmpOp, value: Literal): CompareNode =>
    f({ kind: 'compare', path: fz(path), op, value: fz(value) }),
  strCall: (fn: StrFn, path: Path, arg: string): StrCallNode => f({ kind: 'str_call', fn, path: fz(path), arg }),
  resolvesTo: (templateId: bigint): ResolvesToNode => f({ kind: 'resolves_to', templateId }),
  /** True for `and`/`or`/`not`. */
  isLogical: (p: Predicate): p is AndNode | OrNode | NotNode => p.kind === 'and' || p.kind === 'or' || p.kind === 'not',
});

/** Frozen factories for paths. */
export const Paths = f({
  field: (name: FieldName): FieldPath => f({ kind: 'field', name }),
  attr: (scope: 'resource' | 'attr', key: string): AttrPath => f({ kind: 'attr', scope, key }),
});

/** Frozen factories for stages. */
export const Stages = f({
  range: (from: TimeSpec, to: TimeSpec): RangeStage => f({ kind: 'range', from: fz(from), to: fz(to) }),
  limit: (n: bigint): LimitStage => f({ kind: 'limit', n }),
  count: (by: readonly GroupTerm[]): CountStage => f({ kind: 'count', by: freezeTerms(by) }),
  aggregate: (fn: AggFn, path: Path, by: readonly GroupTerm[]): AggregateStage =>
    f({ kind: 'aggregate', fn, path: fz(path), by: freezeTerms(by) }),
  sort: (key: string, descending: boolean): SortStage => f({ kind: 'sort', key, descending }),
  project: (paths: readonly Path[]): ProjectStage => f({ kind: 'project', paths: f(paths.map(fz)) }),
  render: (): RenderStage => f({ kind: 'render' }),
  /** True for `count` and `sum|min|max|avg`. */
  isAggregation: (s: Stage): s is CountStage | AggregateStage => s.kind === 'count' || s.kind === 'aggregate',
});

function freezeTerms(by: readonly GroupTerm[]): readonly GroupTerm[] {
  return f(by.map((t) => (t.kind === 'path' && !Object.isFrozen(t) ? f({ kind: 'path', path: fz(t.path) }) : fz(t))));
}

/** Frozen factories for statements. */
export const Queries = f({
  logs: (predicate: Predicate, stages: readonly Stage[]): LogQuery =>
    f({ kind: 'logs', predicate, stages: f([...stages]) }),
  drift: (from: TimeSpec, to: TimeSpec): DriftQuery => f({ kind: 'drift', from: fz(from), to: fz(to) }),
});

/** An exhaustive visitor over predicate kinds; every method receives the node of its kind. */
export interface PredicateVisitor<R> {
  and(node: AndNode): R;
  or(node: OrNode): R;
  not(node: NotNode): R;
  bool(node: BoolNode): R;
  severity(node: SeverityNode): R;
  compare(node: CompareNode): R;
  strCall(node: StrCallNode): R;
  resolvesTo(node: ResolvesToNode): R;
}

/** Dispatches `node` to the visitor method of its kind. */
export function visitPredicate<R>(node: Predicate, v: PredicateVisitor<R>): R {
  switch (node.kind) {
    case 'and':
      return v.and(node);
    case 'or':
      return v.or(node);
    case 'not':
      return v.not(node);
    case 'bool':
      return v.bool(node);
    case 'severity':
      return v.severity(node);
    case 'compare':
      return v.compare(node);
    case 'str_call':
      return v.strCall(node);
    case 'resolves_to':
      return v.resolvesTo(node);
  }
}
