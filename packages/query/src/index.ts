/**
 * @module @sluice/query
 * The query front end: the text DSL and the structured JSON form parse to one immutable IR, which is validated,
 * printed canonically, and resolved to a time window. The planner and executor build on this IR.
 */
export type { QueryError } from './errors.js';
export { MAX_QUERY_BYTES, MAX_NESTING_DEPTH, queryError } from './errors.js';
export type {
  AggFn,
  AggregateStage,
  AndNode,
  AttrPath,
  BoolNode,
  CmpOp,
  CompareNode,
  CountStage,
  DriftQuery,
  FieldName,
  FieldPath,
  GroupTerm,
  LimitStage,
  Literal,
  LogQuery,
  NotNode,
  OrdOp,
  OrNode,
  Path,
  Predicate,
  PredicateVisitor,
  ProjectStage,
  Query,
  RangeStage,
  RenderStage,
  ResolvesToNode,
  ScalarField,
  SeverityLevel,
  SeverityName,
  SeverityNode,
  SortStage,
  Stage,
  StrCallNode,
  StrFn,
  TimeSpec,
} from './ir.js';
export {
  FIELD_NAMES,
  Paths,
  Predicates,
  Queries,
  SCALAR_FIELDS,
  AGGREGATE_ONLY_FIELDS,
  SEVERITY_NAMES,
  Stages,
  isSeverityName,
  severityBand,
  visitPredicate,
} from './ir.js';
export type { Token, TokenKind } from './lexer.js';
export { lex } from './lexer.js';
export type { ParsedQuery, Span } from './parser.js';
export { parseQuerySyntax, parseTimeSpec } from './parser.js';
export { parseQuery } from './parse-query.js';
export { pinnedTemplateId, topLevelConjuncts, validateQuery } from './validate.js';
export type { LiteralBranch } from './regex-literal.js';
export type { CompileRegexOptions, LinearRegex, RegexError } from './regex.js';
export { MAX_REGEX_PATTERN_BYTES, compileLinearRegex } from './regex.js';
export {
  printFloat,
  printLiteral,
  printPath,
  printPredicate,
  printQuery,
  printStage,
  printString,
  printTime,
} from './printer.js';
export { parseStructuredQuery } from './structured.js';
export {
  checkRequestedTimeout,
  mediaType,
  parseQueryRequest,
  parseRequestBody,
  TIMEOUT_KEY,
  type QueryRequest,
} from './request-body.js';
export type { TimeWindow } from './window.js';
export { aggregationStage, effectiveLimit, effectiveWindow, resolveTime, resolveTimes } from './window.js';
export { DURATION_UNIT_NS, formatDuration, formatTimestamp, parseTimestamp } from './time-text.js';
export type {
  LogqlError,
  LogqlExpr,
  LogqlLogExpr,
  LogqlMatcher,
  LogqlMetricExpr,
  LogqlRangeFn,
  LogqlStage,
} from './logql-ast.js';
export { MAX_LOGQL_CHARS, parseLogql } from './logql-parser.js';
export { lexLogql, parseLogqlDuration } from './logql-lexer.js';
export type { LokiLevel } from './logql-labels.js';
export { LOKI_LEVELS, candidateKeys, labelNameOfKey, levelOfSeverity } from './logql-labels.js';
export type { LokiGroupLabel, LokiOuterAgg, LokiPlan } from './logql-translate.js';
export { lokiGroupLabel, translateLogql } from './logql-translate.js';
export { UNSUPPORTED_LOGQL } from './logql-unsupported-examples.js';
