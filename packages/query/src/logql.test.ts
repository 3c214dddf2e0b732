/**
 * The LogQL subset: what Grafana's Loki datasource and Logs Drilldown send parses and translates to the IR we
 * expect (printed as DSL text to compare); Loki's matcher semantics (anchored regex, a missing label reads as "")
 * are kept; every real LogQL query outside the subset is refused as `unsupported` naming the construct, never
 * translated to a different question.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLogql } from './logql-parser.js';
import { translateLogql, type LokiPlan } from './logql-translate.js';
import { printPredicate } from './printer.js';
import { candidateKeys, labelNameOfKey, levelOfSeverity } from './logql-labels.js';
import { UNSUPPORTED_LOGQL } from './logql-unsupported-examples.js';

const show = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x));

function plan(text: string): LokiPlan {
  const parsed = parseLogql(text);
  assert.ok(parsed.ok, `${text}: ${show(parsed)}`);
  const translated = translateLogql(parsed.value);
  assert.ok(translated.ok, `${text}: ${show(translated)}`);
  return translated.value;
}

function predicateText(text: string): string {
  const p = plan(text);
  assert.notEqual(p.kind, 'constant');
  return printPredicate((p as Exclude<LokiPlan, { kind: 'constant' }>).predicate);
}

function refusal(text: string): { kind: string; message: string } {
  const parsed = parseLogql(text);
  if (!parsed.ok) return parsed.error;
  const translated = translateLogql(parsed.value);
  assert.ok(!translated.ok, `${text} was accepted: ${show(translated)}`);
  return translated.error;
}

describe('LogQL subset: what Grafana sends', () => {
  test("the health check's vector(1)+vector(1) is the constant 2, and constant arithmetic keeps precedence", () => {
    assert.deepEqual(plan('vector(1)+vector(1)'), { kind: 'constant', value: 2 });
    assert.deepEqual(plan('vector(1) + 2 * vector(3) - 1'), { kind: 'constant', value: 6 });
  });

  test('stream selectors map service_name to the service column and other labels to resource keys', () => {
    assert.equal(predicateText('{service_name="checkout"}'), 'service == "checkout"');
    assert.equal(
      predicateText('{deployment_environment="prod"}'),
      'resource.deployment.environment == "prod" or resource.deployment_environment == "prod"',
    );
    assert.equal(predicateText('{app="api"}'), 'resource.app == "api"');
  });

  test('selector regexes are anchored at both ends, as Loki anchors them', () => {
    assert.equal(predicateText('{app=~"api|web"}'), 'resource.app =~ "^(?:api|web)$"');
    assert.equal(predicateText('{app!~"api"}'), 'not resource.app =~ "^(?:api)$"');
  });

  test('a missing label reads as the empty string: a="" / a!="x" / a=~".*" match records without it', () => {
    assert.equal(predicateText('{app=""}'), 'not resource.app != ""');
    assert.equal(predicateText('{app!=""}'), 'resource.app != ""');
    assert.equal(predicateText('{app!="api"}'), 'not resource.app == "api"');
    assert.equal(predicateText('{app=~".*"}'), 'not resource.app !~ "^(?:.*)$"');
    assert.equal(predicateText('{service_name=~".+"}'), 'service =~ "^(?:.+)$"');
  });

  test('line filters: |= contains, != not contains, |~ / !~ unanchored RE2, |= "" matches everything', () => {
    assert.equal(
      predicateText('{app="a"} |= "timed out" != "retry" |~ "db-[0-9]" !~ "^GET"'),
      'resource.app == "a" and contains(body, "timed out") and not contains(body, "retry") and body =~ "db-[0-9]" and not body =~ "^GET"',
    );
    assert.equal(predicateText('{app="a"} |= ""'), 'resource.app == "a"');
  });

  test('level and detected_level compare the level name of the severity', () => {
    assert.equal(predicateText('{app="a"} | level="error"'), 'resource.app == "a" and severity == error');
    assert.equal(
      predicateText('{app="a"} | detected_level=~"warn|error"'),
      'resource.app == "a" and (severity == warn or severity == error)',
    );
    assert.equal(
      predicateText('{app="a"} | level="unknown"'),
      'resource.app == "a" and (severity == 0 or severity > 24)',
    );
    assert.equal(levelOfSeverity(0), 'unknown');
    assert.equal(levelOfSeverity(13), 'warn');
    assert.equal(levelOfSeverity(24), 'fatal');
  });

  test('label filters read structured metadata (log attributes) first, then stream labels; numbers compare', () => {
    assert.equal(
      predicateText('{app="a"} | http_method="POST"'),
      'resource.app == "a" and (attr.http.method == "POST" or attr.http_method == "POST" or resource.http.method == "POST" or resource.http_method == "POST")',
    );
    assert.equal(
      predicateText('{app="a"} | latency_ms > 250'),
      'resource.app == "a" and (attr.latency.ms > 250 or attr.latency_ms > 250 or resource.latency.ms > 250 or resource.latency_ms > 250)',
    );
  });

  test("Grafana's logs volume and Drilldown's queries translate to one count by severity", () => {
    const volume = plan('sum by (level, detected_level) (count_over_time({service_name="x"} | drop __error__[1m]))');
    assert.equal(volume.kind, 'metric');
    if (volume.kind !== 'metric') return;
    assert.equal(volume.fn, 'count_over_time');
    assert.equal(volume.rangeNs, 60_000_000_000n);
    assert.deepEqual(
      volume.by.map((b) => [b.label, b.level]),
      [
        ['level', true],
        ['detected_level', true],
      ],
    );
    const top = plan('topk(5, sum by (service_name) (rate({deployment_environment="prod"} |= "x" [5m])))');
    assert.equal(top.kind, 'metric');
    if (top.kind !== 'metric') return;
    assert.equal(top.fn, 'rate');
    assert.deepEqual(top.outer, [{ op: 'topk', k: 5, by: [] }]);
  });

  test('bytes_over_time and bytes_rate translate like count_over_time and rate, with sum/count/topk around them', () => {
    const bytes = plan('sum by (level) (bytes_over_time({service_name="x"} |= "err" [1m]))');
    assert.equal(bytes.kind, 'metric');
    if (bytes.kind !== 'metric') return;
    assert.equal(bytes.fn, 'bytes_over_time');
    assert.equal(bytes.rangeNs, 60_000_000_000n);
    assert.equal(printPredicate(bytes.predicate), 'service == "x" and contains(body, "err")');
    assert.deepEqual(
      bytes.by.map((b) => [b.label, b.level]),
      [['level', true]],
    );
    const rate = plan('topk(3, sum by (service_name) (bytes_rate({deployment_environment="prod"}[5m])))');
    assert.equal(rate.kind, 'metric');
    if (rate.kind !== 'metric') return;
    assert.equal(rate.fn, 'bytes_rate');
    assert.equal(rate.rangeNs, 300_000_000_000n);
    assert.deepEqual(rate.outer, [{ op: 'topk', k: 3, by: [] }]);
    const counted = plan('count(sum by (service_name) (bytes_over_time({app="a"}[5m])))');
    assert.equal(counted.kind === 'metric' && counted.fn, 'bytes_over_time');
    assert.deepEqual(counted.kind === 'metric' && counted.outer, [{ op: 'count', by: [] }]);
  });

  test('| json and | logfmt are accepted (their labels are shown, not filtered), and # comments are ignored', () => {
    const p = plan('{app="a"} | json | logfmt # a comment');
    assert.equal(p.kind, 'logs');
    if (p.kind === 'logs') assert.deepEqual(p.parsers, ['json', 'logfmt']);
  });

  test('attribute keys and label names: dots to underscores, candidates back', () => {
    assert.equal(labelNameOfKey('service.name'), 'service_name');
    assert.equal(labelNameOfKey('k8s.pod.name'), 'k8s_pod_name');
    assert.deepEqual(candidateKeys('k8s_pod_name'), ['k8s.pod.name', 'k8s_pod_name']);
    assert.deepEqual(candidateKeys('cloud_availability_zone'), [
      'cloud.availability_zone',
      'cloud.availability.zone',
      'cloud_availability_zone',
    ]);
  });
});

describe('LogQL subset: what it refuses', () => {
  for (const [query, construct] of UNSUPPORTED_LOGQL) {
    test(`refuses ${query} naming ${construct}`, () => {
      const e = refusal(query);
      assert.equal(e.kind, 'unsupported', `${query}: ${e.message}`);
      assert.ok(e.message.includes(construct), `${query}: ${e.message}`);
    });
  }

  test('malformed LogQL is a syntax error with a position, and never throws', () => {
    for (const bad of ['{app="a"', '{app="a"} |', '{app}', 'sum(', '{app="a"} |= ', '{="a"}', '', '{app="a', 'foo(']) {
      const parsed = parseLogql(bad);
      const e = parsed.ok ? translateLogql(parsed.value) : parsed;
      assert.ok(!e.ok, bad);
      assert.equal(e.error.kind, 'syntax', `${bad}: ${e.error.message}`);
    }
    assert.equal(refusal('{}').kind, 'syntax');
  });

  test('a regex RE2 refuses is a syntax error naming the pattern, not a library message', () => {
    const e = refusal('{app="a"} |~ "(a)\\\\1"');
    assert.equal(e.kind, 'syntax');
    assert.match(e.message, /invalid regular expression "\(a\)\\\\1"/);
  });
});
