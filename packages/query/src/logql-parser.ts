/**
 * @module logql-parser
 * Parses the LogQL subset of docs/grafana.md into {@link LogqlExpr}. Valid LogQL outside the subset is refused
 * as `unsupported` with the construct named (`the range aggregation avg_over_time is not supported`), so a
 * Grafana user sees why, rather than an answer to a different question. Never throws for bad input.
 */
import { err, ok, type Result } from '@sluice/core';
import type {
  LogqlError,
  LogqlExpr,
  LogqlLogExpr,
  LogqlMatcher,
  LogqlMetricExpr,
  LogqlRangeFn,
  LogqlStage,
  LogqlVectorAgg,
} from './logql-ast.js';
import { lexLogql, parseLogqlDuration, type LogqlToken } from './logql-lexer.js';

/** Longest LogQL text accepted (bytes of UTF-16), as the DSL's own bound. */
export const MAX_LOGQL_CHARS = 16 * 1024;

const RANGE_FNS = new Set(['count_over_time', 'rate', 'bytes_over_time', 'bytes_rate']);
const OTHER_RANGE_FNS = new Set([
  'avg_over_time',
  'sum_over_time',
  'min_over_time',
  'max_over_time',
  'stddev_over_time',
  'stdvar_over_time',
  'quantile_over_time',
  'first_over_time',
  'last_over_time',
  'absent_over_time',
  'rate_counter',
]);
const VECTOR_AGGS = new Set(['sum', 'count', 'topk']);
const OTHER_VECTOR_AGGS = new Set([
  'avg',
  'min',
  'max',
  'stddev',
  'stdvar',
  'bottomk',
  'sort',
  'sort_desc',
  'approx_topk',
]);
const OTHER_FUNCTIONS = new Set([
  'label_replace',
  'absent',
  'sum_over_time',
  'scalar',
  'time',
  'ceil',
  'floor',
  'round',
]);
const UNSUPPORTED_STAGES = new Set([
  'line_format',
  'label_format',
  'pattern',
  'regexp',
  'unpack',
  'unwrap',
  'decolorize',
  'keep',
  'distinct',
]);
const ERROR_LABELS = new Set(['__error__', '__error_details__']);
const LABEL_FILTER_OPS = new Set(['=', '==', '!=', '=~', '!~', '>', '>=', '<', '<=']);
const MATCHER_OPS = new Set(['=', '!=', '=~', '!~']);

class Refusal {
  constructor(readonly error: LogqlError) {}
}

type LabelFilterOp = Extract<LogqlStage, { kind: 'label_filter' }>['op'];

const syntax = (message: string): Refusal => new Refusal({ kind: 'syntax', message });
const unsupported = (message: string): Refusal => new Refusal({ kind: 'unsupported', message });

class Parser {
  private i = 0;
  constructor(private readonly tokens: readonly LogqlToken[]) {}

  private peek(offset = 0): LogqlToken {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }
  private next(): LogqlToken {
    const t = this.peek();
    if (t.kind !== 'end') this.i++;
    return t;
  }
  private isOp(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'op' && t.text === text;
  }
  private isIdent(text: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'ident' && t.text === text;
  }
  private expectOp(text: string, what: string): void {
    const t = this.next();
    if (t.kind !== 'op' || t.text !== text)
      throw syntax(`expected '${text}' ${what} at ${t.pos}, found ${describe(t)}`);
  }
  private expectString(what: string): string {
    const t = this.next();
    if (t.kind !== 'string') throw syntax(`expected a quoted string ${what} at ${t.pos}, found ${describe(t)}`);
    return t.text;
  }

  query(): LogqlExpr {
    const expr = this.expr();
    const t = this.peek();
    if (t.kind !== 'end') throw syntax(`unexpected ${describe(t)} at ${t.pos}`);
    return expr;
  }

  private expr(): LogqlExpr {
    const left = this.operand();
    if (this.peek().kind === 'op' && ['+', '-', '*', '/', '%', '^'].includes(this.peek().text)) {
      return this.arithmetic(left);
    }
    for (const word of ['and', 'or', 'unless']) {
      if (this.isIdent(word)) throw unsupported(`the set operator ${word} between queries is not supported`);
    }
    for (const cmp of ['==', '!=', '>', '>=', '<', '<=']) {
      if (this.isOp(cmp)) throw unsupported(`comparison operators between metric queries are not supported`);
    }
    return left;
  }

  /** `+ - * /` between constants (left to right, `* /` first); anything else is unsupported. */
  private arithmetic(first: LogqlExpr): LogqlExpr {
    const values: number[] = [];
    const ops: string[] = [];
    const constant = (e: LogqlExpr): number => {
      if (e.kind !== 'constant') throw unsupported('binary operations between metric queries are not supported');
      return e.value;
    };
    values.push(constant(first));
    while (this.peek().kind === 'op' && ['+', '-', '*', '/', '%', '^'].includes(this.peek().text)) {
      const op = this.next().text;
      if (op === '%' || op === '^') throw unsupported(`the operator ${op} is not supported`);
      if (this.isIdent('bool')) throw unsupported('the bool modifier is not supported');
      ops.push(op);
      values.push(constant(this.operand()));
    }
    // * and / bind tighter than + and -.
    const terms: number[] = [values[0]!];
    const signs: string[] = [];
    ops.forEach((op, k) => {
      const v = values[k + 1]!;
      if (op === '*') terms[terms.length - 1]! *= v;
      else if (op === '/') terms[terms.length - 1]! /= v;
      else {
        signs.push(op);
        terms.push(v);
      }
    });
    let value = terms[0]!;
    signs.forEach((s, k) => (value = s === '+' ? value + terms[k + 1]! : value - terms[k + 1]!));
    return { kind: 'constant', value };
  }

