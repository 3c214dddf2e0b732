/**
 * @module predicate-eval
 * Compiles a predicate into a row test over decoded columns (packages/query/README.md): severity bands and floors,
 * built-in fields, lazy attribute lookups, string functions without regex (`includes`/`startsWith`/`endsWith`),
 * bounded, linear-time RE2 regexes for `matches`/`=~`/`!~`. NULL or missing never matches; `!=` and `!~` require
 * presence.
 */
import type { CmpOp, LinearRegex, Literal, Path, Predicate, SeverityNode } from '@sluice/query';
import { compileLinearRegex, severityBand } from '@sluice/query';
import { toHex } from '@sluice/core';
import { byteNeedle, searchRows } from './decode/byte-search.js';
import { SearchOnlyStrings } from './decode/search-only.js';
import {
  DictStringVector,
  FixedBytesVector,
  PlainStringVector,
  cellReader,
  type ColumnData,
} from './decode/string-vector.js';
import type { AttrReader } from './attr-value.js';
import type { AttrValue } from './attr-value.js';
import { isPromotedService, pathColumn, pathName } from './fields.js';
import { QueryAbort } from './failures.js';

// The pattern bound lives with the RE2 compiler in @sluice/query; re-exported here for the engine's callers.
export { MAX_REGEX_PATTERN_BYTES } from '@sluice/query';

/** Decoded columns of one row group. */
export type Columns = Readonly<Record<string, ColumnData>>;

/** A row test bound to one row group's columns. */
export type RowTest = (i: number) => boolean;

/** A compiled predicate: the columns it reads and a binder per row group. */
export interface CompiledPredicate {
  readonly columns: ReadonlySet<string>;
  /**
   * The columns it reads only through one byte search (`contains` / `starts_with` / `ends_with` on a needle the
   * byte path answers): a scan that needs nothing else of them may hand it a {@link SearchOnlyStrings}.
   */
  readonly searchOnly: ReadonlySet<string>;
  /** True for the constant `true` predicate (every row matches; no columns needed). */
  readonly always: boolean;
  bind(cols: Columns, attrs: AttrReader): RowTest;
}

type Scalar = string | bigint | number | boolean;
type Getter = (cols: Columns, attrs: AttrReader) => (i: number) => Scalar | null | AttrValue | undefined;

function invalid(message: string): never {
  throw new QueryAbort({ kind: 'invalid_query', message });
}

/**
 * Compiles a regex pattern as RE2 syntax, for linear-time matching with the literal pre-filter in front
 * (docs/design/query-governance.md, "Regular expressions run in linear time"); refused patterns are `invalid_query`.
 */
export function compileRegex(pattern: string): LinearRegex {
  const compiled = compileLinearRegex(pattern);
  return compiled.ok ? compiled.value : invalid(compiled.error.message);
}

function col(cols: Columns, name: string): ColumnData {
  const c = cols[name];
  if (c === undefined) throw new Error(`column ${name} not read`);
  return c;
}

/** Row value of a built-in field (typed for comparison), `null` when absent. */
function fieldGetter(p: Path): Getter {
  if (p.kind === 'attr' && !isPromotedService(p)) {
    const name = pathColumn(p);
    const key = p.key;
    return (cols, attrs) => {
      const c = col(cols, name);
      return (i) => attrs.lookup(c, i, key);
    };
  }
  const name = pathColumn(p);
  const field = p.kind === 'field' ? p.name : 'service';
  switch (field) {
    case 'ts':
    case 'observed_ts':
    case 'template_id':
      return (cols) => {
        const c = cellReader(col(cols, name));
        return (i) => {
          const v = c(i);
          return typeof v === 'bigint' ? BigInt.asUintN(64, v) : typeof v === 'number' ? BigInt(v) : null;
        };
      };
    case 'trace_id':
    case 'span_id':
      return (cols) => {
        const c = cellReader(col(cols, name));
        return (i) => {
          const v = c(i);
          return v instanceof Uint8Array && v.length > 0 ? toHex(v) : null;
        };
      };
    default:
      return (cols) => {
        const c = cellReader(col(cols, name));
        return (i) => {
          const v = c(i);
          return v === null || v === undefined ? null : (v as Scalar);
        };
      };
  }
}

