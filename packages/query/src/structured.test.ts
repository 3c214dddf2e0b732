import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from './parse-query.js';
import { parseStructuredQuery } from './structured.js';
import { parseRequestBody } from './request-body.js';
import { parseJsonExact } from '@sluice/core';
import type { Query } from './ir.js';

const text = (t: string): Query => {
  const r = parseQuery(t);
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
};
const structured = (j: string): Query => {
  const v = parseJsonExact(j);
  if (!v.ok) assert.fail(v.error.message);
  const r = parseStructuredQuery(v.value);
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
};

/** The documented examples with a structured equivalent (all of them have one). */
const PAIRS: readonly [string, string][] = [
  ['severity >= error', '{"predicate":{"field":"severity","op":">=","value":"error"}}'],
  [
    'service == "checkout" and severity >= warn | range(-15m, now) | limit 50',
    '{"predicate":{"and":[{"field":"service","op":"==","value":"checkout"},{"field":"severity","op":">=","value":"warn"}]},"stages":[{"range":{"from":"-15m","to":"now"}},{"limit":50}]}',
  ],
  [
    'trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"',
    '{"predicate":{"field":"trace_id","op":"==","value":"4bf92f3577b34da6a3ce929d0e0e4736"}}',
  ],
  [
    'template_id == 42 | range(2026-06-01T00:00:00Z, 2026-06-02T00:00:00Z)',
    '{"predicate":{"field":"template_id","op":"==","value":42},"stages":[{"range":{"from":"2026-06-01T00:00:00Z","to":"2026-06-02T00:00:00Z"}}]}',
  ],
  [
    'resolves_to(42) | range(-7d, now) | count',
    '{"predicate":{"call":"resolves_to","args":[42]},"stages":[{"range":{"from":"-7d","to":"now"}},{"count":{}}]}',
  ],
  [
    'true | range(-1h, now) | count by template_id',
    '{"predicate":{"const":true},"stages":[{"range":{"from":"-1h","to":"now"}},{"count":{"by":["template_id"]}}]}',
  ],
  [
    'service == "api" | count by severity, bucket(5m)',
    '{"predicate":{"field":"service","op":"==","value":"api"},"stages":[{"count":{"by":["severity",{"bucket":"5m"}]}}]}',
  ],
  [
    'template_id == 7 | range(-1d, now) | count by param(0), bucket(1h)',
    '{"predicate":{"field":"template_id","op":"==","value":7},"stages":[{"range":{"from":"-1d","to":"now"}},{"count":{"by":[{"param":0},{"bucket":"1h"}]}}]}',
  ],
  [
    'attr["http.route"] == "/cart" and not (resource.k8s.namespace.name == "dev")',
    '{"predicate":{"and":[{"field":{"attr":"http.route"},"op":"==","value":"/cart"},{"not":{"field":{"resource":"k8s.namespace.name"},"op":"==","value":"dev"}}]}}',
  ],
  [
    'sum(attr.cost_usd) by attr.model',
    '{"predicate":{"const":true},"stages":[{"sum":{"attr":"cost_usd"},"by":[{"attr":"model"}]}]}',
  ],
  [
    'lossy == true or confidence < 0.8 | limit 20',
    '{"predicate":{"or":[{"field":"lossy","op":"==","value":true},{"field":"confidence","op":"<","value":0.8}]},"stages":[{"limit":20}]}',
  ],
  [
    'event_name == "claude_code.api_request" | count by service',
    '{"predicate":{"field":"event_name","op":"==","value":"claude_code.api_request"},"stages":[{"count":{"by":["service"]}}]}',
  ],
  [
    'contains(body, "timeout") | range(-1h, now)',
    '{"predicate":{"call":"contains","args":["body","timeout"]},"stages":[{"range":{"from":"-1h","to":"now"}}]}',
  ],
  ['drift from -7d to now', '{"drift":{"from":"-7d","to":"now"}}'],
  [
    'sum(body_bytes) by severity, bucket(1m)',
    '{"predicate":{"const":true},"stages":[{"sum":"body_bytes","by":["severity",{"bucket":"1m"}]}]}',
  ],
];

describe('structured JSON equals text for every section 2.4 example', () => {
  for (const [t, j] of PAIRS) {
    test(t, () => assert.deepStrictEqual(structured(j), text(t)));
  }
  test('the section 2.5 example equals its text form', () => {
    assert.deepStrictEqual(
      structured(
        '{"predicate":{"and":[{"field":"service","op":"==","value":"api"},{"field":"severity","op":">=","value":"error"}]},"stages":[{"range":{"from":"-1h","to":"now"}},{"count":{"by":["template_id"]}}]}',
      ),
      text('service == "api" and severity >= error | range(-1h, now) | count by template_id'),
    );
  });
});

