/**
 * @module request-timeout.test
 * A request's own deadline (`timeout_ms`) in both JSON body forms: carried beside the query, refused when it is
 * not an integer ≥ 1, absent from the raw-text form.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRequestedTimeout, parseQueryRequest } from './request-body.js';

const JSON_TYPE = 'application/json';

describe('timeout_ms in a /v1/query body', () => {
  test('the {"query"} form carries timeout_ms beside the DSL text', () => {
    const r = parseQueryRequest(JSON_TYPE, '{"query": "true | count", "timeout_ms": 1500}');
    assert.ok(r.ok);
    assert.equal(r.value.timeoutMs, 1500);
    assert.equal(r.value.query.kind, 'logs');
  });

  test('the structured form carries timeout_ms at its top level', () => {
    const r = parseQueryRequest(JSON_TYPE, '{"predicate": {"const": true}, "timeout_ms": 20}');
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.value.timeoutMs, 20);
  });

  test('without timeout_ms, and in the raw-text form, no deadline is asked for', () => {
    const json = parseQueryRequest(JSON_TYPE, '{"query": "true"}');
    assert.ok(json.ok);
    assert.equal(json.value.timeoutMs, null);
    const text = parseQueryRequest('text/plain', 'true | count');
    assert.ok(text.ok);
    assert.equal(text.value.timeoutMs, null);
  });

  for (const bad of ['0', '-5', '1.5', '"100"', 'null', '[]', '9007199254740993', '2147483648']) {
    test(`timeout_ms ${bad} is refused naming the key`, () => {
      const r = parseQueryRequest(JSON_TYPE, `{"query": "true", "timeout_ms": ${bad}}`);
      assert.ok(!r.ok);
      assert.match(
        r.error.message,
        /^\$\.timeout_ms must be an integer number of milliseconds from 1 to 2147483647, got /,
      );
    });
  }

  test('a header value is checked the same way', () => {
    assert.deepEqual(checkRequestedTimeout('X-Sluice-Query-Timeout-Ms', 250), { ok: true, value: 250 });
    const r = checkRequestedTimeout('X-Sluice-Query-Timeout-Ms', 'soon');
    assert.ok(!r.ok);
    assert.match(r.error, /X-Sluice-Query-Timeout-Ms must be an integer/);
  });
});