/** The literal as the field's value type. */
function fieldLiteral(p: Path, lit: Literal): Scalar | undefined {
  const field = p.kind === 'field' ? p.name : isPromotedService(p) ? 'service' : undefined;
  if (field === undefined) return undefined;
  switch (field) {
    case 'ts':
    case 'observed_ts':
    case 'template_id':
      return lit.kind === 'int'
        ? lit.value
        : lit.kind === 'timestamp'
          ? lit.ns
          : lit.kind === 'duration'
            ? lit.ns
            : undefined;
    case 'trace_id':
    case 'span_id':
      return lit.kind === 'string' ? lit.value.toLowerCase() : undefined;
    case 'flags':
      return lit.kind === 'int' ? Number(lit.value) : undefined;
    case 'confidence':
      return lit.kind === 'int'
        ? Math.fround(Number(lit.value))
        : lit.kind === 'float'
          ? Math.fround(lit.value)
          : undefined;
    case 'lossy':
      return lit.kind === 'bool' ? lit.value : undefined;
    default:
      return lit.kind === 'string' ? lit.value : undefined;
  }
}

function cmpScalar(a: Scalar, b: Scalar): number | undefined {
  if (typeof a !== typeof b) return undefined;
  if (a === b) return 0;
  if (typeof a === 'number' && Number.isNaN(a)) return undefined;
  return (a as string | number | bigint) < (b as string | number | bigint) ? -1 : 1;
}

/** Compares an attribute value with a literal: strings with strings, numbers (int/double) with numbers, bools. */
function cmpAttr(v: AttrValue, lit: Literal): number | undefined {
  switch (lit.kind) {
    case 'string':
      return v.t === 's' ? cmpScalar(v.v, lit.value) : undefined;
    case 'bool':
      return v.t === 'b' ? cmpScalar(v.v, lit.value) : undefined;
    case 'int':
      if (v.t === 'i') return cmpScalar(v.v, lit.value);
      if (v.t === 'd') return Number.isNaN(v.v) ? undefined : cmpScalar(v.v, Number(lit.value));
      return undefined;
    case 'float':
      if (v.t === 'i') return cmpScalar(Number(v.v), lit.value);
      if (v.t === 'd') return Number.isNaN(v.v) ? undefined : cmpScalar(v.v, lit.value);
      return undefined;
    default:
      return undefined;
  }
}

function applyOrd(op: CmpOp, c: number | undefined): boolean {
  switch (op) {
    case '==':
      return c === 0;
    case '!=':
      return c !== 0; // presence is checked by the caller; an incomparable type is "not equal"
    case '<':
      return c !== undefined && c < 0;
    case '<=':
      return c !== undefined && c <= 0;
    case '>':
      return c !== undefined && c > 0;
    case '>=':
      return c !== undefined && c >= 0;
    default:
      return false;
  }
}

function textOf(v: Scalar | AttrValue | null | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'object' && v !== null && v.t === 's') return v.v;
  return undefined;
}

/** The row test of a severity comparison (names: bands for ==/!=, floors for ordering; 0 passes floors). */
export function severityTest(node: SeverityNode): (s: number) => boolean {
  const lvl = node.level;
  if (lvl.kind === 'name' && (node.op === '==' || node.op === '!=')) {
    const { floor, ceil } = severityBand(lvl.name);
    return node.op === '==' ? (s) => s >= floor && s <= ceil : (s) => s < floor || s > ceil;
  }
  const t = lvl.kind === 'name' ? severityBand(lvl.name).floor : lvl.value;
  switch (node.op) {
    case '==':
      return (s) => s === t;
    case '!=':
      return (s) => s !== t;
    case '>':
      return t > 0 ? (s) => s > t || s === 0 : (s) => s > t;
    case '>=':
      return t > 0 ? (s) => s >= t || s === 0 : (s) => s >= t;
    case '<':
      return t > 0 ? (s) => s < t && s !== 0 : (s) => s < t;
    case '<=':
      return t > 0 ? (s) => s <= t && s !== 0 : (s) => s <= t;
  }
}

type Binder = (cols: Columns, attrs: AttrReader) => RowTest;

/** A path whose column holds the value itself (a built-in field or the promoted service), not an attribute list. */
function columnPath(p: Path): boolean {
  return p.kind === 'field' || isPromotedService(p);
}

