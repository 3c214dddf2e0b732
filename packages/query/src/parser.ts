/**
 * @module parser
 * Recursive-descent parser for the text DSL, grammar v1.1 (packages/query/README.md), producing the IR of `ir.ts`.
 * Input is bounded ({@link MAX_QUERY_BYTES}, {@link MAX_NESTING_DEPTH}) so adversarial text cannot overflow the
 * stack. Syntax errors come back as values naming the offending token and its offset.
 *
 * One extension over the original grammar (packages/query/README.md): a numeric literal may carry a leading `-` (`attr.delta > -5`), so that
 * every structured-JSON query (whose numbers may be negative) has a text form.
 */
import type { Result } from '@sluice/core';
import { err, ok } from '@sluice/core';
import type { QueryError } from './errors.js';
import { MAX_NESTING_DEPTH, MAX_QUERY_BYTES, queryError } from './errors.js';
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
import type { Token } from './lexer.js';
import { lex } from './lexer.js';

/** Source span of an IR node: UTF-16 offsets, half-open. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A parsed query and the source span of each of its nodes (keyed by node identity). */
export interface ParsedQuery {
  readonly query: Query;
  readonly spans: ReadonlyMap<object, Span>;
}

const ORD_OPS: readonly string[] = ['==', '!=', '<', '<=', '>', '>='];
const CMP_OPS: readonly string[] = [...ORD_OPS, '=~', '!~'];
const STR_FNS: readonly string[] = ['contains', 'matches', 'starts_with', 'ends_with'];
const U32_MAX = 0xffff_ffffn;
const U64_MAX = 0xffff_ffff_ffff_ffffn;

class Failure {
  constructor(readonly error: QueryError) {}
}

function show(t: Token): string {
  return t.kind === 'eof' ? 'end of query' : `token '${t.text.length > 40 ? `${t.text.slice(0, 40)}…` : t.text}'`;
}

class Parser {
  private i = 0;
  private depth = 0;
  readonly spans = new Map<object, Span>();

  constructor(private readonly toks: readonly Token[]) {}