  private operand(): LogqlExpr {
    const t = this.peek();
    if (t.kind === 'op' && t.text === '{') return this.logExpr();
    if (t.kind === 'number') {
      this.next();
      return { kind: 'constant', value: Number(t.text) };
    }
    if (t.kind === 'op' && t.text === '(') {
      this.next();
      const inner = this.expr();
      this.expectOp(')', 'to close the parenthesis');
      return inner;
    }
    if (t.kind === 'op' && t.text === '-' && this.peek(1).kind === 'number') {
      this.next();
      return { kind: 'constant', value: -Number(this.next().text) };
    }
    if (t.kind !== 'ident')
      throw syntax(`expected a stream selector or a metric query at ${t.pos}, found ${describe(t)}`);
    if (t.text === 'vector') {
      this.next();
      this.expectOp('(', 'after vector');
      const n = this.next();
      if (n.kind !== 'number') throw syntax(`vector() takes a number, found ${describe(n)} at ${n.pos}`);
      this.expectOp(')', 'to close vector(');
      return { kind: 'constant', value: Number(n.text) };
    }
    if (RANGE_FNS.has(t.text)) return this.rangeAgg();
    if (OTHER_RANGE_FNS.has(t.text)) throw unsupported(`the range aggregation ${t.text} is not supported`);
    if (VECTOR_AGGS.has(t.text)) return this.vectorAgg();
    if (OTHER_VECTOR_AGGS.has(t.text)) throw unsupported(`the aggregation ${t.text} is not supported`);
    if (OTHER_FUNCTIONS.has(t.text)) throw unsupported(`the function ${t.text} is not supported`);
    throw syntax(`unknown function or keyword ${JSON.stringify(t.text)} at ${t.pos}`);
  }

  private rangeAgg(): LogqlMetricExpr {
    const fn = this.next().text as LogqlRangeFn;
    this.expectOp('(', `after ${fn}`);
    if (!this.isOp('{')) throw syntax(`${fn}() takes a log query with a range, at ${this.peek().pos}`);
    const log = this.logExpr();
    this.expectOp('[', `for the range of ${fn}`);
    const r = this.next();
    const rangeNs = r.kind === 'unit' ? parseLogqlDuration(r.text) : null;
    if (rangeNs === null || rangeNs <= 0n)
      throw syntax(`expected a duration such as 5m for the range, found ${describe(r)}`);
    if (this.isOp(':')) throw unsupported('subqueries are not supported');
    this.expectOp(']', 'to close the range');
    if (this.isIdent('offset')) throw unsupported('the offset modifier is not supported');
    if (this.isOp('|')) throw unsupported('pipeline stages after the range are not supported; put them before it');
    this.expectOp(')', `to close ${fn}(`);
    return { kind: 'range_agg', fn, log, rangeNs };
  }

  private grouping(): string[] | null {
    if (this.isIdent('without')) throw unsupported('grouping with without (…) is not supported; use by (…)');
    if (!this.isIdent('by')) return null;
    this.next();
    this.expectOp('(', 'after by');
    const labels: string[] = [];
    while (!this.isOp(')')) {
      const l = this.next();
      if (l.kind !== 'ident') throw syntax(`expected a label name in by (…) at ${l.pos}, found ${describe(l)}`);
      labels.push(l.text);
      if (!this.isOp(')')) this.expectOp(',', 'between label names');
    }
    this.next();
    return labels;
  }

  private vectorAgg(): LogqlVectorAgg {
    const op = this.next().text as 'sum' | 'count' | 'topk';
    let by = this.grouping();
    this.expectOp('(', `after ${op}`);
    let k: number | null = null;
    if (op === 'topk') {
      const n = this.next();
      if (n.kind !== 'number' || !/^[0-9]+$/.test(n.text) || Number(n.text) < 1) {
        throw syntax(`topk takes a positive integer first, found ${describe(n)} at ${n.pos}`);
      }
      k = Number(n.text);
      this.expectOp(',', 'after the k of topk');
    }
    const inner = this.expr();
    if (inner.kind === 'logs') throw syntax(`${op}() takes a metric query, not a log query`);
    if (inner.kind === 'constant') throw unsupported(`${op}() over a constant is not supported`);
    this.expectOp(')', `to close ${op}(`);
    const after = this.grouping();
    if (after !== null) {
      if (by !== null) throw syntax(`${op} has two by (…) clauses`);
      by = after;
    }
    return { kind: 'vector_agg', op, by: by ?? [], k, inner };
  }