/**
 * `==` / `!=` of a u64 column (read as unsigned, as the row path does) against a literal, on the two 32-bit
 * halves of each value: no BigInt per row.
 */
function u64EqualTest(vec: BigUint64Array | BigInt64Array, lit: bigint, equal: boolean): RowTest {
  if (lit < 0n || lit > 0xffffffffffffffffn || !LITTLE_ENDIAN) {
    const u = BigInt.asUintN(64, lit);
    const fits = lit === u;
    return (i) => (fits && BigInt.asUintN(64, vec[i] as bigint) === u) === equal;
  }
  const lo = Number(lit & 0xffffffffn);
  const hi = Number(lit >> 32n);
  const halves = new Uint32Array(vec.buffer, vec.byteOffset, vec.length * 2);
  return (i) => (halves[2 * i] === lo && halves[2 * i + 1] === hi) === equal;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * `id == "hex"` / `id != "hex"` over a fixed-width id column, on the bytes: the string path compares the row's
 * lower-case hex with the lower-cased literal, so a literal that is not `width` bytes of hex equals no row. NULL
 * rows never match either operator, as on the string path.
 */
function fixedEqualTest(vec: FixedBytesVector, lit: string, equal: boolean): RowTest {
  const w = vec.width;
  const want = lit.length === 2 * w && /^[0-9a-f]*$/.test(lit) ? Buffer.from(lit, 'hex') : undefined;
  const { bytes, present } = vec;
  if (want === undefined) return (i) => present[i] === 1 && !equal;
  return (i) => {
    if (present[i] !== 1) return false;
    const at = i * w;
    let same = true;
    for (let k = 0; k < w; k++)
      if (bytes[at + k] !== want[k]) {
        same = false;
        break;
      }
    return same === equal;
  };
}

/**
 * A string test over a dictionary column, evaluated once per dictionary entry and then looked up per row by
 * index (docs/design/query-engine.md, "Column-at-a-time evaluation"); NULL never matches.
 */
function dictTest(vec: DictStringVector, test: (s: string) => boolean): RowTest {
  const hit = new Uint8Array(vec.dict.length);
  for (let k = 0; k < hit.length; k++) hit[k] = test(vec.dict[k] as string) ? 1 : 0;
  const idx = vec.indices;
  return (i) => {
    const k = idx[i] as number;
    return k >= 0 && hit[k] === 1;
  };
}

/** The columns a predicate reads, and which uses are byte searches. */
class ColumnUses {
  readonly all = new Set<string>();
  readonly other = new Set<string>();
  readonly searches = new Map<string, number>();
  add(column: string, byteSearch = false): void {
    this.all.add(column);
    if (byteSearch) this.searches.set(column, (this.searches.get(column) ?? 0) + 1);
    else this.other.add(column);
  }
  /**
   * Columns read by exactly one byte search and nothing else. A search-only column decompresses its pages on each
   * search, so a column searched twice is decoded once and searched from its kept pages instead.
   */
  searchOnly(): Set<string> {
    return new Set([...this.all].filter((c) => !this.other.has(c) && this.searches.get(c) === 1));
  }
}

function compileNode(p: Predicate, columns: ColumnUses): Binder {
  switch (p.kind) {
    case 'bool': {
      const v = p.value;
      return () => () => v;
    }
    case 'and':
    case 'or': {
      const parts = p.operands.map((o) => compileNode(o, columns));
      const isAnd = p.kind === 'and';
      return (cols, attrs) => {
        const tests = parts.map((b) => b(cols, attrs));
        return isAnd
          ? (i) => {
              for (const t of tests) if (!t(i)) return false;
              return true;
            }
          : (i) => {
              for (const t of tests) if (t(i)) return true;
              return false;
            };
      };
    }
    case 'not': {
      const inner = compileNode(p.operand, columns);
      return (cols, attrs) => {
        const t = inner(cols, attrs);
        return (i) => !t(i);
      };
    }
    case 'severity': {
      columns.add(pathColumn({ kind: 'field', name: 'severity' }));
      const test = severityTest(p);
      return (cols) => {
        const c = cellReader(col(cols, pathColumn({ kind: 'field', name: 'severity' })));
        return (i) => {
          const s = c(i);
          return typeof s === 'number' && test(s);
        };
      };
    }
    case 'resolves_to':
      // No alias registry yet: the alias class of n is {n}.
      return compileNode(
        {
          kind: 'compare',
          path: { kind: 'field', name: 'template_id' },
          op: '==',
          value: { kind: 'int', value: p.templateId },
        },
        columns,
      );
    case 'str_call': {
      columns.add(pathColumn(p.path), p.fn !== 'matches' && columnPath(p.path) && byteNeedle(p.arg) !== undefined);
      const get = fieldGetter(p.path);
      const arg = p.arg;
      let match: (s: string) => boolean;
      switch (p.fn) {
        case 'contains':
          match = (s) => s.includes(arg);
          break;
        case 'starts_with':
          match = (s) => s.startsWith(arg);
          break;
        case 'ends_with':
          match = (s) => s.endsWith(arg);
          break;
        case 'matches': {
          const re = compileRegex(arg);
          match = (s) => re.test(s);
          break;
        }
      }
      const bytes = p.fn === 'matches' || !columnPath(p.path) ? undefined : byteNeedle(arg);
      const fn = p.fn;
      return (cols, attrs) => {
        const vec = columnPath(p.path) ? cols[pathColumn(p.path)] : undefined;
        if (vec instanceof DictStringVector) return dictTest(vec, match);
        if (vec instanceof SearchOnlyStrings && bytes !== undefined && fn !== 'matches') {
          const hits = vec.search(fn, bytes);
          return (i) => hits[i] === 1;
        }
        if (vec instanceof PlainStringVector && bytes !== undefined && fn !== 'matches') {
          const hits = searchRows(vec, fn, bytes);
          return (i) => hits[i] === 1;
        }
        const g = get(cols, attrs);
        return (i) => {
          const t = textOf(g(i));
          return t !== undefined && match(t);
        };
      };
    }
    case 'compare': {
      columns.add(pathColumn(p.path));
      const get = fieldGetter(p.path);
      const op = p.op;
      if (op === '=~' || op === '!~') {
        if (p.value.kind !== 'string') invalid(`${op} needs a string pattern`);
        const re = compileRegex(p.value.kind === 'string' ? p.value.value : '');
        const want = op === '=~';
        const path = p.path;
        return (cols, attrs) => {
          const vec = columnPath(path) ? cols[pathColumn(path)] : undefined;
          if (vec instanceof DictStringVector) return dictTest(vec, (t) => re.test(t) === want);
          const g = get(cols, attrs);
          return (i) => {
            const t = textOf(g(i));
            return t !== undefined && re.test(t) === want;
          };
        };
      }
      if (p.path.kind === 'attr' && !isPromotedService(p.path)) {
        const lit = p.value;
        return (cols, attrs) => {
          const g = get(cols, attrs);
          return (i) => {
            const v = g(i);
            if (v === undefined || v === null || typeof v !== 'object') return false;
            return applyOrd(op, cmpAttr(v, lit));
          };
        };
      }
      const lit = fieldLiteral(p.path, p.value);
      if (lit === undefined) invalid(`${pathName(p.path)} cannot be compared with a ${p.value.kind}`);
      const l = lit as Scalar;
      const path = p.path;
      return (cols, attrs) => {
        const vec = columnPath(path) ? cols[pathColumn(path)] : undefined;
        if (vec instanceof DictStringVector) return dictTest(vec, (t) => applyOrd(op, cmpScalar(t, l)));
        if (
          (op === '==' || op === '!=') &&
          typeof l === 'bigint' &&
          (vec instanceof BigUint64Array || vec instanceof BigInt64Array)
        )
          return u64EqualTest(vec, l, op === '==');
        if ((op === '==' || op === '!=') && typeof l === 'string' && vec instanceof FixedBytesVector)
          return fixedEqualTest(vec, l, op === '==');
        const g = get(cols, attrs);
        return (i) => {
          const v = g(i);
          if (v === null || v === undefined || typeof v === 'object') return false;
          return applyOrd(op, cmpScalar(v, l));
        };
      };
    }
  }
}

/** Compiles `p`; throws an `invalid_query` {@link QueryAbort} for a pattern the engine refuses. */
export function compilePredicate(p: Predicate): CompiledPredicate {
  const columns = new ColumnUses();
  const binder = compileNode(p, columns);
  return {
    columns: columns.all,
    searchOnly: columns.searchOnly(),
    always: p.kind === 'bool' && p.value,
    bind: binder,
  };
}