describe('structured surface details', () => {
  test('sort, project and render stages', () => {
    assert.deepStrictEqual(
      structured(
        '{"predicate":{"const":true},"stages":[{"sort":{"key":"ts","desc":true}},{"project":["body",{"attr":"u"}]}]}',
      ),
      text('true | sort ts desc | project body, attr.u'),
    );
    const r = parseStructuredQuery({ predicate: { const: true }, stages: [{ render: null }] });
    assert.ok(!r.ok && /render stage is not yet supported/.test(r.error.message));
  });
  test('one-item and collapses to its item', () => {
    assert.deepStrictEqual(structured('{"predicate":{"and":[{"const":false}]}}'), text('false'));
  });
  test('u64 template ids above 2^53 stay exact through JSON', () => {
    assert.deepStrictEqual(
      structured('{"predicate":{"field":"template_id","op":"==","value":18446744073709551615}}'),
      text('template_id == 18446744073709551615'),
    );
  });
  test('errors name the JSON path', () => {
    const cases: [unknown, RegExp][] = [
      [{ predicate: { const: true }, extra: 1 }, /^\$: unknown key "extra"/],
      [{ predicate: { field: 'nope', op: '==', value: 1 } }, /^\$\.predicate\.field: unknown field "nope"/],
      [{ predicate: { field: 'severity', op: '=~', value: 'x' } }, /ordering operator/],
      [{ predicate: { and: [] } }, /non-empty array/],
      [
        { predicate: { const: true }, stages: [{ count: { by: [{ bucket: '5x' }] } }] },
        /^\$\.stages\[0\]\.count\.by\[0\]\.bucket/,
      ],
      [{ drift: { from: 'now-1h', to: 'now' } }, /^\$\.drift\.from/],
      [{ predicate: { const: true }, stages: [{ limit: -1 }] }, /^\$\.stages\[0\]\.limit: expected an integer/],
      ['just a string', /^\$: expected an object/],
    ];
    for (const [v, re] of cases) {
      const r = parseStructuredQuery(v);
      assert.ok(!r.ok, JSON.stringify(v));
      if (!r.ok) assert.match(r.error.message, re);
    }
  });
  test('body_bytes outside sum/min/max/avg is refused in the structured form as in text', () => {
    const only = /body_bytes \(the body's size in UTF-8 bytes\) can only be aggregated/;
    for (const v of [
      { predicate: { field: 'body_bytes', op: '>', value: 10 } },
      { predicate: { const: true }, stages: [{ count: { by: ['body_bytes'] } }] },
      { predicate: { const: true }, stages: [{ project: ['body_bytes'] }] },
    ]) {
      const r = parseStructuredQuery(v);
      assert.ok(!r.ok, JSON.stringify(v));
      if (!r.ok) assert.match(r.error.message, only);
    }
  });
  test('structured nesting deeper than 64 is rejected', () => {
    let p: unknown = { const: true };
    for (let i = 0; i < 100; i++) p = { not: p };
    const r = parseStructuredQuery({ predicate: p });
    assert.ok(!r.ok && /nesting deeper than 64/.test(r.error.message));
  });
});

describe('request body modes', () => {
  const dsl = 'service == "api" | count by service';
  test('{"query": "..."} exactly is DSL text', () => {
    assert.deepStrictEqual(parseRequestBody('application/json', JSON.stringify({ query: dsl })), parseQuery(dsl));
  });
  test('content type parameters and case are ignored', () => {
    assert.deepStrictEqual(
      parseRequestBody('Application/JSON; charset=utf-8', JSON.stringify({ query: dsl })),
      parseQuery(dsl),
    );
  });
  test('other JSON is the structured form', () => {
    const r = parseRequestBody('application/json', '{"predicate":{"const":true}}');
    assert.ok(r.ok);
  });
  test('an object with a "query" key must be exactly {"query": "<dsl>"}: other keys or a non-string are named', () => {
    const extra = parseRequestBody('application/json', JSON.stringify({ query: dsl, limit: 5 }));
    assert.ok(!extra.ok);
    assert.equal(
      extra.error.message,
      '$: {"query": "<dsl>"} takes no other keys but "timeout_ms", got "limit"; put stages such as limit in the DSL text',
    );
    const list = parseRequestBody('application/json', JSON.stringify({ query: ['true'] }));
    assert.ok(!list.ok);
    assert.equal(list.error.message, '$.query: "query" must be a string (a DSL statement), got a list');
    const num = parseRequestBody('application/json', '{"query": 12345678901234567890}');
    assert.ok(!num.ok && /got an integer$/.test(num.error.message));
  });
  test('other or missing content types mean raw DSL text', () => {
    assert.deepStrictEqual(parseRequestBody('text/plain', dsl), parseQuery(dsl));
    assert.deepStrictEqual(parseRequestBody(undefined, dsl), parseQuery(dsl));
  });
  test('invalid JSON is an invalid_query with a position', () => {
    const r = parseRequestBody('application/json', '{"query": ');
    assert.ok(!r.ok);
    if (!r.ok) {
      assert.equal(r.error.kind, 'invalid_query');
      assert.match(r.error.message, /not valid JSON: unexpected end of JSON at 10/);
    }
    const dup = parseRequestBody('application/json', '{"query":"true","query":"false"}');
    assert.ok(!dup.ok && /duplicate JSON key/.test(dup.error.message));
  });
});
