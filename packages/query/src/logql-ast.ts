/**
 * @module logql-ast
 * The LogQL subset Sluice answers on its Loki-compatible API (docs/grafana.md): the syntax tree the LogQL parser
 * builds, before it is translated to the query IR. Everything outside this tree is refused by the parser with
 * the construct named, never approximated.
 */

/** A stream selector matcher: `name op "value"`. */
export interface LogqlMatcher {
  readonly name: string;
  readonly op: '=' | '!=' | '=~' | '!~';
  readonly value: string;
}

/** One pipeline stage of a log query. */
export type LogqlStage =
  | { readonly kind: 'line_filter'; readonly op: '|=' | '!=' | '|~' | '!~'; readonly value: string }
  | { readonly kind: 'parser'; readonly parser: 'json' | 'logfmt' }
  | {
      readonly kind: 'label_filter';
      readonly name: string;
      readonly op: '=' | '==' | '!=' | '=~' | '!~' | '>' | '>=' | '<' | '<=';
      readonly value:
        { readonly kind: 'string'; readonly value: string } | { readonly kind: 'number'; readonly value: number };
    }
  /** `| drop __error__, __error_details__`: Sluice never sets those labels, so dropping them changes nothing. */
  | { readonly kind: 'drop_error' };

/** `{…} | stage | …`. */
export interface LogqlLogExpr {
  readonly kind: 'logs';
  readonly matchers: readonly LogqlMatcher[];
  readonly stages: readonly LogqlStage[];
}

/**
 * The range aggregations Sluice computes: record counts, and (`bytes_*`) the sum of `body_bytes`, the line's size
 * in UTF-8 bytes. The `*_rate` forms divide by the range in seconds.
 */
export type LogqlRangeFn = 'count_over_time' | 'rate' | 'bytes_over_time' | 'bytes_rate';

/** `fn(logExpr [range])`. */
export interface LogqlRangeAgg {
  readonly kind: 'range_agg';
  readonly fn: LogqlRangeFn;
  readonly log: LogqlLogExpr;
  readonly rangeNs: bigint;
}

/** `sum|count by (…) (inner)` and `topk(k, inner)`. */
export interface LogqlVectorAgg {
  readonly kind: 'vector_agg';
  readonly op: 'sum' | 'count' | 'topk';
  readonly by: readonly string[];
  /** `topk`'s k. */
  readonly k: number | null;
  readonly inner: LogqlMetricExpr;
}

/** A constant: `vector(n)`, a number, or `+ - * /` of constants (Grafana's health check is `vector(1)+vector(1)`). */
export interface LogqlConstant {
  readonly kind: 'constant';
  readonly value: number;
}

/** A metric expression. */
export type LogqlMetricExpr = LogqlRangeAgg | LogqlVectorAgg | LogqlConstant;

/** A whole LogQL query. */
export type LogqlExpr = LogqlLogExpr | LogqlMetricExpr;

/** Why a LogQL text is refused: `syntax` (malformed) or `unsupported` (valid LogQL that Sluice does not answer). */
export interface LogqlError {
  readonly kind: 'syntax' | 'unsupported';
  readonly message: string;
}
