/**
 * @module logql-unsupported-examples
 * Real LogQL queries (the shapes Loki's documentation and Grafana's query editors produce) that fall outside the
 * subset Sluice answers, each with the words its refusal must contain (docs/grafana.md, "Not supported"). The
 * parser's tests and the end-to-end Grafana test both check that each one is refused, never answered.
 */

/** `[query, construct named in the refusal]`. */
export const UNSUPPORTED_LOGQL: readonly (readonly [string, string])[] = [
  ['avg_over_time({app="a"} | unwrap latency [5m])', 'avg_over_time'],
  ['bytes_over_time({app="a"}[5m])', 'without sum by'],
  ['count(bytes_rate({app="a"}[5m]))', 'one series per stream'],
  ['quantile_over_time(0.99, {app="a"} | unwrap latency [5m]) by (app)', 'quantile_over_time'],
  ['max_over_time({app="a"} | logfmt | unwrap duration(took) [1m])', 'max_over_time'],
  ['{app="a"} | line_format "{{.msg}}"', 'line_format'],
  ['{app="a"} | label_format level=severity', 'label_format'],
  ['{app="a"} | pattern "<ip> - <_>"', 'pattern'],
  ['{app="a"} | regexp "(?P<ip>\\\\S+)"', 'regexp'],
  ['{app="a"} | unpack', 'unpack'],
  ['{app="a"} | decolorize', 'decolorize'],
  ['{app="a"} | keep app, level', 'keep'],
  ['{app="a"} | drop level', 'drop'],
  ['{app="a"} | json | status="500"', 'after | json'],
  ['{app="a"} | logfmt | duration > 10s', 'duration'],
  ['{app="a"} | json first="a.b"', 'parameters of the json parser'],
  ['{app="a"} | logfmt --strict', 'parameters of the logfmt parser'],
  ['{app="a"} |= "a" or "b"', 'or'],
  ['{app="a"} |= ip("10.0.0.0/8")', 'ip()'],
  ['{app="a"} | size > 10KB', 'byte sizes'],
  ['{app="a"} | status=200 or status=500', 'and/or'],
  ['{app="a"} | (status=200)', 'parenthesised'],
  ['count_over_time({app="a"}[5m])', 'without sum by'],
  ['rate({app="a"}[5m])', 'without sum by'],
  ['count(count_over_time({app="a"}[5m]))', 'one series per stream'],
  ['sum without (app) (count_over_time({app="a"}[5m]))', 'without'],
  ['avg by (app) (count_over_time({app="a"}[5m]))', 'avg'],
  ['max(sum by (app) (rate({app="a"}[5m])))', 'max'],
  ['bottomk(3, sum by (app) (rate({app="a"}[5m])))', 'bottomk'],
  ['sort_desc(sum by (app) (rate({app="a"}[5m])))', 'sort_desc'],
  ['sum(rate({app="a"}[5m] offset 1h))', 'offset'],
  ['sum(rate({app="a"}[5m:1m]))', 'subqueries'],
  ['sum(rate({app="a"}[5m])) / sum(rate({app="b"}[5m]))', 'binary operations'],
  ['sum(rate({app="a"}[5m])) > 10', 'comparison'],
  ['sum(rate({app="a"}[5m])) and sum(rate({app="b"}[5m]))', 'and'],
  ['label_replace(sum by (app) (rate({app="a"}[5m])), "x", "$1", "app", "(.*)")', 'label_replace'],
  ['absent_over_time({app="a"}[5m])', 'absent_over_time'],
  ['sum by (app, host) (count_over_time({app="a"}[5m]))', 'more than one label'],
  ['sum by (app) (sum by (host) (count_over_time({app="a"}[5m])))', 'grouping by app'],
];
