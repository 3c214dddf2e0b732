import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQuery } from './parse-query.js';
import { pinnedTemplateId } from './validate.js';
import type { LogQuery } from './ir.js';

const accepts = (t: string): void => {
  const r = parseQuery(t);
  assert.ok(r.ok, r.ok ? '' : `${t}: ${r.error.message}`);
};
const rejects = (t: string, re: RegExp): void => {
  const r = parseQuery(t);
  assert.equal(r.ok, false, t);
  if (!r.ok) assert.match(r.error.message, re);
};

describe('param(n) single-template pin rule', () => {
  test('a top-level template_id == N pins', () => {
    accepts('template_id == 7 | count by param(0)');
    accepts('severity >= warn and template_id == 7 | count by param(1), bucket(1h)');
    accepts('(template_id == 7 and service == "a") and true | count by param(0)');
  });
  test('no pin, or, not, resolves_to and != do not pin', () => {
    rejects('true | count by param(0)', /param\(0\) needs the predicate to pin exactly one template/);
    rejects('template_id == 7 or template_id == 8 | count by param(0)', /pin exactly one/);
    rejects('not (template_id == 7) | count by param(0)', /pin exactly one/);
    rejects('resolves_to(7) | count by param(0)', /pin exactly one/);
    rejects('template_id != 7 | count by param(0)', /pin exactly one/);
  });
  test('two different pins are not exactly one', () => {
    rejects('template_id == 7 and template_id == 8 | count by param(0)', /pin exactly one/);
    const same = parseQuery('template_id == 7 and template_id == 7 | count by param(0)');
    assert.ok(same.ok, 'repeating the same pin still pins exactly one template');
    if (same.ok) assert.equal(pinnedTemplateId((same.value as LogQuery).predicate), 7n);
  });
  test('the error cites the param term position', () => {
    const r = parseQuery('true | count by service, param(0)');
    assert.ok(!r.ok);
    if (!r.ok) assert.deepStrictEqual([r.error.start, r.error.end], [25, 33]);
  });
  test('each param slot at most once per by-list', () => {
    rejects('template_id == 1 | count by param(0), param(0)', /appears more than once/);
  });
});

describe('aggregations', () => {
  test('an aggregation with a limit stage is rejected (400)', () => {
    rejects('true | count | limit 5', /limit cannot be combined with an aggregation/);
    rejects('true | limit 5 | sum(attr.x)', /limit cannot be combined/);
  });
  test('at most one aggregation stage', () => {
    rejects('true | count | count by service', /at most one aggregation/);
  });
  test('sum/min/max/avg need an attribute path', () => {
    rejects('true | sum(confidence)', /needs a promoted attr\. or resource\. path/);
    accepts('true | avg(resource.cpu) by service');
  });
  test('bucket width > 0 and at most one bucket', () => {
    rejects('true | count by bucket(0s)', /greater than 0/);
    rejects('true | count by bucket(1m), bucket(1h)', /at most one bucket/);
  });
});

describe('stages Sluice executes or rejects', () => {
  test('sort and project are accepted (the original language rejects them)', () => {
    accepts('true | sort ts desc | project body, severity, attr.user | limit 10');
    accepts('true | count by service | sort count desc');
  });
  test('sort keys must be fields or the aggregate output', () => {
    rejects('true | sort count', /cannot sort by 'count'/);
    rejects('true | sort nonsense', /cannot sort by/);
    accepts('true | avg(attr.ms) | sort value');
  });
  test('project with an aggregation is rejected', () => {
    rejects('true | count | project body', /project cannot be combined/);
  });
  test('render is rejected, as in the original language', () => {
    rejects('true | render', /the render stage is not yet supported by the querier/);
  });
  test('multiple limits and ranges are accepted (last wins)', () => {
    accepts('true | limit 5 | limit 100000 | range(-1h, now) | range(-2h, now)');
  });
});

describe('field typing', () => {
  test('type mismatches are rejected', () => {
    rejects('service == 1', /service compares with a string/);
    rejects('flags == 4294967296', /flags compares with an integer/);
    rejects('lossy == 1', /lossy compares with true or false/);
    rejects('trace_id == "abc"', /hex string of 32 digits/);
    rejects('span_id == "00f067aa0ba902b7" or ts == "x"', /ts compares with an RFC 3339 timestamp/);
    rejects('confidence =~ "x"', /regex match/);
    rejects('body == null', /cannot be compared with null/);
    rejects('body =~ "("', /invalid regular expression/);
    rejects('matches(body, "[")', /invalid regular expression/);
  });
  test('well-typed comparisons are accepted', () => {
    accepts(
      'span_id == "00F067AA0BA902B7" and flags == 1 and confidence >= 1 and lossy != false and scope =~ "^io\\\\."',
    );
  });
});

describe('body_bytes: a derived field only sum/min/max/avg take', () => {
  test('sum, min, max and avg of body_bytes are accepted, with any by-list', () => {
    accepts('true | sum(body_bytes)');
    accepts('severity >= warn | sum(body_bytes) by severity, bucket(1m)');
    for (const fn of ['min', 'max', 'avg']) accepts(`true | ${fn}(body_bytes) by service`);
  });
  test('anywhere else it is refused with a message saying it can only be aggregated', () => {
    const only = /body_bytes \(the body's size in UTF-8 bytes\) can only be aggregated/;
    rejects('body_bytes > 100', only);
    rejects('body_bytes == "x"', only);
    rejects('body_bytes =~ "x"', only);
    rejects('contains(body_bytes, "x")', only);
    rejects('true | count by body_bytes', only);
    rejects('true | sum(attr.n) by body_bytes', only);
    rejects('true | project ts, body_bytes', only);
    rejects('true | sort body_bytes desc', only);
    rejects('true | sum(body_bytes) | sort body_bytes', only);
  });
  test('other built-in fields are still refused as aggregation arguments', () => {
    rejects('true | sum(body)', /needs a promoted attr\. or resource\. path or body_bytes, not the field body/);
  });
});