  private peek(k = 0): Token {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)] as Token;
  }
  private next(): Token {
    const t = this.peek();
    if (this.i < this.toks.length - 1) this.i++;
    return t;
  }
  private is(text: string, k = 0): boolean {
    const t = this.peek(k);
    return (t.kind === 'ident' || t.kind === 'sym') && t.text === text;
  }
  private fail(t: Token, expected: string): never {
    throw new Failure(queryError(`unexpected ${show(t)} at ${t.start}: expected ${expected}`, t.start, t.end));
  }
  private expect(text: string, expected = `'${text}'`): Token {
    if (!this.is(text)) this.fail(this.peek(), expected);
    return this.next();
  }
  private mark<T extends object>(node: T, start: number): T {
    const prev = this.toks[this.i - 1];
    this.spans.set(node, { start, end: prev ? prev.end : start });
    return node;
  }
  private enter(t: Token): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      throw new Failure(
        queryError(`nesting deeper than ${MAX_NESTING_DEPTH} levels at ${t.start}: simplify the query`, t.start, t.end),
      );
    }
  }

  statement(): Query {
    const start = this.peek().start;
    if (this.is('drift')) {
      this.next();
      this.expect('from');
      const from = this.time();
      this.expect('to');
      const to = this.time();
      if (this.peek().kind !== 'eof') this.fail(this.peek(), 'end of query (a drift statement takes no stages)');
      return this.mark(Queries.drift(from, to), start);
    }
    // The documented example `sum(attr.cost_usd) by attr.model` with no predicate: a statement may open with a stage, and its
    // predicate is then `true`. No stage keyword is a field name, so this is unambiguous.
    const stages: Stage[] = [];
    let predicate: Predicate;
    if (this.isStageStart()) {
      predicate = this.mark(Predicates.bool(true), start);
      stages.push(this.stage());
    } else predicate = this.predicate();
    while (this.is('|')) {
      this.next();
      stages.push(this.stage());
    }
    if (this.peek().kind !== 'eof') this.fail(this.peek(), "'|', 'and', 'or' or end of query");
    return this.mark(Queries.logs(predicate, stages), start);
  }

  private predicate(): Predicate {
    const start = this.peek().start;
    const first = this.andExpr();
    if (!this.is('or') && !this.is('||')) return first;
    const ops = [first];
    while (this.is('or') || this.is('||')) {
      this.next();
      ops.push(this.andExpr());
    }
    return this.mark(Predicates.or(ops), start);
  }

  private andExpr(): Predicate {
    const start = this.peek().start;
    const first = this.unary();
    if (!this.is('and') && !this.is('&&')) return first;
    const ops = [first];
    while (this.is('and') || this.is('&&')) {
      this.next();
      ops.push(this.unary());
    }
    return this.mark(Predicates.and(ops), start);
  }

  private unary(): Predicate {
    const t = this.peek();
    if (this.is('not') || this.is('!')) {
      this.enter(t);
      this.next();
      const operand = this.primary();
      this.depth--;
      return this.mark(Predicates.not(operand), t.start);
    }
    return this.primary();
  }

  private primary(): Predicate {
    const t = this.peek();
    const start = t.start;
    if (this.is('(')) {
      this.enter(t);
      this.next();
      const p = this.predicate();
      this.expect(')', "')'");
      this.depth--;
      return p;
    }
    if (t.kind === 'ident') {
      if (t.text === 'true' || t.text === 'false') {
        this.next();
        return this.mark(Predicates.bool(t.text === 'true'), start);
      }
      if (t.text === 'resolves_to' && this.is('(', 1)) {
        this.next();
        this.next();
        const id = this.integer('a template id', U64_MAX);
        this.expect(')');
        return this.mark(Predicates.resolvesTo(id), start);
      }
      if (STR_FNS.includes(t.text) && this.is('(', 1)) {
        this.next();
        this.next();
        const path = this.path();
        this.expect(',');
        const s = this.peek();
        if (s.kind !== 'string') this.fail(s, 'a string');
        this.next();
        this.expect(')');
        return this.mark(Predicates.strCall(t.text as StrFn, path, s.str ?? ''), start);
      }
      if (t.text === 'severity') {
        this.next();
        const op = this.peek();
        if (!(op.kind === 'sym' && ORD_OPS.includes(op.text))) {
          this.fail(op, 'an ordering operator (==, !=, <, <=, >, >=) after severity');
        }
        this.next();
        const v = this.peek();
        if (v.kind === 'ident' && isSeverityName(v.text)) {
          this.next();
          const name = v.text.toLowerCase() as SeverityName;
          return this.mark(Predicates.severity(op.text as OrdOp, { kind: 'name', name }), start);
        }
        if (v.kind === 'int') {
          const value = this.integer('a severity number', 255n);
          return this.mark(Predicates.severity(op.text as OrdOp, { kind: 'number', value: Number(value) }), start);
        }
        this.fail(v, 'a severity name (trace, debug, info, warn, error, fatal) or a number 0-255');
      }
      if (this.isPathStart()) {
        const path = this.path();
        const op = this.peek();
        if (!(op.kind === 'sym' && CMP_OPS.includes(op.text))) {
          this.fail(op, 'a comparison operator (==, !=, <, <=, >, >=, =~, !~)');
        }
        this.next();
        const value = this.literal();
        return this.mark(Predicates.compare(path, op.text as CmpOp, value), start);
      }
    }
    return this.fail(t, "a field, an attribute path, a function call, true, false or '('");
  }

  private isStageStart(): boolean {
    const t = this.peek();
    if (t.kind !== 'ident') return false;
    if (['range', 'sum', 'min', 'max', 'avg'].includes(t.text)) return this.is('(', 1);
    return ['count', 'limit', 'sort', 'project', 'render'].includes(t.text);
  }

  private isPathStart(): boolean {
    const t = this.peek();
    return (
      t.kind === 'ident' &&
      ((FIELD_NAMES as readonly string[]).includes(t.text) || t.text === 'resource' || t.text === 'attr')
    );
  }

  private path(): Path {
    const t = this.peek();
    if (t.kind === 'ident' && (t.text === 'resource' || t.text === 'attr')) {
      const scope = t.text;
      this.next();
      if (this.is('[')) {
        this.next();
        const s = this.peek();
        if (s.kind !== 'string') this.fail(s, 'a quoted attribute key');
        if (s.str === '') {
          throw new Failure(queryError(`empty attribute key at ${s.start}`, s.start, s.end));
        }
        this.next();
        this.expect(']');
        return this.mark(Paths.attr(scope, s.str ?? ''), t.start);
      }
      if (!this.is('.')) this.fail(this.peek(), `'.' or '[' after ${scope}`);
      const parts: string[] = [];
      while (this.is('.')) {
        this.next();
        const seg = this.peek();
        if (seg.kind !== 'ident') this.fail(seg, `an attribute key segment (use ${scope}["…"] for other keys)`);
        this.next();
        parts.push(seg.text);
      }
      return this.mark(Paths.attr(scope, parts.join('.')), t.start);
    }
    if (t.kind === 'ident' && (FIELD_NAMES as readonly string[]).includes(t.text)) {
      this.next();
      return this.mark(Paths.field(t.text as FieldName), t.start);
    }
    return this.fail(t, 'a field or an attribute path (resource.… or attr.…)');
  }

  private integer(what: string, max: bigint): bigint {
    const t = this.peek();
    if (t.kind !== 'int') this.fail(t, what);
    const v = BigInt(t.text);
    if (v > max) {
      throw new Failure(queryError(`${what} out of range at ${t.start}: the largest is ${max}`, t.start, t.end));
    }
    this.next();
    return v;
  }

  private literal(): Literal {
    const t = this.peek();
    const start = t.start;
    let neg = false;
    if (this.is('-') && (this.peek(1).kind === 'int' || this.peek(1).kind === 'float')) {
      neg = true;
      this.next();
    }
    const v = this.peek();
    let lit: Literal | undefined;
    switch (v.kind) {
      case 'string':
        if (!neg) lit = { kind: 'string', value: v.str ?? '' };
        break;
      case 'int':
        lit = { kind: 'int', value: neg ? -BigInt(v.text) : BigInt(v.text) };
        break;
      case 'float': {
        const x = Number(v.text);
        if (!Number.isFinite(x)) {
          throw new Failure(queryError(`number out of range at ${v.start}`, v.start, v.end));
        }
        lit = { kind: 'float', value: neg ? -x : x };
        break;
      }
      case 'duration':
        if (!neg) lit = { kind: 'duration', ns: v.ns ?? 0n };
        break;
      case 'timestamp':
        if (!neg) lit = { kind: 'timestamp', ns: v.ns ?? 0n };
        break;
      case 'ident':
        if (!neg && (v.text === 'true' || v.text === 'false')) lit = { kind: 'bool', value: v.text === 'true' };
        else if (!neg && v.text === 'null') lit = { kind: 'null' };
        break;
      default:
        break;
    }
    if (!lit) return this.fail(v, 'a literal (string, number, true, false, null, duration or timestamp)');
    this.next();
    return this.mark(Object.freeze(lit), start);
  }

  private time(): TimeSpec {
    const t = this.peek();
    if (this.is('now')) {
      this.next();
      if (this.is('-') || this.is('+')) {
        const m = this.peek();
        throw new Failure(
          queryError(
            `unexpected token '${m.text}' at ${m.start}: relative times are written -1h, not now-1h`,
            m.start,
            m.end,
          ),
        );
      }
      return this.mark(Object.freeze({ kind: 'now' }), t.start);
    }
    if (t.kind === 'timestamp') {
      this.next();
      return this.mark(Object.freeze({ kind: 'absolute', ns: t.ns ?? 0n }), t.start);
    }
    let neg = false;
    if (this.is('-')) {
      neg = true;
      this.next();
    }
    const d = this.peek();
    if (d.kind !== 'duration')
      this.fail(d, neg ? 'a duration like 15m' : 'a time (now, -15m or an RFC 3339 timestamp)');
    this.next();
    const ns = d.ns ?? 0n;
    return this.mark(Object.freeze({ kind: 'relative', offsetNs: neg ? -ns : ns }), t.start);
  }

  private stage(): Stage {
    const t = this.peek();
    const start = t.start;
    if (t.kind !== 'ident')
      return this.fail(t, 'a stage (range, limit, count, sum, min, max, avg, sort, project, render)');
    switch (t.text) {
      case 'range': {
        this.next();
        this.expect('(');
        const from = this.time();
        this.expect(',');
        const to = this.time();
        this.expect(')');
        return this.mark(Stages.range(from, to), start);
      }
      case 'limit': {
        this.next();
        return this.mark(Stages.limit(this.integer('a row count', U64_MAX)), start);
      }
      case 'count': {
        this.next();
        return this.mark(Stages.count(this.byList()), start);
      }
      case 'sum':
      case 'min':
      case 'max':
      case 'avg': {
        this.next();
        this.expect('(');
        const path = this.path();
        this.expect(')');
        return this.mark(Stages.aggregate(t.text as AggFn, path, this.byList()), start);
      }
      case 'sort': {
        this.next();
        const k = this.peek();
        if (k.kind !== 'ident') this.fail(k, 'a sort key (a field or an aggregate output such as count)');
        this.next();
        let descending = false;
        if (this.is('asc') || this.is('desc')) descending = this.next().text === 'desc';
        return this.mark(Stages.sort(k.text, descending), start);
      }
      case 'project': {
        this.next();
        const paths = [this.path()];
        while (this.is(',')) {
          this.next();
          paths.push(this.path());
        }
        return this.mark(Stages.project(paths), start);
      }
      case 'render':
        this.next();
        return this.mark(Stages.render(), start);
      default:
        return this.fail(t, 'a stage (range, limit, count, sum, min, max, avg, sort, project, render)');
    }
  }

  private byList(): readonly GroupTerm[] {
    if (!this.is('by')) return [];
    this.next();
    const terms = [this.groupTerm()];
    while (this.is(',')) {
      this.next();
      terms.push(this.groupTerm());
    }
    return terms;
  }

  private groupTerm(): GroupTerm {
    const t = this.peek();
    if (this.is('param') && this.is('(', 1)) {
      this.next();
      this.next();
      const index = Number(this.integer('a param slot (0-4294967295)', U32_MAX));
      this.expect(')');
      return this.mark(Object.freeze({ kind: 'param', index }), t.start);
    }
    if (this.is('bucket') && this.is('(', 1)) {
      this.next();
      this.next();
      const d = this.peek();
      if (d.kind !== 'duration') this.fail(d, 'a bucket width like 5m');
      this.next();
      this.expect(')');
      return this.mark(Object.freeze({ kind: 'bucket', widthNs: d.ns ?? 0n }), t.start);
    }
    if (!this.isPathStart()) this.fail(t, 'a group term (a field, an attribute path, param(n) or bucket(duration))');
    const path = this.path();
    return this.mark(Object.freeze({ kind: 'path', path }), t.start);
  }

  /** Parses exactly one time (for the structured form's `from`/`to` strings). */
  timeOnly(): TimeSpec {
    const ts = this.time();
    if (this.peek().kind !== 'eof') this.fail(this.peek(), 'end of time');
    return ts;
  }
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function run<T>(text: string, f: (p: Parser) => T): Result<{ value: T; spans: ReadonlyMap<object, Span> }, QueryError> {
  if (typeof text !== 'string') return err(queryError('query must be a string'));
  const bytes = utf8Length(text);
  if (bytes > MAX_QUERY_BYTES) {
    return err(queryError(`query is ${bytes} bytes; the limit is ${MAX_QUERY_BYTES} bytes`, 0, text.length));
  }
  const toks = lex(text);
  if (!toks.ok) return toks;
  const p = new Parser(toks.value);
  try {
    return ok({ value: f(p), spans: p.spans });
  } catch (e) {
    if (e instanceof Failure) return err(e.error);
    throw e;
  }
}

/**
 * Parses query text into IR without semantic validation (use {@link parseQuery} for the full check).
 * Never throws for bad input.
 */
export function parseQuerySyntax(text: string): Result<ParsedQuery, QueryError> {
  const r = run(text, (p) => p.statement());
  return r.ok ? ok({ query: r.value.value, spans: r.value.spans }) : r;
}

/** Parses one `time` (`now`, `-15m`, `2026-06-01T00:00:00Z`), as the structured form's drift/range bounds use. */
export function parseTimeSpec(text: string): Result<TimeSpec, QueryError> {
  const r = run(text, (p) => p.timeOnly());
  return r.ok ? ok(r.value.value) : r;
}