  private logExpr(): LogqlLogExpr {
    this.expectOp('{', 'to open the stream selector');
    const matchers: LogqlMatcher[] = [];
    while (!this.isOp('}')) {
      const name = this.next();
      if (name.kind !== 'ident') throw syntax(`expected a label name at ${name.pos}, found ${describe(name)}`);
      const op = this.next();
      if (op.kind !== 'op' || !MATCHER_OPS.has(op.text)) {
        throw syntax(`expected =, !=, =~ or !~ after ${name.text} at ${op.pos}, found ${describe(op)}`);
      }
      matchers.push({
        name: name.text,
        op: op.text as LogqlMatcher['op'],
        value: this.expectString('as the label value'),
      });
      if (!this.isOp('}')) this.expectOp(',', 'between matchers');
    }
    this.next();
    const stages: LogqlStage[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'op') break;
      if (t.text === '|=' || t.text === '|~' || t.text === '!=' || t.text === '!~') {
        this.next();
        if (this.isIdent('ip')) throw unsupported('the ip() line filter is not supported');
        const value = this.expectString(`after the line filter ${t.text}`);
        if (this.isIdent('or')) throw unsupported('line filters joined with or are not supported');
        stages.push({ kind: 'line_filter', op: t.text, value });
        continue;
      }
      if (t.text !== '|') break;
      this.next();
      stages.push(this.pipeStage());
    }
    return { kind: 'logs', matchers, stages };
  }

  private pipeStage(): LogqlStage {
    const t = this.next();
    if (t.kind === 'op' && t.text === '(')
      throw unsupported('parenthesised label filter expressions are not supported');
    if (t.kind !== 'ident') throw syntax(`expected a pipeline stage after | at ${t.pos}, found ${describe(t)}`);
    if (t.text === 'json' || t.text === 'logfmt') {
      const n = this.peek();
      if (n.kind === 'ident' || n.kind === 'string' || (n.kind === 'op' && n.text === '-')) {
        throw unsupported(`parameters of the ${t.text} parser are not supported`);
      }
      return { kind: 'parser', parser: t.text };
    }
    if (t.text === 'drop') {
      const names: string[] = [];
      do {
        const l = this.next();
        if (l.kind !== 'ident') throw syntax(`expected a label name after drop at ${l.pos}`);
        if (this.isOp('=') || this.isOp('=~') || this.isOp('!=') || this.isOp('!~')) {
          throw unsupported('drop with a matcher is not supported');
        }
        names.push(l.text);
      } while (this.isOp(',') && this.next());
      if (names.every((n) => ERROR_LABELS.has(n))) return { kind: 'drop_error' };
      throw unsupported(`the drop stage is not supported (only drop __error__, __error_details__)`);
    }
    if (UNSUPPORTED_STAGES.has(t.text)) throw unsupported(`the ${t.text} stage is not supported`);
    const op = this.next();
    if (op.kind !== 'op' || !LABEL_FILTER_OPS.has(op.text)) {
      throw syntax(`expected a comparison after the label ${t.text} at ${op.pos}, found ${describe(op)}`);
    }
    const v = this.next();
    let value: Extract<LogqlStage, { kind: 'label_filter' }>['value'];
    if (v.kind === 'string') value = { kind: 'string', value: v.text };
    else if (v.kind === 'number') value = { kind: 'number', value: Number(v.text) };
    else if (v.kind === 'op' && v.text === '-' && this.peek().kind === 'number') {
      value = { kind: 'number', value: -Number(this.next().text) };
    } else if (v.kind === 'unit') throw unsupported('label filters on durations or byte sizes are not supported');
    else if (v.kind === 'ident' && v.text === 'ip') throw unsupported('the ip() label filter is not supported');
    else throw syntax(`expected a string or a number after ${t.text} ${op.text} at ${v.pos}, found ${describe(v)}`);
    if ((op.text === '=~' || op.text === '!~') && value.kind !== 'string') throw syntax(`${op.text} takes a string`);
    if (this.isIdent('and') || this.isIdent('or') || this.isOp(',')) {
      throw unsupported('label filters joined with and/or/, are not supported; chain them with |');
    }
    return { kind: 'label_filter', name: t.text, op: op.text as LabelFilterOp, value };
  }
}

function describe(t: LogqlToken): string {
  return t.kind === 'end' ? 'the end of the query' : JSON.stringify(t.text);
}

/** Parses LogQL text into the subset's syntax tree. */
export function parseLogql(text: string): Result<LogqlExpr, LogqlError> {
  if (text.length > MAX_LOGQL_CHARS) {
    return err({ kind: 'syntax', message: `query is longer than ${MAX_LOGQL_CHARS} characters` });
  }
  if (text.trim() === '') return err({ kind: 'syntax', message: 'query is empty' });
  const tokens = lexLogql(text);
  if (!tokens.ok) return err({ kind: 'syntax', message: tokens.error });
  try {
    return ok(new Parser(tokens.value).query());
  } catch (e) {
    if (e instanceof Refusal) return err(e.error);
    throw e;
  }
}
